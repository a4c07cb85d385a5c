//! `SPARK_DS_BATCH_READ`: `ScanBuilder` + `Batch` in Data Source V2, `reader(schema)` in Python.

use arrow_schema::SchemaRef;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Batches, DataSource, Error, Result, TaskContext};
use crate::filters::Filter;

/// A data source that supports batch reads (`SPARK_DS_BATCH_READ`).
#[diagnostic::on_unimplemented(
    message = "`export!` names `batch_read` (or a pushdown), but `{Self}` does not implement `spark_datasource::BatchRead`",
    label = "needs `impl BatchRead for {Self}`",
    note = "implement `spark_datasource::BatchRead` for `{Self}`, or remove `batch_read`, `push_limit` and `prune_columns` from the `export!` line"
)]
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

    /// Offers the top-level conjuncts of the query's condition, before
    /// [`BatchReader::push_limit`] and [`BatchReader::prune_columns`]; only called when
    /// `export!` names `push_filters`, and by a host that knows the extension
    /// (`spark_datasource_filters.h`). Return one answer per filter, in order: `true` when
    /// every row that [`BatchReader::read`] returns makes the filter TRUE (Spark then does
    /// not evaluate it again), `false` to leave it to Spark. Keep what you accept in the
    /// reader: it reaches the executors serialized with it.
    ///
    /// Accepting none is correct, and is the default. A filter you do not understand
    /// (including [`Filter::Unsupported`], which is never passed on as accepted) is answered
    /// `false`, never an error. A column that only accepted filters use may be pruned
    /// afterwards: apply the filter anyway. [`crate::filters::IntegerFilter`] and
    /// `filters::filter_batch` (the feature `filter-evaluation`) do the usual work.
    ///
    /// # Errors
    /// A failure while accepting them (not a filter that is not understood).
    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        Ok(vec![false; filters.len()])
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
