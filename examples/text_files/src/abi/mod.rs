//! The ABI layer: the C interface of `spark_datasource.h` (vendored at the root of the
//! project), on top of the traits of `crate::api`. Plain Rust that a data source never needs
//! to edit; regenerate the project from a newer template to upgrade it.
//!
//! - `ffi`: the mirror of the header's structs, constants and function types.
//! - `table`: the exported `SparkDsLibrary` and `spark_ds_init`.
//! - `entry`: one shim per function of the table, each behind the guard.
//! - `guard`: the panic guard and `last_error`.
//! - `host`: the `SparkDsHost` and its log function.
//! - `bytes`: partitions, states, offsets and commit messages as bytes.
//! - `arrow`, `export` and `stream`: Arrow schemas, batches and the exported stream.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod arrow;
pub mod bytes;
pub mod entry;
#[cfg(any(feature = "batch_read", feature = "micro_batch_read"))]
pub mod export;
pub mod ffi;
pub mod guard;
pub mod host;
#[cfg(any(feature = "batch_read", feature = "micro_batch_read"))]
pub mod stream;
pub mod table;

#[cfg(test)]
mod tests;
