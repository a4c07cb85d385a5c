//! The write protocols (`SPARK_DS_BATCH_WRITE`, `SPARK_DS_STREAMING_WRITE`): on the driver
//! `create_writer` with a `SparkDsWriteInfo`, `serialize_writer`; per task, on its own thread,
//! `create_data_writer`, `write` per batch (the batch moved to the library, the schema
//! borrowed), `commit_data_writer` or `abort_data_writer`, `close_data_writer`; then `commit` or
//! `abort` with the messages of the tasks; per epoch for a streaming write.

use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, PoisonError};

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_data::transform::MutableArrayData;
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::SchemaRef;

use crate::calls::{export_schema, source_schema, still_borrowed};
use crate::error::{Error, Result, Violation};
use crate::library::{Handle, Library, Source};
use crate::steps::{self, finish_write};
use crate::task::Task;
use spark_datasource_abi::arrow::ArrowArray;
use spark_datasource_abi::v1;

/// The write mode, `SparkDsWriteInfo.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteMode {
    /// `SPARK_DS_WRITE_APPEND`: save mode append, output mode append.
    #[default]
    Append,
    /// `SPARK_DS_WRITE_TRUNCATE`: save mode overwrite, output mode complete. Needs
    /// `SPARK_DS_TRUNCATE`.
    Truncate,
}

/// What one write (or one epoch of a streaming write) did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteOutcome {
    /// The commit message of each task, in partition order; `None` for a task that failed.
    pub messages: Vec<Option<Vec<u8>>>,
    /// Whether `commit` ran (and succeeded).
    pub committed: bool,
    /// Whether `abort` ran.
    pub aborted: bool,
}

/// A batch write, as `df.write.format(...).mode(...).save()` runs it. Built by
/// [`Library::batch_write`].
///
/// ```no_run
/// # fn main() -> Result<(), sparkds::Error> {
/// # let (a, b): (arrow_array::RecordBatch, arrow_array::RecordBatch) = todo!();
/// let library = sparkds::Library::load(sparkds::cdylib("spark_datasource_my_source")?)?;
/// let write = library.batch_write().task([a]).task([b]).failing_task(1).run()?;
/// assert!(write.aborted && write.messages[1].is_none());
/// # Ok(()) }
/// ```
#[must_use = "a write does nothing until `run`"]
pub struct BatchWrite<'l> {
    spec: WriteSpec<'l>,
    tasks: Vec<Vec<RecordBatch>>,
    failing_task: Option<usize>,
    retried_task: Option<usize>,
}

/// A streaming write, as `df.writeStream.format(...).outputMode(...).start()` runs it, one
/// epoch per micro-batch. Built by [`Library::streaming_write`].
#[must_use = "a write does nothing until `run`"]
pub struct StreamingWrite<'l> {
    spec: WriteSpec<'l>,
    epochs: Vec<Vec<Vec<RecordBatch>>>,
    failing: Option<(usize, usize)>,
}

struct WriteSpec<'l> {
    library: &'l Library,
    options: Vec<(String, String)>,
    schema: Option<SchemaRef>,
    mode: WriteMode,
}

impl Library {
    /// Starts a batch write to this library.
    pub fn batch_write(&self) -> BatchWrite<'_> {
        BatchWrite {
            spec: WriteSpec::new(self),
            tasks: Vec::new(),
            failing_task: None,
            retried_task: None,
        }
    }

    /// Starts a streaming write to this library.
    pub fn streaming_write(&self) -> StreamingWrite<'_> {
        StreamingWrite {
            spec: WriteSpec::new(self),
            epochs: Vec::new(),
            failing: None,
        }
    }
}

impl<'l> WriteSpec<'l> {
    fn new(library: &'l Library) -> Self {
        WriteSpec {
            library,
            options: Vec::new(),
            schema: None,
            mode: WriteMode::Append,
        }
    }
}

macro_rules! common_setters {
    () => {
        crate::builders::option_setters!("Adds an option.", spec.options);

        /// The schema of the data to write; by default the schema of the first batch, else
        /// the source's.
        pub fn schema(mut self, schema: SchemaRef) -> Self {
            self.spec.schema = Some(schema);
            self
        }

        /// The write mode ([`WriteMode::Append`] by default).
        pub fn mode(mut self, mode: WriteMode) -> Self {
            self.spec.mode = mode;
            self
        }
    };
}

