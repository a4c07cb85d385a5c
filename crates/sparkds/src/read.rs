//! The batch read protocol (`SPARK_DS_BATCH_READ`): on the driver `create`, `schema`,
//! `create_reader`, `prune_columns`, `push_limit`, `partitions`, `serialize_reader` and the
//! closes; then one executor task per partition, on its own thread, that calls `read` with
//! copies of the bytes only.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{Schema, SchemaRef};

use crate::error::{Error, Result, Violation};
use crate::header::{self, ArrowArrayStream, ArrowSchema};
use crate::import::{self, Expectations};
use crate::library::{Capabilities, HandleKind, Library, Source};
use crate::sink::Sink;
use crate::task::Task;

/// A batch read, as `spark.read.format(...).options(...).load()` runs it. Built by
/// [`Library::batch_read`].
///
/// ```no_run
/// # fn main() -> Result<(), sparkds::Error> {
/// let library = sparkds::Library::load(sparkds::cdylib("spark_datasource_my_source")?)?;
/// let read = library.batch_read().option("end", "10").columns(["id"]).limit(3).run()?;
/// assert_eq!(read.num_rows(), 6);
/// # Ok(()) }
/// ```
#[must_use = "a read does nothing until `run`"]
pub struct BatchRead<'l> {
    library: &'l Library,
    options: Vec<(String, String)>,
    schema: Option<SchemaRef>,
    columns: Option<Vec<String>>,
    limit: Option<i64>,
    kill: Option<(usize, usize)>,
}

/// What a batch read returned.
#[derive(Debug, Clone)]
pub struct BatchReadOutcome {
    /// The capabilities that `create` declared.
    pub capabilities: Capabilities,
    /// The schema of the rows read: the pruned schema when columns were given.
    pub schema: SchemaRef,
    /// The partitions, in order, with their bytes and batches.
    pub partitions: Vec<PartitionRead>,
    /// What `serialize_reader` returned, when the library has it.
    pub reader_state: Option<Vec<u8>>,
    /// Whether `push_limit` accepted the limit: `None` without a limit or without `push_limit`.
    pub limit_accepted: Option<bool>,
    /// Whether `prune_columns` pruned (else the host projected the columns, as Spark does).
    pub pruned: bool,
}

/// One partition of a read: the bytes that `partitions` returned and the batches that `read`
/// returned for them.
#[derive(Debug, Clone)]
pub struct PartitionRead {
    pub bytes: Vec<u8>,
    pub batches: Vec<RecordBatch>,
}

impl BatchReadOutcome {
    /// Every batch, partition after partition.
    pub fn batches(&self) -> Vec<RecordBatch> {
        self.partitions
            .iter()
            .flat_map(|p| p.batches.iter().cloned())
            .collect()
    }

    /// The number of rows of every partition.
    pub fn num_rows(&self) -> usize {
        self.partitions
            .iter()
            .flat_map(|p| &p.batches)
            .map(RecordBatch::num_rows)
            .sum()
    }

    /// The bytes of each partition.
    pub fn partition_bytes(&self) -> Vec<Vec<u8>> {
        self.partitions.iter().map(|p| p.bytes.clone()).collect()
    }
}

impl Library {
    /// Starts a batch read of this library.
    pub fn batch_read(&self) -> BatchRead<'_> {
        BatchRead {
            library: self,
            options: Vec::new(),
            schema: None,
            columns: None,
            limit: None,
            kill: None,
        }
    }
}

