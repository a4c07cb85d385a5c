//! The C side: the interface of `spark_datasource.h` on top of the safe traits of
//! `crate::datasource`. Nothing here names a user type: the entry points are generic, and
//! `export!` instantiates them for the user's source.
//!
//! The header's structs, constants and function types are `spark-datasource-abi`'s.
//! - `library`: the `SparkDsLibrary` table that `export!` builds, and `spark_ds_init`'s body.
//! - `entry`: one shim per function of the table, each behind the guard.
//! - `filters`: the table of the filter pushdown extension, `spark_datasource_filters.h`.
//! - `guard`: the panic guard and `last_error`.
//! - `host`: the `SparkDsHost` and its log function.
//! - `handle`: the `void*` handles of sources, readers and writers.
//! - `bytes`: partitions, states, offsets and commit messages as bytes.
//! - `schema`: Arrow schemas both ways, and the batches a write receives.
//! - `batch_check` and `array_stream`: the checks of exported batches, and the exported stream.

pub mod array_stream;
pub mod batch_check;
pub mod bytes;
pub mod entry;
pub mod filters;
pub mod guard;
pub mod handle;
pub mod host;
pub mod library;
pub mod schema;

#[cfg(test)]
mod tests;
