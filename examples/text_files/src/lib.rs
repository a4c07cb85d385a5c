//! text_files: a directory of CSV or JSON-lines files, read with byte-range splits and written
//! in two phases, published atomically.
//!
//! The code of the data source is in [`connector`]; the `spark_datasource` crate turns it into
//! the C interface of `spark_datasource.h`. The line below is the only place that names what
//! the library declares to Spark: batch reads with both pushdowns of version 1 and filter
//! pushdown (the extension of `spark_datasource_filters.h`), batch writes, and overwrite.

pub mod connector;

spark_datasource::export!(connector::Source: batch_read, batch_write, truncate, push_limit, prune_columns, push_filters);
