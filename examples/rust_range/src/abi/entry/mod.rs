//! The exported functions of the table: each one a shim that runs its body through the guard.
//! The bodies turn pointers into Rust values (with the checks the header allows) and call the
//! traits of `crate::api`; no logic of the data source lives here.

pub mod source;

#[cfg(feature = "batch_read")]
pub mod batch_read;
#[cfg(any(feature = "batch_read", feature = "micro_batch_read"))]
pub mod read;
#[cfg(feature = "micro_batch_read")]
pub mod stream_read;
#[cfg(any(feature = "batch_write", feature = "streaming_write"))]
pub mod write;

mod handle;
mod task;