impl BatchWrite<'_> {
    common_setters!();

    /// Adds a task that writes these batches.
    pub fn task(mut self, batches: impl IntoIterator<Item = RecordBatch>) -> Self {
        self.tasks.push(batches.into_iter().collect());
        self
    }

    /// Makes the task at `index` fail after its writes: `abort_data_writer` instead of
    /// `commit_data_writer`, then `abort` instead of `commit`.
    pub fn failing_task(mut self, index: usize) -> Self {
        self.failing_task = Some(index);
        self
    }

    /// Runs the task at `index` twice, as Spark retries a task whose executor was lost after
    /// it committed: attempt 0 writes its batches and commits its data writer, but its commit
    /// message never reaches the driver; attempt 1 (`attempt_number` 1, a new `task_id`) writes
    /// the same batches and commits, and only its message goes to `commit`. A source that
    /// publishes what a task committed, rather than what `commit` was given, publishes the rows
    /// twice.
    pub fn retried_task(mut self, index: usize) -> Self {
        self.retried_task = Some(index);
        self
    }

    /// Runs the write.
    ///
    /// # Errors
    ///
    /// A failure of the library or a violation of a rule (after `abort` ran, as Spark does).
    pub fn run(self) -> Result<WriteOutcome> {
        let epochs = vec![Epoch {
            id: v1::SPARK_DS_NO_EPOCH,
            tasks: self.tasks,
            failing: self.failing_task,
            retried: self.retried_task,
        }];
        let mut outcomes = self.spec.run(false, epochs)?;
        Ok(outcomes.pop().unwrap_or_default())
    }
}

impl StreamingWrite<'_> {
    common_setters!();

    /// Adds an epoch (a micro-batch) whose tasks write these batches.
    pub fn epoch<T: IntoIterator<Item = RecordBatch>>(
        mut self,
        tasks: impl IntoIterator<Item = T>,
    ) -> Self {
        self.epochs
            .push(tasks.into_iter().map(|t| t.into_iter().collect()).collect());
        self
    }

    /// Makes the task `task` of the epoch `epoch` fail: that epoch is aborted.
    pub fn failing_task(mut self, epoch: usize, task: usize) -> Self {
        self.failing = Some((epoch, task));
        self
    }

    /// Runs every epoch; the outcome of each, in order.
    ///
    /// # Errors
    ///
    /// A failure of the library or a violation of a rule.
    pub fn run(self) -> Result<Vec<WriteOutcome>> {
        let failing = self.failing;
        let epochs = self
            .epochs
            .into_iter()
            .enumerate()
            .map(|(i, tasks)| Epoch {
                id: i as i64,
                tasks,
                failing: failing.filter(|(e, _)| *e == i).map(|(_, t)| t),
                retried: None,
            })
            .collect();
        self.spec.run(true, epochs)
    }
}

/// One epoch (or the one job of a batch write): its ID, the batches of each task, the task
/// that fails and the task that runs a second attempt.
struct Epoch {
    id: i64,
    tasks: Vec<Vec<RecordBatch>>,
    failing: Option<usize>,
    retried: Option<usize>,
}

impl<'l> WriteSpec<'l> {
    fn run(self, streaming: bool, epochs: Vec<Epoch>) -> Result<Vec<WriteOutcome>> {
        let library = self.library;
        let source = self.create_source(streaming)?;
        let schema = self.write_schema(&source, &epochs)?;
        let writer = self.create_writer(&source, &schema, streaming)?;
        let state = steps::serialize_writer(library, &writer)?;
        let mut outcomes = Vec::new();
        for epoch in epochs {
            outcomes.push(run_epoch(
                library,
                &writer,
                state.as_deref(),
                &schema,
                epoch,
            )?);
        }
        drop(writer);
        drop(source);
        Ok(outcomes)
    }

