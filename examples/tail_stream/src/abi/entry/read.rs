//! `read`, on an executor: the one function that reads both the partitions of batch reads
//! and those of micro-batches. It receives only bytes: the serialized reader and the
//! partition, tagged with the kind of reader that planned it.

use std::ffi::c_int;

use serde::de::DeserializeOwned;

use super::task::{interrupt_check, task_context};
use crate::abi::bytes::{borrowed, decode, Tagged};
use crate::abi::ffi::{ArrowArrayStream, SparkDsTaskContext};
use crate::abi::guard::guard;
use crate::abi::stream::export;
#[cfg(feature = "batch_read")]
use crate::api::{BatchRead, BatchReader};
use crate::api::{Batches, Error, Result, TaskContext};
#[cfg(feature = "micro_batch_read")]
use crate::api::{StreamRead, StreamReader};

/// The read capabilities that the data source declares, as one bound.
#[cfg(all(feature = "batch_read", feature = "micro_batch_read"))]
pub trait Readable: BatchRead + StreamRead {}
#[cfg(all(feature = "batch_read", feature = "micro_batch_read"))]
impl<S: BatchRead + StreamRead> Readable for S {}
/// The read capabilities that the data source declares, as one bound.
#[cfg(all(feature = "batch_read", not(feature = "micro_batch_read")))]
pub trait Readable: BatchRead {}
#[cfg(all(feature = "batch_read", not(feature = "micro_batch_read")))]
impl<S: BatchRead> Readable for S {}
/// The read capabilities that the data source declares, as one bound.
#[cfg(all(not(feature = "batch_read"), feature = "micro_batch_read"))]
pub trait Readable: StreamRead {}
#[cfg(all(not(feature = "batch_read"), feature = "micro_batch_read"))]
impl<S: StreamRead> Readable for S {}

/// `read`.
///
/// # Safety
/// As `read` of `spark_datasource.h`: `task` valid until the returned stream is released,
/// the byte arrays readable for the call, `out` valid for writes.
pub unsafe extern "C" fn read<S: Readable>(
    task: *const SparkDsTaskContext,
    reader_state: *const u8,
    reader_state_length: i64,
    partition: *const u8,
    partition_length: i64,
    out: *mut ArrowArrayStream,
) -> c_int {
    guard("read", || {
        // SAFETY: forwarded contract.
        let (context, state, partition) = unsafe {
            (
                task_context(task)?,
                borrowed("reader state", reader_state, reader_state_length)?,
                borrowed("partition", partition, partition_length)?,
            )
        };
        let batches = read_partition::<S>(&context, state, partition)?;
        // SAFETY: forwarded contract: `task` outlives the stream, `out` is valid for writes.
        unsafe { export(batches, interrupt_check(task), out) }
    })
}

fn read_partition<S: Readable>(
    task: &TaskContext,
    state: &[u8],
    partition: &[u8],
) -> Result<Batches> {
    if state.is_empty() {
        return Err(Error::msg(
            "the reader state is empty: pass the bytes that serialize_reader returned",
        ));
    }
    match decode::<Tagged<serde_json::Value>>("partition", partition)? {
        #[cfg(feature = "batch_read")]
        Tagged::Batch(partition) => {
            let reader: <S as BatchRead>::Reader = decode("reader state", state)?;
            reader.read(from_value("partition", partition)?, task)
        }
        #[cfg(feature = "micro_batch_read")]
        Tagged::Stream(partition) => {
            let reader: <S as StreamRead>::Reader = decode("stream reader state", state)?;
            reader.read(from_value("partition", partition)?, task)
        }
        #[allow(unreachable_patterns)]
        _ => Err(Error::msg(
            "the partition belongs to a kind of read that this data source does not declare",
        )),
    }
}

fn from_value<T: DeserializeOwned>(what: &'static str, value: serde_json::Value) -> Result<T> {
    serde_json::from_value(value).map_err(|source| Error::Decode { what, source })
}
