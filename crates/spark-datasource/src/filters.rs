//! Filter pushdown: the predicates of `spark_datasource_filters.h`, an extension outside the
//! version-1 table, as a typed tree.
//!
//! Spark offers a batch reader the top-level conjuncts of a query's condition (Data Source V2's
//! `SupportsPushDownV2Filters`); [`BatchReader::push_filters`](crate::BatchReader::push_filters)
//! answers, per conjunct, whether the reader guarantees it on every row it returns. The
//! predicates arrive as [`Filter`]s, decoded by [`decode`] from the binary encoding that the
//! header documents; hosts written in Rust make that encoding with [`encode`].
//!
//! What a connector needs besides the tree:
//! - `evaluate` and `filter_batch`, with the crate's feature `filter-evaluation`: apply
//!   predicates to an Arrow `RecordBatch` with SQL semantics (a row is kept only where the
//!   predicate is TRUE), so that a reader can accept a predicate it has no index for and still
//!   filter its rows itself. The feature is off by default: its kernels (arrow-ord and
//!   arrow-select, in the crate `spark-datasource-eval`) are most of a small library's release
//!   build. Tests have them without it, through the host (`sparkds::filters`), which depends on
//!   that crate itself: a library that calls them without the feature fails `cargo test` as it
//!   fails `cargo build`.
//! - [`IntegerFilter`]: the conjuncts on one integer column (`id > 10`, `id = 3`,
//!   `id IN (..)`, a BETWEEN as two conjuncts) as bounds and a set to plan partitions with.
//!
//! Accepted filters are state of the reader: keep them (or what they became, such as bounds) in
//! the reader, which crosses to the executors serialized. `Filter` implements serde's traits
//! for that.
//!
//! A reader of the ids `[0, end)` that accepts the conjuncts on `id`, and `push_filters` on the
//! `export!` line, which also exports `spark_ds_filters_init`:
//!
//! ```
//! use std::sync::Arc;
//!
//! use spark_datasource::arrow_array::{Int64Array, RecordBatch};
//! use spark_datasource::arrow_schema::{DataType, Field, Schema, SchemaRef};
//! use spark_datasource::filters::{Filter, IntegerFilter};
//! use spark_datasource::{
//!     BatchRead, BatchReader, Batches, DataSource, Error, Options, Result, TaskContext,
//! };
//!
//! pub struct Range;
//!
//! impl DataSource for Range {
//!     fn create(_name: &str, _options: Options) -> Result<Self> {
//!         Ok(Range)
//!     }
//!
//!     fn schema(&self) -> Result<SchemaRef> {
//!         Ok(Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])))
//!     }
//! }
//!
//! impl BatchRead for Range {
//!     type Reader = RangeReader;
//!
//!     fn reader(&self, schema: SchemaRef) -> Result<RangeReader> {
//!         Ok(RangeReader { schema, ids: IntegerFilter::all() })
//!     }
//! }
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! pub struct RangeReader {
//!     schema: SchemaRef,
//!     ids: IntegerFilter,
//! }
//!
//! impl BatchReader for RangeReader {
//!     type Partition = std::ops::Range<i64>;
//!
//!     fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
//!         let (ids, accepted) = IntegerFilter::from_filters("id", filters);
//!         self.ids = ids;
//!         Ok(accepted)
//!     }
//!
//!     fn partitions(&self) -> Result<Vec<std::ops::Range<i64>>> {
//!         Ok(self.ids.ranges(0, 1000))
//!     }
//!
//!     fn read(&self, ids: std::ops::Range<i64>, _task: &TaskContext) -> Result<Batches> {
//!         let ids = Int64Array::from_iter_values(ids);
//!         let batch = RecordBatch::try_new(self.schema.clone(), vec![Arc::new(ids)])
//!             .map_err(Error::from)?;
//!         Ok(Batches::new(self.schema.clone(), [Ok(batch)]))
//!     }
//! }
//!
//! spark_datasource::export!(Range: batch_read, push_filters);
//! # fn main() {}
//! ```
//!
//! The tree and its encoding are `spark-datasource-core`'s, which the host shares, re-exported
//! here.

pub use spark_datasource_core::filters::*;
#[cfg(feature = "filter-evaluation")]
pub use spark_datasource_eval::{evaluate, filter_batch};