    /// Creates the source with the write's options; it must declare the write and its mode.
    fn create_source(&self, streaming: bool) -> Result<Source<'l>> {
        let source = self.library.create(&self.options)?;
        let caps = source.capabilities;
        let (needed, operation) = if streaming {
            (caps.streaming_write(), "SPARK_DS_STREAMING_WRITE")
        } else {
            (caps.batch_write(), "SPARK_DS_BATCH_WRITE")
        };
        if !needed {
            return Err(Error::NotSupported {
                capability: operation,
                operation: if streaming {
                    "a streaming write"
                } else {
                    "a batch write"
                },
            });
        }
        if self.mode == WriteMode::Truncate && !caps.truncate() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_TRUNCATE",
                operation: "the truncate mode",
            });
        }
        Ok(source)
    }

    /// The schema written: the one given, else that of the first batch, else the source's.
    fn write_schema(&self, source: &Source<'l>, epochs: &[Epoch]) -> Result<SchemaRef> {
        let first = epochs
            .iter()
            .flat_map(|epoch| epoch.tasks.iter().flatten())
            .next()
            .map(RecordBatch::schema);
        match (self.schema.clone(), first) {
            (Some(s), _) | (None, Some(s)) => Ok(s),
            (None, None) => source_schema(self.library, source, None),
        }
    }

    /// Creates the driver's writer (`create_writer`) of `schema`, in the write's mode.
    fn create_writer(
        &self,
        source: &Source<'l>,
        schema: &SchemaRef,
        streaming: bool,
    ) -> Result<Handle<'l>> {
        let query_id = CString::new(query_id(streaming))
            .map_err(|_| Error::usage("the query id contains a NUL byte"))?;
        let writer = steps::open_writer(
            self.library,
            source,
            schema,
            &query_id,
            self.mode,
            streaming,
        )?;
        Ok(writer)
    }
}

/// One epoch (or the one job of a batch write): its tasks, each on its own thread, then
/// `commit` when every task committed, else `abort`.
fn run_epoch(
    library: &Library,
    writer: &Handle<'_>,
    state: Option<&[u8]>,
    schema: &SchemaRef,
    epoch: Epoch,
) -> Result<WriteOutcome> {
    let epoch_id = epoch.id;
    let context = (epoch_id != v1::SPARK_DS_NO_EPOCH).then(|| format!("epoch {epoch_id}"));
    let results = run_write_tasks(library, state, schema, &context, epoch);
    let (messages, first_error) = messages_of(results);
    let ok = messages.iter().all(Option::is_some) && first_error.is_none();
    let lent: Vec<Option<&[u8]>> = messages.iter().map(Option::as_deref).collect();
    let call = finish_write(library, writer, ok, epoch_id, context.as_deref(), &lent);
    if let Some(e) = first_error {
        return Err(e);
    }
    call?;
    Ok(WriteOutcome {
        messages,
        committed: ok,
        aborted: !ok,
    })
}

