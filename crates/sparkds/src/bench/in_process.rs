//! `spark_ds_bench_v1`: the task side of a read or write run in process through the
//! connector's traits, which a library built with `export!` exports outside the header.

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::time::Duration;

use crate::header::{self, ArrowArrayStream};
use crate::task::Task;

use super::counts::Counts;

/// `SparkDsBenchCall` of the `spark_datasource` crate, version 1: what `spark_ds_bench_v1`
/// runs, and what it counted.
#[repr(C)]
pub(super) struct BenchCall {
    pub(super) size: i64,
    pub(super) kind: i32,
    pub(super) stage_id: i32,
    pub(super) partition_id: i32,
    pub(super) attempt_number: i32,
    pub(super) task_id: i64,
    pub(super) state: *const u8,
    pub(super) state_length: i64,
    pub(super) partition: *const u8,
    pub(super) partition_length: i64,
    pub(super) epoch_id: i64,
    pub(super) input: *mut ArrowArrayStream,
    pub(super) add: Option<header::Sink>,
    pub(super) sink: *mut c_void,
    pub(super) rows: i64,
    pub(super) batches: i64,
    pub(super) bytes: i64,
    pub(super) nanos: i64,
}

/// `kind` of a [`BenchCall`] that reads a partition.
pub(super) const BENCH_READ: i32 = 1;
/// `kind` of a [`BenchCall`] that runs a write task.
pub(super) const BENCH_WRITE: i32 = 2;

/// The type of `spark_ds_bench_v1`.
pub(super) type BenchFunction = unsafe extern "C" fn(*mut BenchCall) -> c_int;

impl BenchCall {
    /// A call of `kind` for the task `task`, with the serialized reader or writer `state`.
    pub(super) fn new(kind: i32, task: &Task, state: Option<&[u8]>) -> BenchCall {
        // SAFETY: the task's context is alive for this borrow.
        let context = unsafe { &*task.as_ptr() };
        let (state, state_length) =
            state.map_or((std::ptr::null(), 0), |s| (s.as_ptr(), s.len() as i64));
        BenchCall {
            size: std::mem::size_of::<BenchCall>() as i64,
            kind,
            stage_id: context.stage_id,
            partition_id: context.partition_id,
            attempt_number: context.attempt_number,
            task_id: context.task_id,
            state,
            state_length,
            partition: std::ptr::null(),
            partition_length: 0,
            epoch_id: header::SPARK_DS_NO_EPOCH,
            input: std::ptr::null_mut(),
            add: None,
            sink: std::ptr::null_mut(),
            rows: 0,
            batches: 0,
            bytes: 0,
            nanos: 0,
        }
    }

    /// Adds what the call counted; `call` is the time the whole call took, of which the
    /// connector's share is the library's and the rest is left out of the measure.
    pub(super) fn count(&self, counts: &mut Counts, call: Duration) {
        let connector = Duration::from_nanos(self.nanos.max(0) as u64);
        counts.rows += self.rows.max(0) as u64;
        counts.batches += self.batches.max(0) as u64;
        counts.bytes += self.bytes.max(0) as u64;
        counts.library += connector;
        counts.outside += call.saturating_sub(connector);
    }
}

/// The library's `spark_ds_bench_v1`, when it has one.
pub(super) fn reference_entry(path: &Path) -> Option<BenchFunction> {
    // SAFETY: `Library::load` loaded this file already and never unloads it: this only takes
    // another reference to the same loaded library, whose initializers have run.
    let loaded = unsafe { libloading::Library::new(path) }.ok()?;
    // SAFETY: `spark_ds_bench_v1` has the type `BenchFunction` (the `spark_datasource` crate's
    // `bench_entry` module); the name carries the version of `BenchCall`.
    let entry = unsafe { loaded.get::<BenchFunction>(b"spark_ds_bench_v1\0") }
        .ok()
        .map(|symbol| *symbol);
    // Never unloaded, as `Library::load` does: the function stays valid for the process.
    std::mem::forget(loaded);
    entry
}
