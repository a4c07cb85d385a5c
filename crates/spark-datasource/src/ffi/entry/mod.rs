//! The exported functions of the table: each one a shim that runs its body through the guard.
//! The bodies turn pointers into Rust values (with the checks the header allows) and call the
//! traits of `crate::datasource`; no logic of the data source lives here.

pub mod source;

pub mod batch_read;
pub mod partition_read;
pub mod stream_read;
pub mod write;

mod task;
