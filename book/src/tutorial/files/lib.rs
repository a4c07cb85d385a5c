//! A native data source for Apache Spark: a shared library that Spark loads by its name, and
//! that exchanges data with Spark as Arrow C data interface streams.
//!
//! The code of the data source is in [`connector`]; the `spark_datasource` crate turns it into
//! the C interface of `spark_datasource.h`. The line below is the only place that names what
//! the library declares to Spark: to add a capability, implement its trait in `connector` and
//! add its name here.

pub mod connector;

// ANCHOR: export
spark_datasource::export!(connector::Source: batch_read, push_limit, prune_columns, push_filters);
// ANCHOR_END: export
