//! `read`, on an executor: the one function that reads both the partitions of batch reads
//! and those of micro-batches. It receives only bytes: the serialized reader and the
//! partition, tagged with the kind of reader that planned it.

use std::ffi::c_int;

use serde::de::DeserializeOwned;

use super::task::{interrupt_check, task_context};
use super::Export;
use crate::datasource::{
    BatchRead, BatchReader, Batches, Error, Result, StreamRead, StreamReader, TaskContext,
};
use crate::ffi::array_stream::export;
use crate::ffi::bytes::{borrowed, decode, Tagged};
use crate::ffi::guard::guard;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use spark_datasource_abi::v1::SparkDsTaskContext;

/// `read`.
///
/// # Safety
/// As `read` of `spark_datasource.h`: `task` valid until the returned stream is released,
/// the byte arrays readable for the call, `out` valid for writes.
pub unsafe extern "C" fn read<E: Export>(
    task: *const SparkDsTaskContext,
    reader_state: *const u8,
    reader_state_length: i64,
    partition: *const u8,
    partition_length: i64,
    out: *mut FFI_ArrowArrayStream,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (context, state, partition) = unsafe {
            (
                task_context(task)?,
                borrowed("reader state", reader_state, reader_state_length)?,
                borrowed("partition", partition, partition_length)?,
            )
        };
        let batches = read_partition::<E>(&context, state, partition)?;
        // SAFETY: forwarded contract: `task` outlives the stream, `out` is valid for writes.
        unsafe { export(batches, interrupt_check(task), out) }
    })
}

/// Reads a partition with the reader of the kind of read that planned it.
fn read_partition<E: Export>(
    task: &TaskContext,
    state: &[u8],
    partition: &[u8],
) -> Result<Batches> {
    if state.is_empty() {
        return Err(Error::msg(
            "the reader state is empty: pass the bytes that serialize_reader returned",
        ));
    }
    let (read, partition) = match decode::<Tagged<serde_json::Value>>("partition", partition)? {
        Tagged::Batch(partition) => (E::READ_BATCH, partition),
        Tagged::Stream(partition) => (E::READ_STREAM, partition),
    };
    let read = read.ok_or_else(|| {
        Error::msg("the partition belongs to a kind of read that this data source does not declare")
    })?;
    read(state, partition, task)
}

/// Decodes the serialized reader that the driver sent.
pub fn decode_state<T: DeserializeOwned>(what: &'static str, state: &[u8]) -> Result<T> {
    decode(what, state)
}

/// Decodes a partition, once its tag was read.
pub fn from_value<T: DeserializeOwned>(what: &'static str, value: serde_json::Value) -> Result<T> {
    serde_json::from_value(value).map_err(|source| Error::Decode { what, source })
}

/// Reads a partition of a batch read: [`Export::READ_BATCH`] of a source that declares it.
///
/// # Errors
/// Bytes that this build cannot read, or the reader's own error.
pub fn read_batch<S: BatchRead>(
    state: &[u8],
    partition: serde_json::Value,
    task: &TaskContext,
) -> Result<Batches> {
    let reader: S::Reader = decode_state("reader state", state)?;
    reader.read(from_value("partition", partition)?, task)
}

/// Reads a partition of a micro-batch: [`Export::READ_STREAM`] of a source that declares it.
///
/// # Errors
/// Bytes that this build cannot read, or the reader's own error.
pub fn read_stream<S: StreamRead>(
    state: &[u8],
    partition: serde_json::Value,
    task: &TaskContext,
) -> Result<Batches> {
    let reader: S::Reader = decode_state("stream reader state", state)?;
    reader.read(from_value("partition", partition)?, task)
}