/// Runs the tasks of an epoch at the same time: the commit message of each, or its error.
fn run_write_tasks(
    library: &Library,
    state: Option<&[u8]>,
    schema: &SchemaRef,
    context: &Option<String>,
    epoch: Epoch,
) -> Vec<Result<Option<Vec<u8>>>> {
    let Epoch {
        id: epoch_id,
        tasks,
        failing,
        retried,
    } = epoch;
    let started = Barrier::new(tasks.len());
    let started = &started;
    std::thread::scope(|scope| {
        let handles: Vec<_> = tasks
            .iter()
            .enumerate()
            .map(|(i, batches)| {
                let state = state.map(<[u8]>::to_vec);
                let schema = schema.clone();
                let context = context.clone();
                scope.spawn(move || {
                    let task_context = match &context {
                        Some(c) => format!("{c}, task {i}"),
                        None => format!("task {i}"),
                    };
                    let task = WriteTask {
                        context: task_context,
                        stage: epoch_id.max(0) as i32,
                        index: i,
                        attempt: 0,
                        epoch_id,
                        state: state.as_deref(),
                        schema: &schema,
                        batches,
                        fail: failing == Some(i),
                        started: Some(started),
                    };
                    if retried == Some(i) {
                        retry_task(library, task)
                    } else {
                        write_task(library, task)
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::usage("a write task of the host panicked; this is a bug of sparkds, please report it"))))
            .collect()
    })
}

/// The commit message of each task (`None` for a task that failed) and the first error.
fn messages_of(results: Vec<Result<Option<Vec<u8>>>>) -> (Vec<Option<Vec<u8>>>, Option<Error>) {
    let mut first_error = None;
    let mut messages = Vec::new();
    for result in results {
        match result {
            Ok(message) => messages.push(message),
            Err(e) => {
                first_error.get_or_insert(e);
                messages.push(None);
            }
        }
    }
    (messages, first_error)
}

#[derive(Clone)]
struct WriteTask<'a> {
    context: String,
    stage: i32,
    index: usize,
    attempt: i32,
    epoch_id: i64,
    state: Option<&'a [u8]>,
    schema: &'a SchemaRef,
    batches: &'a [RecordBatch],
    fail: bool,
    /// What the tasks of the epoch wait at once their data writers are open; `None` for a
    /// retry, which starts after them.
    started: Option<&'a Barrier>,
}

/// Runs a task's attempt 0, which commits but whose message is lost, then its attempt 1: the
/// message of attempt 1 (see [`BatchWrite::retried_task`]).
fn retry_task(library: &Library, task: WriteTask<'_>) -> Result<Option<Vec<u8>>> {
    let first = WriteTask {
        context: format!("{}, attempt 0", task.context),
        fail: false,
        ..task.clone()
    };
    let _lost_message = write_task(library, first)?;
    let retry = WriteTask {
        context: format!("{}, attempt 1", task.context),
        attempt: 1,
        started: None,
        ..task
    };
    write_task(library, retry)
}

fn write_task(library: &Library, t: WriteTask<'_>) -> Result<Option<Vec<u8>>> {
    let ctx = Some(t.context.as_str());
    let task = Task::attempt(t.stage, t.index, t.attempt);
    let adopted = steps::open_data_writer(library, &task, t.state, t.epoch_id, t.context.as_str());
    // Every task of the epoch holds its data writer open before any of them writes, as
    // concurrent executors do, so that a handle returned to two tasks at once is caught
    // (rule 21). Each task reaches this point exactly once, whatever happened above.
    if let Some(started) = t.started {
        started.wait();
    }
    let data_writer = adopted?;
    let schema = export_schema(t.schema)?;
    let mut exported = Vec::new();
    let result = write_batches(library, &t, &data_writer, &schema, &mut exported)?;
    let message = finish_data_writer(library, ctx, &data_writer, result, t.fail)?;
    drop(data_writer);
    check_released_once(&exported, ctx)?;
    Ok(message)
}

/// Writes the task's batches, one `write` each, until one fails: the result of the writes (the
/// trackers of the batches moved go to `exported`), or the error of the host before a write.
fn write_batches(
    library: &Library,
    t: &WriteTask<'_>,
    data_writer: &Handle<'_>,
    schema: &FFI_ArrowSchema,
    exported: &mut Vec<Arc<Tracker>>,
) -> Result<Result<()>> {
    let ctx = Some(t.context.as_str());
    let mut result = Ok(());
    for batch in t.batches {
        let (mut array, tracker) = export_batch(batch)?;
        exported.push(tracker);
        // The batch is moved to the library, which releases it (tracked by `tracked_release`).
        result = steps::write_batch(library, data_writer, schema, array.as_ffi(), ctx)
            .and_then(|()| still_borrowed(schema, "write", ctx));
        if result.is_err() {
            break;
        }
    }
    Ok(result)
}

/// Aborts the data writer after a failed write or when the task is to fail, else commits it:
/// its commit message.
fn finish_data_writer(
    library: &Library,
    ctx: Option<&str>,
    data_writer: &Handle<'_>,
    result: Result<()>,
    fail: bool,
) -> Result<Option<Vec<u8>>> {
    if result.is_err() || fail {
        let aborted = steps::abort_data_writer(library, data_writer, ctx);
        result?;
        aborted?;
        Ok(None)
    } else {
        steps::commit_data_writer(library, data_writer, ctx).map(Some)
    }
}

/// Each batch moved to the library was released exactly once (rule 11), once its data writer is
/// closed.
fn check_released_once(exported: &[Arc<Tracker>], ctx: Option<&str>) -> Result<()> {
    for (i, tracker) in exported.iter().enumerate() {
        let releases = tracker.releases.load(Ordering::SeqCst);
        if releases != 1 {
            let what = if releases == 0 {
                "was never released, even after `close_data_writer`".to_string()
            } else {
                format!("was released {releases} times")
            };
            return Err(Violation::new(
                "write",
                11,
                format!("batch {i} {what}; release a moved batch exactly once"),
            )
            .within(ctx)
            .into());
        }
    }
    Ok(())
}

/// The private data of a batch that the host moves to the library: arrow-rs's export, and how
/// many times the library released it.
struct Tracker {
    inner: Mutex<Option<FFI_ArrowArray>>,
    releases: AtomicUsize,
}

/// Trackers are kept for the life of the process: a library that releases a batch late, or
/// twice, must still find valid private data (a few bytes per batch, in a test host).
static TRACKERS: Mutex<Vec<Arc<Tracker>>> = Mutex::new(Vec::new());

/// Exports a batch, with offset 0 at every level, for `write`.
fn export_batch(batch: &RecordBatch) -> Result<(Box<ArrowArray>, Arc<Tracker>)> {
    let data = StructArray::from(batch.clone()).into_data();
    let mut copy = MutableArrayData::new(vec![&data], false, data.len());
    copy.try_extend(0, 0, data.len())
        .map_err(|e| Error::usage(format!("cannot copy a batch to write: {e}")))?;
    let data = copy.freeze();
    let tracker = Arc::new(Tracker {
        inner: Mutex::new(Some(FFI_ArrowArray::new(&data))),
        releases: AtomicUsize::new(0),
    });
    TRACKERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(tracker.clone());
    let guard = tracker.inner.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(inner) = guard.as_ref() else {
        return Err(Error::usage(
            "the exported batch vanished; this is a bug of sparkds",
        ));
    };
    // SAFETY: identical layouts; the view only reads the fields. The buffers and children it
    // points to live in arrow-rs's private data, on the heap, until `inner` is released.
    let view = unsafe { &*(inner as *const FFI_ArrowArray as *const ArrowArray) };
    let array = Box::new(ArrowArray {
        length: view.length,
        null_count: view.null_count,
        offset: view.offset,
        n_buffers: view.n_buffers,
        n_children: view.n_children,
        buffers: view.buffers,
        children: view.children,
        dictionary: view.dictionary,
        release: Some(tracked_release),
        private_data: Arc::as_ptr(&tracker) as *mut c_void,
    });
    drop(guard);
    Ok((array, tracker))
}

/// The release callback of a batch moved to the library.
///
/// # Safety
///
/// `array` is NULL or a struct that `export_batch` built (or a bitwise move of it), whose
/// `private_data` is a `Tracker` kept alive by `TRACKERS`.
unsafe extern "C" fn tracked_release(array: *mut ArrowArray) {
    if array.is_null() {
        return;
    }
    // SAFETY: see the contract above.
    let private = unsafe { (*array).private_data } as *const Tracker;
    if !private.is_null() {
        // SAFETY: the tracker lives as long as the process (`TRACKERS`).
        let tracker = unsafe { &*private };
        // A panic must not unwind into the library.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            tracker.releases.fetch_add(1, Ordering::SeqCst);
            let inner = tracker
                .inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            drop(inner);
        }));
    }
    // SAFETY: `array` is a valid struct (see above); marking it released is the duty of a
    // release callback.
    unsafe { (*array).release = None };
}

