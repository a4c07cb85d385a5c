//! The executor's steps: the stream of a partition, whose batches are read in place, and the
//! data writer of a task.

use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::{make_array, Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_data::ArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{DataType, SchemaRef};
use spark_datasource_core::filters::Filter;

use super::Checks;
use crate::calls::{call_read, export_schema, required, schema_ptr, sink_call_one, still_borrowed};
use crate::error::{count, Error, Result, Violation};
use crate::import;
use crate::library::{Handle, HandleKind, Library};
use crate::render;
use crate::task::{InterruptCheck, Task, TaskIds};
use spark_datasource_abi::arrow::{ArrowArray, ArrowArrayStream, ArrowSchema};

/// The task of a read or a data writer: the `SparkDsTaskContext` given to the library, which
/// stays valid as long as this value (the stream or the data writer keeps it).
pub struct TaskContext {
    task: Task,
    ids: TaskIds,
}

impl TaskContext {
    /// A task with `ids`, whose `is_interrupted` returns what `interrupted` returns (never
    /// interrupted without it). `interrupted` may run on any thread of the library.
    pub fn new(ids: TaskIds, interrupted: Option<InterruptCheck>) -> TaskContext {
        TaskContext {
            task: Task::with_ids(ids, interrupted),
            ids,
        }
    }

    /// The IDs of the task.
    pub fn ids(&self) -> TaskIds {
        self.ids
    }

    /// Kills the task: `is_interrupted` returns 1 from now on.
    pub fn interrupt(&self) {
        self.task.interrupt();
    }
}

/// One batch of a stream, imported in place: its buffers are the library's, released when the
/// batch is dropped (arrow-rs's import ties the array's release to its buffers).
#[derive(Debug, Clone)]
pub struct Batch {
    data: ArrayData,
    schema: SchemaRef,
}

impl Batch {
    /// The number of rows.
    pub fn num_rows(&self) -> usize {
        self.data.len()
    }

    /// The batch's struct array: one child per column, with offset 0 and no nulls.
    pub fn data(&self) -> &ArrayData {
        &self.data
    }

    /// The schema of the batch.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The batch as a `RecordBatch`, sharing its buffers.
    ///
    /// # Errors
    ///
    /// None in practice: the batch was checked against its schema.
    pub fn to_record_batch(&self) -> Result<RecordBatch> {
        let array = StructArray::from(make_array(self.data.clone()).into_data());
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            array.columns().to_vec(),
            &RecordBatchOptions::new().with_row_count(Some(self.data.len())),
        )
        .map_err(|e| Error::usage(format!("cannot make a record batch: {e}")))
    }
}

/// The stream of one partition: what `read` returned, with the batch last returned by
/// [`PartitionStream::next_batch`]. Dropping it releases the batch, then the stream, then the task.
pub struct PartitionStream {
    // Dropped in this order (see `Drop`): the batch, the stream, then the task it reads from.
    current: Option<Batch>,
    stream: Box<ArrowArrayStream>,
    task: TaskContext,
    library: &'static Library,
    schema: SchemaRef,
    struct_type: DataType,
    context: String,
    checks: Checks,
    batches: usize,
    ended: bool,
    /// The filters that the reader accepted, checked on every row (rule 31).
    accepted: Vec<Filter>,
}

impl PartitionStream {
    /// Calls `read` for `partition`, with the reader `state` (`None` when the driver serialized
    /// none), and checks the stream's schema against `schema`, the schema to read after
    /// pruning (rule 19).
    ///
    /// # Errors
    ///
    /// The failure of `read` or of the stream's `get_schema`, or a violation.
    pub fn open(
        library: &'static Library,
        task: TaskContext,
        schema: SchemaRef,
        state: Option<&[u8]>,
        partition: &[u8],
        checks: Checks,
    ) -> Result<PartitionStream> {
        let context = format!("partition {}", task.ids.partition_id);
        let stream = call_read(library, &task.task, state, partition, &context)?;
        let violation = |rule: u32, message: String, context: &str| {
            Error::from(Violation::new("read", rule, message).within(Some(context)))
        };
        if stream.release.is_none() {
            return Err(violation(
                11,
                "returned 0 but a released stream (its `release` is NULL); write a stream to `out`"
                    .into(),
                &context,
            ));
        }
        let struct_type = DataType::Struct(schema.fields().clone());
        let mut opened = PartitionStream {
            current: None,
            stream,
            task,
            library,
            schema,
            struct_type,
            context,
            checks,
            batches: 0,
            ended: false,
            accepted: Vec::new(),
        };
        let Some(get_schema) = opened
            .stream
            .get_schema
            .filter(|_| opened.stream.get_next.is_some())
        else {
            return Err(violation(
                11,
                "returned a stream whose `get_schema` or `get_next` is NULL; fill every callback"
                    .into(),
                &opened.context,
            ));
        };
        let mut raw_schema = ArrowSchema::empty();
        // SAFETY: the stream is live (not released) and `raw_schema` is valid for writes.
        let rc = library.observed("get_schema", || unsafe {
            get_schema(&mut *opened.stream, &mut raw_schema)
        });
        if rc != 0 {
            return Err(import::stream_error(
                &mut opened.stream,
                "get_schema",
                rc,
                Some(&opened.context),
            ));
        }
        let got = import::import_schema(&mut raw_schema).map_err(|(rule, m)| {
            violation(rule, format!("the stream's schema: {m}"), &opened.context)
        })?;
        if !import::same_schema(&got, &opened.schema) {
            return Err(violation(
                19,
                format!(
                    "the stream's schema is `{}` but `{}` was asked for; return exactly the schema to read, after `prune_columns`",
                    render::schema_line(&got),
                    render::schema_line(&opened.schema)
                ),
                &opened.context,
            ));
        }
        Ok(opened)
    }

