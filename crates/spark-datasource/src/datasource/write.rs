//! `SPARK_DS_BATCH_WRITE` and `SPARK_DS_STREAMING_WRITE`: `BatchWrite` and `DataWriter` in Data
//! Source V2, `writer(schema, overwrite)` in Python.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{DataSource, Result, TaskContext};

/// How a write treats the data already in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteMode {
    /// Add to it.
    Append,
    /// Replace it: save mode overwrite, or output mode complete of a streaming query.
    Truncate,
}

/// What Spark tells a writer about the write.
#[derive(Clone, Debug)]
pub struct WriteInfo {
    /// The schema of the data to write.
    pub schema: SchemaRef,
    /// Append or truncate.
    pub mode: WriteMode,
    /// A unique ID of the write; for a streaming write, the query ID, kept across restarts.
    pub query_id: String,
    /// Whether this is a streaming write, committed once per epoch.
    pub streaming: bool,
}

/// A data source that supports writes (`SPARK_DS_BATCH_WRITE`, `SPARK_DS_STREAMING_WRITE`).
#[diagnostic::on_unimplemented(
    message = "`export!` names `batch_write` or `streaming_write`, but `{Self}` does not implement `spark_datasource::Write`",
    label = "needs `impl Write for {Self}`",
    note = "implement `spark_datasource::Write` for `{Self}`, or remove `batch_write` and `streaming_write` from the `export!` line"
)]
pub trait Write: DataSource {
    /// The writer, which commits on the driver what the data writers staged.
    type Writer: Writer;

    /// Creates the writer of a query.
    ///
    /// # Errors
    /// A schema or a mode that the source cannot write.
    fn writer(&self, info: WriteInfo) -> Result<Self::Writer>;
}

/// The driver side of a write: a two-phase commit. Tasks stage their data and return commit
/// messages; `commit` publishes all of it in one step, `abort` removes it.
pub trait Writer: Serialize + DeserializeOwned + 'static {
    /// What a task returns to the driver: a reference to what it staged, not the rows.
    type Message: Serialize + DeserializeOwned;
    /// The writer of one task attempt.
    type DataWriter: DataWriter<Message = Self::Message>;

    /// Creates the data writer of a task attempt, on an executor. `epoch` is the micro-batch
    /// of a streaming write.
    ///
    /// # Errors
    /// A failure to start writing.
    fn data_writer(&self, task: &TaskContext, epoch: Option<u64>) -> Result<Self::DataWriter>;

    /// Publishes the data of all the tasks (of the epoch), atomically.
    ///
    /// # Errors
    /// A failure to publish: Spark then calls `abort`.
    fn commit(&mut self, epoch: Option<u64>, messages: Vec<Self::Message>) -> Result<()>;

    /// Removes what the write (or the epoch) staged. `None` stands for a task that did not
    /// commit, whose data writer may have left files behind.
    ///
    /// # Errors
    /// A failure to remove.
    fn abort(&mut self, epoch: Option<u64>, messages: Vec<Option<Self::Message>>) -> Result<()>;
}

/// The executor side of a write: one task attempt.
pub trait DataWriter: 'static {
    /// The commit message.
    type Message: Serialize;

    /// Writes one batch, to a staging place: nothing may become visible before commit.
    ///
    /// # Errors
    /// A failure to write.
    fn write(&mut self, batch: RecordBatch) -> Result<()>;

    /// Finishes the task's data (flush, sync) and returns its commit message.
    ///
    /// # Errors
    /// A failure to finish: Spark then aborts the task.
    fn commit(&mut self) -> Result<Self::Message>;

    /// Removes what this task attempt wrote.
    ///
    /// # Errors
    /// A failure to remove.
    fn abort(&mut self) -> Result<()>;
}