impl<'l> BatchRead<'l> {
    /// Adds an option, `.option(key, value)` in Spark.
    pub fn option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Adds options.
    pub fn options<K: Into<String>, V: Into<String>>(
        mut self,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.options
            .extend(options.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Reads with a schema given by the user, `.schema(...)` in Spark, instead of the source's.
    pub fn schema(mut self, schema: SchemaRef) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Asks for these columns only, in this order: `prune_columns`, as a projection does.
    pub fn columns<S: Into<String>>(mut self, columns: impl IntoIterator<Item = S>) -> Self {
        self.columns = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Offers a limit: `push_limit`, as `.limit(n)` does.
    pub fn limit(mut self, limit: i64) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Kills the task of `partition` after it returned `batches` batches (`is_interrupted`
    /// then returns true): the stream must stop within one batch (rule 23).
    pub fn kill_task(mut self, partition: usize, batches: usize) -> Self {
        self.kill = Some((partition, batches));
        self
    }

    /// Runs the read.
    ///
    /// # Errors
    ///
    /// A failure of the library (with its message), a violation of a rule, or a usage error
    /// (an unknown column, no schema at all).
    pub fn run(self) -> Result<BatchReadOutcome> {
        let library = self.library;
        let table = library.table();
        let source = library.create(&self.options)?;
        if !source.capabilities.batch_read() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_BATCH_READ",
                operation: "a batch read",
            });
        }
        let schema = source_schema(library, &source, self.schema.clone())?;
        let ffi_schema = export_schema(&schema)?;
        let create_reader = required(table.create_reader, "create_reader")?;
        let reader = library.open("create_reader", None, HandleKind::Reader, |reader| {
            // SAFETY: the source is open, the schema is borrowed for the call, `reader` is
            // valid for writes.
            unsafe { create_reader(source.handle.ptr(), schema_ptr(&ffi_schema), reader) }
        })?;
        still_borrowed(&ffi_schema, "create_reader", None)?;

        let mut read_schema = schema.clone();
        let mut pruned = false;
        let mut projection = None;
        if let Some(columns) = &self.columns {
            let (pruned_schema, indices) = prune(&schema, columns)?;
            if let Some(prune_columns) = table.prune_columns {
                let required = export_schema(&pruned_schema)?;
                library.call("prune_columns", None, || {
                    // SAFETY: the reader is open and the schema is borrowed for the call.
                    unsafe { prune_columns(reader.ptr(), schema_ptr(&required)) }
                })?;
                still_borrowed(&required, "prune_columns", None)?;
                read_schema = pruned_schema;
                pruned = true;
            } else {
                projection = Some((pruned_schema, indices));
            }
        }
        let mut limit_accepted = None;
        if let (Some(limit), Some(push_limit)) = (self.limit, table.push_limit) {
            let mut accepted: c_int = 0;
            library.call("push_limit", None, || {
                // SAFETY: the reader is open and `accepted` is valid for writes.
                unsafe { push_limit(reader.ptr(), limit, &mut accepted) }
            })?;
            limit_accepted = Some(accepted != 0);
        }
        let partitions_fn = required(table.partitions, "partitions")?;
        let partitions = sink_call(library, "partitions", None, |add, sink| {
            // SAFETY: the reader is open; the sink is open for the call.
            unsafe { partitions_fn(reader.ptr(), add, sink) }
        })?;
        let reader_state = match table.serialize_reader {
            Some(serialize) => Some(sink_call_one(
                library,
                "serialize_reader",
                None,
                |add, sink| {
                    // SAFETY: the reader is open; the sink is open for the call.
                    unsafe { serialize(reader.ptr(), add, sink) }
                },
            )?),
            None => None,
        };
        let capabilities = source.capabilities;
        // The executors only get bytes: close the driver's handles first, as Spark may.
        drop(reader);
        drop(source);

        let accepted_limit = match limit_accepted {
            Some(true) => self.limit,
            _ => None,
        };
        let results = run_read_tasks(
            library,
            ReadTasks {
                stage: 0,
                context: "",
                state: reader_state.as_deref(),
                partitions: &partitions,
                schema: &read_schema,
                limit: accepted_limit,
                kill: self.kill,
            },
        )?;
        let mut outcome = BatchReadOutcome {
            capabilities,
            schema: read_schema,
            partitions: partitions
                .into_iter()
                .zip(results)
                .map(|(bytes, batches)| PartitionRead { bytes, batches })
                .collect(),
            reader_state,
            limit_accepted,
            pruned,
        };
        if let Some((schema, indices)) = projection {
            for partition in &mut outcome.partitions {
                partition.batches = partition
                    .batches
                    .iter()
                    .map(|b| b.project(&indices))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| Error::usage(format!("cannot project the columns: {e}")))?;
            }
            outcome.schema = schema;
        }
        Ok(outcome)
    }
}

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
        unsafe { schema_fn(source.handle.ptr(), &mut raw) }
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
    // SAFETY: the layouts are identical; the view only reads `release`.
    let raw = unsafe { &*(schema as *const FFI_ArrowSchema as *const ArrowSchema) };
    if raw.release.is_none() {
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

pub(crate) fn schema_ptr(schema: &FFI_ArrowSchema) -> *mut ArrowSchema {
    // The callee only borrows it (the header's ownership rule for these parameters).
    schema as *const FFI_ArrowSchema as *mut ArrowSchema
}

/// Calls `function` with an open sink and returns what it passed.
pub(crate) fn sink_call(
    library: &Library,
    function: &'static str,
    context: Option<&str>,
    f: impl FnOnce(header::Sink, *mut c_void) -> c_int,
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
    f: impl FnOnce(header::Sink, *mut c_void) -> c_int,
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
    pub kill: Option<(usize, usize)>,
}

/// Runs one task per partition, each on its own thread with its own task context, and returns
/// the batches of each partition in order (or the first error, in partition order).
pub(crate) fn run_read_tasks(
    library: &Library,
    tasks: ReadTasks<'_>,
) -> Result<Vec<Vec<RecordBatch>>> {
    let read = required(library.table().read, "read")?;
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
                        read_one(library, read, tasks, index, &partition, state.as_deref())
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

pub(crate) type ReadFn = unsafe extern "C" fn(
    *const header::SparkDsTaskContext,
    *const u8,
    i64,
    *const u8,
    i64,
    *mut ArrowArrayStream,
) -> c_int;

/// Calls `read` for one partition: the stream it returns, which reads from `task`.
///
/// # Errors
///
/// When `read` fails or breaks a rule of its call.
pub(crate) fn call_read(
    library: &Library,
    read: ReadFn,
    task: &Task,
    state: Option<&[u8]>,
    partition: &[u8],
    context: &str,
) -> Result<Box<ArrowArrayStream>> {
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
                &mut *stream,
            )
        }
    })?;
    Ok(stream)
}

fn read_one(
    library: &Library,
    read: ReadFn,
    tasks: &ReadTasks<'_>,
    index: usize,
    partition: &[u8],
    state: Option<&[u8]>,
) -> Result<Vec<RecordBatch>> {
    let context = format!("{}partition {index}", tasks.context);
    let task = Task::new(tasks.stage, index);
    let stream = call_read(library, read, &task, state, partition, &context)?;
    let kill = tasks.kill.filter(|(p, _)| *p == index).map(|(_, n)| n);
    import::read_stream(
        stream,
        &Expectations {
            context: context.clone(),
            schema: tasks.schema,
            limit: tasks.limit,
            interrupt_after: kill,
            task: &task,
        },
    )
}