    /// Checks every row of every batch against `filters`, the filters that the reader accepted
    /// (`push_filters` on the driver): a row where one of them is not TRUE fails the stream
    /// with a violation of rule 31 that names the filter, the batch and the row, rather than
    /// reaching the query. A host that trusts the library, or evaluates the filters again
    /// itself, does not call this.
    ///
    /// # Errors
    ///
    /// A filter on a column that the stream's schema does not have (a usage error): the host
    /// must read every column that an accepted filter names, or it cannot check it.
    pub fn check_accepted(&mut self, filters: Vec<Filter>) -> Result<()> {
        for filter in &filters {
            if let Some(column) = filter
                .columns()
                .into_iter()
                .find(|c| !crate::filters::has_column(self.schema.fields(), c))
            {
                return Err(Error::usage(format!(
                    "the accepted filter `{}` names the column `{column}`, which the read's schema `{}` does not have; read every column that an accepted filter names, so that its rows can be checked",
                    crate::filters::sql(filter),
                    render::schema_line(&self.schema)
                )));
            }
        }
        self.accepted = filters;
        Ok(())
    }

    /// The schema of the stream's batches.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The task of the stream.
    pub fn task(&self) -> &TaskContext {
        &self.task
    }

    /// Releases the batch last returned, then calls `get_next`: the next batch, checked and
    /// imported in place, or `None` at the end of the stream (and after it). The batch stays
    /// valid until the next call, or until the stream is dropped.
    ///
    /// # Errors
    ///
    /// The failure of `get_next`, or a violation (naming the batch, the column and the rule).
    pub fn next_batch(&mut self) -> Result<Option<&Batch>> {
        self.release_current();
        if self.ended {
            return Ok(None);
        }
        let Some(get_next) = self.stream.get_next else {
            return Ok(None);
        };
        let mut raw = ArrowArray::empty();
        // SAFETY: the stream is live and `raw` is valid for writes.
        let rc = self.library.observed("get_next", || unsafe {
            get_next(&mut *self.stream, &mut raw)
        });
        if rc != 0 {
            if let Some(release) = raw.release {
                // SAFETY: on failure the library should leave `raw` released; if it did not,
                // the host owns it and releases it once.
                unsafe { release(&mut raw) };
            }
            return Err(import::stream_error(
                &mut self.stream,
                "get_next",
                rc,
                Some(&self.context),
            ));
        }
        if raw.release.is_none() {
            self.ended = true;
            return Ok(None);
        }
        let index = self.batches;
        self.batches += 1;
        // SAFETY: `raw` was just written by `get_next`, which moved it to the host.
        let data =
            unsafe { import_in_place(&mut raw, &self.struct_type, &self.schema, self.checks) }
                .map_err(|(rule, m)| {
                    Error::from(
                        Violation::new("read", rule, format!("batch {index}{m}"))
                            .within(Some(&self.context)),
                    )
                })?;
        let batch = Batch {
            data,
            schema: self.schema.clone(),
        };
        if !self.accepted.is_empty() {
            crate::filters::check_batch(&self.accepted, &batch.to_record_batch()?, index).map_err(
                |(rule, m)| {
                    Error::from(Violation::new("read", rule, m).within(Some(&self.context)))
                },
            )?;
        }
        Ok(Some(self.current.insert(batch)))
    }
}

impl PartitionStream {
    /// Drops the batch last returned: the library's release of its array, unless the caller
    /// keeps a clone of it.
    fn release_current(&mut self) {
        if let Some(batch) = self.current.take() {
            self.library.observed("release", || drop(batch));
        }
    }
}

