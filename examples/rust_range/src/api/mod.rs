//! The traits that a data source implements: safe Rust that mirrors Data Source V2 and the
//! Python Data Source API. The ABI layer (`crate::abi`) turns them into the C interface of
//! `spark_datasource.h`; a data source never touches a pointer.
//!
//! | Spark (DSv2 / Python)                      | here                                   |
//! |--------------------------------------------|----------------------------------------|
//! | `TableProvider` / `DataSource`             | [`DataSource`]                         |
//! | `ScanBuilder` + `Batch` / `reader(schema)` | [`BatchRead`], [`BatchReader`]         |
//! | `MicroBatchStream` / `streamReader`        | [`StreamRead`], [`StreamReader`]       |
//! | `BatchWrite` / `writer(schema, overwrite)` | [`Write`], [`Writer`]                  |
//! | `DataWriter`                               | [`DataWriter`]                         |
//!
//! Readers and writers cross from the driver to the executors as bytes, like Python's pickled
//! reader objects: they implement `Serialize` and `Deserialize`, and so do partitions,
//! offsets and commit messages. Keep connections and file handles out of them.

mod error;
pub mod log;
mod options;
mod task;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use error::{Error, Result};
pub use options::{OptionValue, Options};
pub use task::TaskContext;

/// A data source, created on the driver for each query with the options of the query.
pub trait DataSource: Sized + 'static {
    /// Creates the data source. `name` is the name the query used. Validate the options here
    /// or in the operation that uses them, with errors that name the option.
    ///
    /// # Errors
    /// An invalid option.
    fn create(name: &str, options: Options) -> Result<Self>;

    /// The schema of the data source: what `spark.read.format(name).load()` reads when the
    /// query gives no schema of its own.
    ///
    /// # Errors
    /// When the schema cannot be determined, for example from a file that does not exist.
    fn schema(&self) -> Result<SchemaRef>;
}

/// A data source that supports batch reads (`SPARK_DS_BATCH_READ`).
pub trait BatchRead: DataSource {
    /// The reader, which the driver plans with and the executors read with.
    type Reader: BatchReader;

    /// Creates a reader of `schema`, the schema of the data source or the one the query gave.
    ///
    /// # Errors
    /// A schema that the source cannot read.
    fn reader(&self, schema: SchemaRef) -> Result<Self::Reader>;
}

/// Plans a batch read on the driver, then reads its partitions on the executors.
pub trait BatchReader: Serialize + DeserializeOwned + 'static {
    /// What a task reads: a byte range, a file, a page of an API. It holds only what
    /// identifies the split.
    type Partition: Serialize + DeserializeOwned;

    /// Offers the LIMIT of a query. Return `true` to accept it: each partition then returns
    /// at most `limit` rows. Spark still applies the limit on top.
    ///
    /// # Errors
    /// A failure while accepting it.
    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        let _ = limit;
        Ok(false)
    }

    /// Gives the columns the query needs, a subset of the reader's schema in Spark's order.
    /// Once this returns `Ok`, [`BatchReader::read`] must return exactly this schema.
    ///
    /// # Errors
    /// When the source cannot read just these columns.
    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        let _ = required;
        Err(Error::msg("this data source does not prune columns"))
    }

    /// Splits the read into partitions, one Spark task each. Plan from metadata (sizes,
    /// counts), never by reading the data.
    ///
    /// # Errors
    /// A failure to plan, for example a directory that does not exist.
    fn partitions(&self) -> Result<Vec<Self::Partition>>;

    /// Reads one partition, on an executor, as a lazy stream of batches of bounded size.
    ///
    /// # Errors
    /// A failure to start reading; later failures are items of the stream.
    fn read(&self, partition: Self::Partition, task: &TaskContext) -> Result<Batches>;
}

/// A data source that supports streaming reads in micro-batches
/// (`SPARK_DS_MICRO_BATCH_READ`).
pub trait StreamRead: DataSource {
    /// The reader of the stream.
    type Reader: StreamReader;

    /// Creates the reader of a streaming query that reads `schema`.
    ///
    /// # Errors
    /// A schema that the source cannot read.
    fn stream_reader(&self, schema: SchemaRef) -> Result<Self::Reader>;
}

/// Plans the micro-batches of a stream on the driver and reads them on the executors.
/// Spark stores offsets in the checkpoint of the query: reading the same offset range must
/// return the same rows, which makes the query exactly once.
pub trait StreamReader: Serialize + DeserializeOwned + 'static {
    /// A position in the stream.
    type Offset: Serialize + DeserializeOwned;
    /// What a task of a micro-batch reads.
    type Partition: Serialize + DeserializeOwned;

    /// Where a new query starts.
    ///
    /// # Errors
    /// A failure to reach the source.
    fn initial_offset(&self) -> Result<Self::Offset>;

    /// How far data is available now, after `start`, the end of the previous micro-batch:
    /// returning `start` means that nothing new is available.
    ///
    /// # Errors
    /// A failure to reach the source.
    fn latest_offset(&mut self, start: Self::Offset) -> Result<Self::Offset>;

    /// Plans the micro-batch of the data after `start` up to `end`.
    ///
    /// # Errors
    /// Offsets that the source cannot read (any more).
    fn partitions(&self, start: Self::Offset, end: Self::Offset) -> Result<Vec<Self::Partition>>;

    /// Reads one partition of a micro-batch, on an executor.
    ///
    /// # Errors
    /// A failure to start reading.
    fn read(&self, partition: Self::Partition, task: &TaskContext) -> Result<Batches>;

    /// Spark will never read the data up to `end` again: the source may discard it.
    ///
    /// # Errors
    /// A failure to discard.
    fn commit(&mut self, end: Self::Offset) -> Result<()> {
        let _ = end;
        Ok(())
    }
}

/// How a write treats the data already in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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

/// The batches that a read returns: a schema and a lazy, fallible sequence of batches of that
/// schema. The ABI layer exports it as an Arrow C stream, checking each batch on the way.
pub struct Batches {
    schema: SchemaRef,
    batches: Box<dyn Iterator<Item = Result<RecordBatch>> + Send>,
}

impl Batches {
    /// Batches of `schema`, produced by `batches` when Spark asks for the next one.
    pub fn new<I>(schema: SchemaRef, batches: I) -> Self
    where
        I: IntoIterator<Item = Result<RecordBatch>>,
        I::IntoIter: Send + 'static,
    {
        Batches {
            schema,
            batches: Box::new(batches.into_iter()),
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.batches.next()
    }
}
