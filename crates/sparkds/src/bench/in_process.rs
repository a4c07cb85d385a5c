//! `spark_ds_bench_v1`: the task side of a read or write run in process through the
//! connector's traits, which a library built with `export!` exports outside the header.

use std::path::Path;
use std::time::Duration;

use spark_datasource_abi::bench::{SparkDsBenchCall, SparkDsBenchFunction, SPARK_DS_BENCH_SYMBOL};
use spark_datasource_abi::v1::SPARK_DS_NO_EPOCH;

use crate::task::Task;

use super::counts::Counts;

/// A call of `kind` for the task `task`, with the serialized reader or writer `state`.
pub(super) fn new_call(kind: i32, task: &Task, state: Option<&[u8]>) -> SparkDsBenchCall {
    // SAFETY: the task's context is alive for this borrow.
    let context = unsafe { &*task.as_ptr() };
    let (state, state_length) =
        state.map_or((std::ptr::null(), 0), |s| (s.as_ptr(), s.len() as i64));
    SparkDsBenchCall {
        size: std::mem::size_of::<SparkDsBenchCall>() as i64,
        kind,
        stage_id: context.stage_id,
        partition_id: context.partition_id,
        attempt_number: context.attempt_number,
        task_id: context.task_id,
        state,
        state_length,
        partition: std::ptr::null(),
        partition_length: 0,
        epoch_id: SPARK_DS_NO_EPOCH,
        input: std::ptr::null_mut(),
        add: None,
        sink: std::ptr::null_mut(),
        rows: 0,
        batches: 0,
        bytes: 0,
        nanos: 0,
    }
}

/// Adds what `call` counted; `elapsed` is the time the whole call took, of which the
/// connector's share is the library's and the rest is left out of the measure.
pub(super) fn count(call: &SparkDsBenchCall, counts: &mut Counts, elapsed: Duration) {
    let connector = Duration::from_nanos(call.nanos.max(0) as u64);
    counts.rows += call.rows.max(0) as u64;
    counts.batches += call.batches.max(0) as u64;
    counts.bytes += call.bytes.max(0) as u64;
    counts.library += connector;
    counts.outside += elapsed.saturating_sub(connector);
}

/// The library's `spark_ds_bench_v1`, when it has one.
pub(super) fn reference_entry(path: &Path) -> Option<SparkDsBenchFunction> {
    // SAFETY: `Library::load` loaded this file already and never unloads it: this only takes
    // another reference to the same loaded library, whose initializers have run.
    let loaded = unsafe { libloading::Library::new(path) }.ok()?;
    // SAFETY: `spark_ds_bench_v1` has the type `SparkDsBenchFunction`, which the SDK's `export!`
    // emits; the name carries the version of `SparkDsBenchCall`.
    let entry = unsafe { loaded.get::<SparkDsBenchFunction>(SPARK_DS_BENCH_SYMBOL) }
        .ok()
        .map(|symbol| *symbol);
    // Never unloaded, as `Library::load` does: the function stays valid for the process.
    std::mem::forget(loaded);
    entry
}
