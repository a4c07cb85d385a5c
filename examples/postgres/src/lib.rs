//! postgres: PostgreSQL tables and queries, read and written with COPY's binary format, under
//! the options of Spark's JDBC source.
//!
//! The code of the data source is in [`connector`]; the `spark_datasource` crate turns it into
//! the C interface of `spark_datasource.h`. The line below is the only place that names what
//! the library declares to Spark: batch reads with the three pushdowns (filters through the
//! extension of `spark_datasource_filters.h`), batch writes, overwrite, and micro-batch reads
//! of the tables' changes (change data capture, with the option `slot`).

pub mod connector;

spark_datasource::export!(connector::Source: batch_read, micro_batch_read, batch_write, truncate, push_limit, prune_columns, push_filters);
