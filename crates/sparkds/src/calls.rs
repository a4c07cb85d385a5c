//! Calling a library's functions, for every protocol: a required function of the table, the
//! schema of a source, Arrow schemas lent to a call, the sinks that collect byte arrays, column
//! pruning, and the tasks that call `read` on their own threads. The protocols (batch and stream
//! reads, writes and the step-by-step API) share these.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{Schema, SchemaRef};

use crate::error::{Error, Result, Violation};
use crate::filters;
use crate::import::{self, Expectations};
use crate::library::{Library, Source};
use crate::sink::Sink;
use crate::task::Task;
use spark_datasource_abi::arrow::{ArrowArrayStream, ArrowSchema};
use spark_datasource_abi::filters::PushFilters;
use spark_datasource_abi::v1;

pub(crate) fn required<T>(f: Option<T>, name: &'static str) -> Result<T> {
    // Unreachable after the capability check of `create` (rule 4), kept as an error rather
    // than a panic.
    f.ok_or_else(|| {
        Violation::new(
            name,
            4,
            "is NULL but its capability is declared; set it, or do not declare the capability",
        )
        .into()
    })
}

/// The schema to use: the user's, else the source's `schema`.
pub(crate) fn source_schema(
    library: &Library,
    source: &Source<'_>,
    user: Option<SchemaRef>,
) -> Result<SchemaRef> {
    if let Some(schema) = user {
        return Ok(schema);
    }
    let Some(schema_fn) = library.table().schema else {
        return Err(Error::usage(
            "the source has no `schema` function, so the read needs a schema: pass one (`.schema(...)` in Rust, `--schema \"id bigint, name string\"` on the command line)",
        ));
    };
    let mut raw = ArrowSchema::empty();
    library.call("schema", None, || {
        // SAFETY: the source is open and `raw` is valid for writes.
        unsafe { schema_fn(source.handle.ptr(), raw.as_ffi()) }
    })?;
    let schema =
        import::import_schema(&mut raw).map_err(|(rule, m)| Violation::new("schema", rule, m))?;
    Ok(Arc::new(schema))
}

/// Exports a schema that the host keeps (borrowed by the callee).
pub(crate) fn export_schema(schema: &Schema) -> Result<Box<FFI_ArrowSchema>> {
    FFI_ArrowSchema::try_from(schema)
        .map(Box::new)
        .map_err(|e| Error::usage(format!("cannot export the schema: {e}")))
}

/// Rule 11: a schema lent to the library is still the host's after the call.
pub(crate) fn still_borrowed(
    schema: &FFI_ArrowSchema,
    function: &'static str,
    context: Option<&str>,
) -> Result<()> {
    if schema.release().is_none() {
        return Err(Violation::new(
            function,
            11,
            "released the schema it was lent; a borrowed schema is only read, its owner releases it",
        )
        .within(context)
        .into());
    }
    Ok(())
}

pub(crate) fn schema_ptr(schema: &FFI_ArrowSchema) -> *mut FFI_ArrowSchema {
    // The callee only borrows it (the header's ownership rule for these parameters).
    std::ptr::from_ref(schema).cast_mut()
}

/// Calls `function` with an open sink and returns what it passed.
pub(crate) fn sink_call(
    library: &Library,
    function: &'static str,
    context: Option<&str>,
    f: impl FnOnce(v1::SparkDsSink, *mut c_void) -> c_int,
) -> Result<Vec<Vec<u8>>> {
    let sink = Sink::open(function, library.id());
    library.call(function, context, || f(sink.callback(), sink.context()))?;
    Ok(sink.finish().map_err(|v| v.within(context))?)
}

/// Calls `function` with an open sink and expects one byte array.
pub(crate) fn sink_call_one(
    library: &Library,
    function: &'static str,
    context: Option<&str>,
    f: impl FnOnce(v1::SparkDsSink, *mut c_void) -> c_int,
) -> Result<Vec<u8>> {
    let sink = Sink::open(function, library.id());
    library.call(function, context, || f(sink.callback(), sink.context()))?;
    Ok(sink.finish_one().map_err(|v| v.within(context))?)
}

/// The schema of `columns` (names of `schema`, in the order asked), and their indices.
///
/// # Errors
///
/// A column that `schema` does not have: the message lists those it has.
pub(crate) fn prune(schema: &Schema, columns: &[String]) -> Result<(SchemaRef, Vec<usize>)> {
    let mut indices = Vec::new();
    for column in columns {
        let index = schema.index_of(column).map_err(|_| {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            Error::usage(format!(
                "column `{column}` is not in the schema ({}); ask for some of those columns",
                names.join(", ")
            ))
        })?;
        indices.push(index);
    }
    let schema = schema
        .project(&indices)
        .map_err(|e| Error::usage(format!("cannot prune the schema: {e}")))?;
    Ok((Arc::new(schema), indices))
}

/// The executor side of a read: one task per partition.
pub(crate) struct ReadTasks<'a> {
    pub stage: i32,
    /// A prefix of the context of each task, such as "micro-batch 2, ".
    pub context: &'a str,
    pub state: Option<&'a [u8]>,
    pub partitions: &'a [Vec<u8>],
    pub schema: &'a SchemaRef,
    pub limit: Option<i64>,
    /// The filters that `push_filters` accepted: every row read must satisfy them (rule 31).
    pub accepted: &'a [spark_datasource_core::filters::Filter],
    pub kill: Option<(usize, usize)>,
    /// The partition whose stream the host releases after that many batches.
    pub stop: Option<(usize, usize)>,
}

