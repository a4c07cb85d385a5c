//! tail_stream: micro-batches of the lines appended to the files of a directory, and a
//! streaming writer that writes each epoch once.
//!
//! The code of the data source is in [`connector`]; the `spark_datasource` crate turns it into
//! the C interface of `spark_datasource.h`. The line below is the only place that names what
//! the library declares to Spark: micro-batch reads and streaming writes.

pub mod connector;

spark_datasource::export!(connector::Source: micro_batch_read, streaming_write);