impl Drop for PartitionStream {
    fn drop(&mut self) {
        self.release_current();
        if let Some(release) = self.stream.release {
            // SAFETY: the stream was moved to the host by `read`; this is its only release.
            self.library
                .observed("release", || unsafe { release(&mut *self.stream) });
            self.stream.release = None;
        }
        // The task is dropped after this, with the other fields: the library may use it
        // until the stream is released.
    }
}

/// Checks one batch that the library moved to the host (the cheap rules on every call, full
/// validation with `checks.full`) and imports it without a copy. The array is released
/// exactly once, when the last of its buffers is dropped, or here on a violation.
///
/// # Safety
///
/// `raw` was moved to the host by `get_next` and is not released yet.
unsafe fn import_in_place(
    raw: &mut ArrowArray,
    struct_type: &DataType,
    schema: &SchemaRef,
    checks: Checks,
) -> std::result::Result<ArrayData, (u32, String)> {
    let checked = import::check_array(raw, struct_type, false, None);
    // SAFETY: the layouts are identical (both are the C data interface's); the host owns the
    // struct, which now moves into arrow-rs, and the original is marked released.
    let ffi: FFI_ArrowArray = unsafe { std::ptr::read(raw as *const ArrowArray as *const _) };
    raw.release = None;
    if let Err(e) = checked {
        drop(ffi);
        return Err(e);
    }
    let data = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the structure was checked by `check_array` against `struct_type`.
        unsafe { from_ffi_and_data_type(ffi, struct_type.clone()) }
    }))
    .map_err(|_| (12, ": arrow-rs panicked importing it".to_string()))?
    .map_err(|e| (12, format!(": arrow-rs cannot import it: {e}")))?;
    if checks.full {
        for (field, child) in schema.fields().iter().zip(data.child_data()) {
            child.validate_full().map_err(|e| {
                (
                    12,
                    format!(", column `{}`: fails full validation: {e}", field.name()),
                )
            })?;
        }
    }
    Ok(data)
}

/// The data writer of a task: what `create_data_writer` returned. Dropping it calls
/// `close_data_writer`, then releases the task.
pub struct DataWriter {
    // Declared before the task: the data writer closes first, while the task is valid.
    handle: Handle<'static>,
    task: TaskContext,
    library: &'static Library,
    schema: SchemaRef,
    ffi_schema: Box<FFI_ArrowSchema>,
    struct_type: DataType,
    context: String,
    checks: Checks,
    batches: usize,
}

impl DataWriter {
    /// `create_data_writer` for the task, with the writer `state` (`None` when the driver
    /// serialized none) and `epoch_id` (`SPARK_DS_NO_EPOCH`, -1, for a batch write); `schema`
    /// describes every batch that [`DataWriter::write`] gets.
    ///
    /// # Errors
    ///
    /// The failure of `create_data_writer`, or a violation.
    pub fn create(
        library: &'static Library,
        task: TaskContext,
        schema: SchemaRef,
        state: Option<&[u8]>,
        epoch_id: i64,
        checks: Checks,
    ) -> Result<DataWriter> {
        let context = format!("task {}", task.ids.partition_id);
        let handle = open_data_writer(library, &task.task, state, epoch_id, &context)?;
        let ffi_schema = export_schema(&schema)?;
        Ok(DataWriter {
            handle,
            task,
            library,
            struct_type: DataType::Struct(schema.fields().clone()),
            schema,
            ffi_schema,
            context,
            checks,
            batches: 0,
        })
    }

    /// The schema of the batches to write.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// `write`: moves `batch`, a struct array of the writer's schema with no nulls, to the
    /// library, which releases it. The cheap checks of the data always run (types, lengths,
    /// buffer sizes, nulls in non-nullable columns); full validation with `checks.full`.
    ///
    /// # Errors
    ///
    /// A batch that does not match the schema (a usage error, naming the column); the failure
    /// of `write`; a violation (a batch the library did not take, a schema it released).
    pub fn write(&mut self, batch: ArrayData) -> Result<()> {
        let index = self.batches;
        self.batches += 1;
        let bad = |message: String| Error::usage(format!("batch {index} to write: {message}"));
        if !batch.data_type().equals_datatype(&self.struct_type) {
            return Err(bad(format!(
                "its type is {} but the writer's schema is `{}`; give batches of that schema",
                batch.data_type(),
                render::schema_line(&self.schema)
            )));
        }
        if batch.offset() != 0 || batch.null_count() != 0 {
            return Err(bad(
                "a batch has offset 0 and no null rows; copy it and mark the values of its columns null instead".into(),
            ));
        }
        for (field, child) in self.schema.fields().iter().zip(batch.child_data()) {
            let column = field.name();
            child
                .validate()
                .map_err(|e| bad(format!("column `{column}`: {e}")))?;
            if child.len() != batch.len() {
                return Err(bad(format!(
                    "column `{column}` has {} but the batch has {}",
                    count(child.len() as i128, "value"),
                    count(batch.len() as i128, "row")
                )));
            }
            if !field.is_nullable() && child.null_count() > 0 {
                return Err(bad(format!(
                    "column `{column}` is not nullable but holds {}",
                    count(child.null_count() as i128, "null")
                )));
            }
            if self.checks.full {
                child
                    .validate_full()
                    .map_err(|e| bad(format!("column `{column}` fails full validation: {e}")))?;
            }
        }
        let mut array = FFI_ArrowArray::new(&batch);
        drop(batch);
        let context = Some(self.context.as_str());
        let called = write_batch(
            self.library,
            &self.handle,
            &self.ffi_schema,
            &mut array,
            context,
        );
        let taken = array.is_released();
        // Dropping an array the library did not take releases it, so nothing leaks.
        drop(array);
        called?;
        still_borrowed(&self.ffi_schema, "write", Some(&self.context))?;
        if !taken {
            return Err(Violation::new(
                "write",
                11,
                format!("batch {index} was not taken: its `release` is still set after the call; copy the struct out of `batch` and set `batch->release` to NULL, as the C data interface moves a struct"),
            )
            .within(Some(&self.context))
            .into());
        }
        Ok(())
    }