/// Runs one task per partition, each on its own thread with its own task context, and returns
/// the batches of each partition in order (or the first error, in partition order).
pub(crate) fn run_read_tasks(
    library: &Library,
    tasks: ReadTasks<'_>,
) -> Result<Vec<Vec<RecordBatch>>> {
    let mut results = Vec::with_capacity(tasks.partitions.len());
    // A few tasks at a time, like the cores of an executor.
    for (chunk_index, chunk) in tasks.partitions.chunks(4).enumerate() {
        let chunk_results: Vec<Result<Vec<RecordBatch>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = chunk
                .iter()
                .enumerate()
                .map(|(i, partition)| {
                    let index = chunk_index * 4 + i;
                    // Each task gets its own copy of the bytes, as an executor would.
                    let partition = partition.clone();
                    let state = tasks.state.map(<[u8]>::to_vec);
                    let tasks = &tasks;
                    scope.spawn(move || {
                        read_one(library, tasks, index, &partition, state.as_deref())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::usage("a read task of the host panicked; this is a bug of sparkds, please report it"))
                    })
                })
                .collect()
        });
        for result in chunk_results {
            results.push(result?);
        }
    }
    Ok(results)
}

/// Calls `read` for one partition: the stream it returns, which reads from `task`.
///
/// # Errors
///
/// When `read` fails or breaks a rule of its call.
pub(crate) fn call_read(
    library: &Library,
    task: &Task,
    state: Option<&[u8]>,
    partition: &[u8],
    context: &str,
) -> Result<Box<ArrowArrayStream>> {
    let read = required(library.table().read, "read")?;
    let mut stream = Box::new(ArrowArrayStream::empty());
    let (state_ptr, state_len) = match state {
        Some(s) => (s.as_ptr(), s.len() as i64),
        None => (std::ptr::null(), 0),
    };
    library.call("read", Some(context), || {
        // SAFETY: the caller keeps `task` alive until the stream is released; the byte arrays
        // are borrowed for the call; `stream` is valid for writes.
        unsafe {
            read(
                task.as_ptr(),
                state_ptr,
                state_len,
                partition.as_ptr(),
                partition.len() as i64,
                stream.as_ffi(),
            )
        }
    })?;
    Ok(stream)
}

fn read_one(
    library: &Library,
    tasks: &ReadTasks<'_>,
    index: usize,
    partition: &[u8],
    state: Option<&[u8]>,
) -> Result<Vec<RecordBatch>> {
    let context = format!("{}partition {index}", tasks.context);
    let task = Task::new(tasks.stage, index);
    let stream = call_read(library, &task, state, partition, &context)?;
    let kill = tasks.kill.filter(|(p, _)| *p == index).map(|(_, n)| n);
    let batches = import::read_stream(
        stream,
        &Expectations {
            context: context.clone(),
            schema: tasks.schema,
            limit: tasks.limit,
            interrupt_after: kill,
            stop_after: tasks.stop.filter(|(p, _)| *p == index).map(|(_, n)| n),
            task: &task,
        },
    )?;
    if !tasks.accepted.is_empty() {
        for (index, batch) in batches.iter().enumerate() {
            filters::check_batch(tasks.accepted, batch, index)
                .map_err(|(rule, m)| Violation::new("read", rule, m).within(Some(&context)))?;
        }
    }
    Ok(batches)
}

/// Calls `push_filters` of `reader` with `encoded`, a message of `count` predicates, and checks
/// the answer (rule 30): the sink called exactly once, with `count` bytes, each 0 or 1.
///
/// # Safety
///
/// `reader` is an open reader of `library` (a handle of `create_reader`).
pub(crate) unsafe fn push_filters(
    library: &Library,
    function: PushFilters,
    reader: *mut c_void,
    encoded: &[u8],
    count: usize,
) -> Result<Vec<bool>> {
    const FUNCTION: &str = "push_filters";
    let answers = sink_call(library, FUNCTION, None, |add, sink| {
        // SAFETY: the reader is open (the caller's duty); `encoded` is borrowed for the call;
        // the sink is open for the call.
        unsafe { function(reader, encoded.as_ptr(), encoded.len() as i64, add, sink) }
    })?;
    let [answer] = answers.as_slice() else {
        return Err(Violation::new(
            FUNCTION,
            filters::RULE_ANSWER,
            format!(
                "called its sink {} times; it must call it exactly once, with one byte per filter",
                answers.len()
            ),
        )
        .into());
    };
    if answer.len() != count {
        return Err(Violation::new(
            FUNCTION,
            filters::RULE_ANSWER,
            format!(
                "answered {} for {}; answer one byte per filter, in the order of the message",
                crate::error::count(answer.len() as i128, "byte"),
                crate::error::count(count as i128, "filter"),
            ),
        )
        .into());
    }
    if let Some((i, byte)) = answer.iter().enumerate().find(|(_, b)| **b > 1) {
        return Err(Violation::new(
            FUNCTION,
            filters::RULE_ANSWER,
            format!("answered {byte} for filter {i}; answer 1 (accepted) or 0 (not accepted)"),
        )
        .into());
    }
    Ok(answer.iter().map(|b| *b == 1).collect())
}