/// The query ID of a write. A batch write gets a new one each time, as Spark gives each write
/// its own (sources name staged data after it, and two writes in a row must not collide, even
/// from two processes); a streaming query keeps its ID across restarts, so it is fixed.
fn query_id(streaming: bool) -> String {
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    if streaming {
        "sparkds-streaming-write".to_string()
    } else {
        let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("sparkds-batch-write-{}-{n}", std::process::id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;
    use arrow_schema::{DataType, Field, Schema};

    #[test]
    fn the_host_exports_a_sliced_batch_as_its_own_checks_require() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let batch = crate::sample::rows(&schema, 0, 5)
            .expect("sample rows")
            .slice(2, 3);
        let (mut array, _tracker) = export_batch(&batch).expect("exported");
        let t = DataType::Struct(schema.fields().clone());
        assert_eq!(crate::import::check_array(&array, &t, false, None), Ok(()));
        let release = array.release.expect("not released");
        // SAFETY: the array was built by export_batch and is released once here.
        unsafe { release(&mut *array) };
    }

    #[test]
    fn an_exported_batch_counts_its_releases() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))])
            .expect("a valid batch")
            .slice(1, 2);
        let (mut array, tracker) = export_batch(&batch).expect("exported");
        assert_eq!(array.length, 2);
        // SAFETY: the children of a struct export are valid.
        assert_eq!(unsafe { (**array.children).offset }, 0);
        let release = array.release.expect("not released");
        // SAFETY: the array was built by export_batch and is released once here.
        unsafe { release(&mut *array) };
        assert!(array.release.is_none());
        assert_eq!(tracker.releases.load(Ordering::SeqCst), 1);
    }
}