    /// `commit_data_writer`: the task's commit message.
    ///
    /// # Errors
    ///
    /// The failure of `commit_data_writer`, or a violation of its sink.
    pub fn commit(&mut self) -> Result<Vec<u8>> {
        commit_data_writer(self.library, &self.handle, Some(&self.context))
    }

    /// `abort_data_writer`.
    ///
    /// # Errors
    ///
    /// The failure of `abort_data_writer`.
    pub fn abort(&mut self) -> Result<()> {
        abort_data_writer(self.library, &self.handle, Some(&self.context))
    }

    /// The task of the data writer.
    pub fn task(&self) -> &TaskContext {
        &self.task
    }
}

/// `commit_data_writer`: the task's commit message. For the steps and the whole-protocol write.
pub(crate) fn commit_data_writer(
    library: &Library,
    data_writer: &Handle<'_>,
    context: Option<&str>,
) -> Result<Vec<u8>> {
    let commit = required(library.table().commit_data_writer, "commit_data_writer")?;
    let writer = data_writer.ptr();
    sink_call_one(library, "commit_data_writer", context, |add, sink| {
        // SAFETY: the data writer is open; the sink is open for the call.
        unsafe { commit(writer, add, sink) }
    })
}

/// `abort_data_writer`. For the steps and the whole-protocol write.
pub(crate) fn abort_data_writer(
    library: &Library,
    data_writer: &Handle<'_>,
    context: Option<&str>,
) -> Result<()> {
    let abort = required(library.table().abort_data_writer, "abort_data_writer")?;
    let writer = data_writer.ptr();
    library.call("abort_data_writer", context, || {
        // SAFETY: the data writer is open.
        unsafe { abort(writer) }
    })
}

/// `create_data_writer` for `task` with the writer's `state`, in epoch `epoch_id`. For the steps
/// and the whole-protocol write; the task must outlive the data writer.
pub(crate) fn open_data_writer<'l>(
    library: &'l Library,
    task: &Task,
    state: Option<&[u8]>,
    epoch_id: i64,
    context: &str,
) -> Result<Handle<'l>> {
    let create = required(library.table().create_data_writer, "create_data_writer")?;
    let (state_ptr, state_len) = match state {
        Some(s) => (s.as_ptr(), s.len() as i64),
        None => (std::ptr::null(), 0),
    };
    let task_ptr = task.as_ptr();
    library.open(
        "create_data_writer",
        Some(context),
        HandleKind::DataWriter,
        |handle| {
            // SAFETY: the task outlives the data writer (the caller's promise); the state is
            // borrowed for the call; `handle` is valid for writes.
            unsafe { create(task_ptr, state_ptr, state_len, epoch_id, handle) }
        },
    )
}

/// `write` on an open data writer: moves `batch` to the library, which takes it (marking it
/// released) and releases it; `schema` is borrowed for the call. For the steps and the
/// whole-protocol write.
pub(crate) fn write_batch(
    library: &Library,
    data_writer: &Handle<'_>,
    schema: &FFI_ArrowSchema,
    batch: *mut FFI_ArrowArray,
    context: Option<&str>,
) -> Result<()> {
    let write = required(library.table().write, "write")?;
    let writer = data_writer.ptr();
    let schema = schema_ptr(schema);
    library.call("write", context, || {
        // SAFETY: the data writer is open; the schema is borrowed; the batch is valid and
        // moved to the library.
        unsafe { write(writer, schema, batch) }
    })
}
