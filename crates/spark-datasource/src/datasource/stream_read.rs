//! `SPARK_DS_MICRO_BATCH_READ`: `MicroBatchStream` in Data Source V2, `streamReader` in Python.

use arrow_schema::SchemaRef;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Batches, DataSource, Result, TaskContext};

/// A data source that supports streaming reads in micro-batches
/// (`SPARK_DS_MICRO_BATCH_READ`).
#[diagnostic::on_unimplemented(
    message = "`export!` names `micro_batch_read`, but `{Self}` does not implement `spark_datasource::StreamRead`",
    label = "needs `impl StreamRead for {Self}`",
    note = "implement `spark_datasource::StreamRead` for `{Self}`, or remove `micro_batch_read` from the `export!` line"
)]
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
