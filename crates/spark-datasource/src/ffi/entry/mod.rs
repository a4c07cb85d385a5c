//! The exported functions of the table: each one a shim that runs its body through the guard,
//! generic over the source and over [`Export`], what `export!` knows of it.
//! The bodies turn pointers into Rust values (with the checks the header allows) and call the
//! traits of `crate::datasource`; no logic of the data source lives here.

pub mod source;

pub mod batch_read;
pub mod partition_read;
pub mod push_filters;
pub mod stream_read;
pub mod write;

mod task;

use crate::datasource::{Batches, Result, TaskContext};

/// Reads one partition on an executor, from the serialized reader and the partition.
pub type ReadPartition = fn(&[u8], serde_json::Value, &TaskContext) -> Result<Batches>;

/// What `export!` knows of the exported source, as a type that the entry points are generic
/// over: the capabilities it declares, and how `read` reads a partition of each kind of read.
pub trait Export: 'static {
    /// The `SPARK_DS_*` capability bits that `create` returns.
    const CAPABILITIES: u64;
    /// Reads a partition that a batch reader planned, when the source declares batch reads.
    const READ_BATCH: Option<ReadPartition> = None;
    /// Reads a partition of a micro-batch, when the source declares micro-batch reads.
    const READ_STREAM: Option<ReadPartition> = None;
}
