//! rust_range: the data source of the specification's "Example in Rust", on the
//! `spark_datasource` crate. It reads the numbers `[0, end)` as one column `id`, in two
//! partitions.
//!
//! The code of the data source is in [`connector`]; the `spark_datasource` crate turns it into
//! the C interface of `spark_datasource.h`. The line below is the only place that names what
//! the library declares to Spark: batch reads, without pushdowns, as the guide's example.

pub mod connector;

spark_datasource::export!(connector::Source: batch_read);
