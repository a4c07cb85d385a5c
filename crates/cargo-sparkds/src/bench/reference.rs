//! The in-process reference: `spark_ds_bench_v1`, which a library built with `export!` exports
//! outside the header, runs the task side of a read or a write through the connector's traits,
//! with no Arrow C stream, no guard per batch and no checks, and counts what it did.

use std::time::{Duration, Instant};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::{ArrowError, SchemaRef};
use spark_datasource_abi::bench::{SparkDsBenchCall, SPARK_DS_BENCH_READ, SPARK_DS_BENCH_WRITE};
use sparkds::steps::TaskIds;
use sparkds::{Error, Library, Result};

use super::counts::Counts;

/// The name of the reference's function, as the library exports it.
pub(super) const REFERENCE: &str = "spark_ds_bench_v1";

/// The read of one partition in process.
pub(super) fn read(
    library: &Library,
    ids: TaskIds,
    state: Option<&[u8]>,
    partition: &[u8],
    counts: &mut Counts,
) -> Result<()> {
    let mut call = new_call(SPARK_DS_BENCH_READ, ids, state);
    call.partition = partition.as_ptr();
    call.partition_length = partition.len() as i64;
    run(library, &mut call, ids, counts)?;
    Ok(())
}

/// One write task in process: `batches` moved to it as one stream; its commit message.
pub(super) fn write(
    library: &Library,
    ids: TaskIds,
    state: &[u8],
    schema: SchemaRef,
    batches: impl Iterator<Item = RecordBatch> + Send + 'static,
    counts: &mut Counts,
) -> Result<Vec<u8>> {
    let mut call = new_call(SPARK_DS_BENCH_WRITE, ids, Some(state));
    let input = RecordBatchIterator::new(batches.map(Ok::<_, ArrowError>), schema);
    let mut input = FFI_ArrowArrayStream::new(Box::new(input));
    call.input = &mut input;
    let messages = run(library, &mut call, ids, counts)?;
    let given = messages.len();
    <[Vec<u8>; 1]>::try_from(messages)
        .map(|[message]| message)
        .map_err(|_| {
            Error::usage(format!(
                "{REFERENCE} passed {given} commit messages for a write task, where one was expected; rebuild the library with this version of the SDK"
            ))
        })
}

/// Calls the reference and adds what it counted: the connector's time is the library's, the
/// rest of the call's is left out of the measure.
fn run(
    library: &Library,
    call: &mut SparkDsBenchCall,
    ids: TaskIds,
    counts: &mut Counts,
) -> Result<Vec<Vec<u8>>> {
    let Some(entry) = library.bench_entry() else {
        return Err(Error::usage(format!(
            "the library does not export {REFERENCE}; build it with spark_datasource::export!"
        )));
    };
    let context = format!("task {}", ids.partition_id);
    let started = Instant::now();
    let messages = library.call_extension(REFERENCE, Some(&context), |add, sink| {
        call.add = Some(add);
        call.sink = sink;
        // SAFETY: the call and what it points to are borrowed for the call; a write's input
        // stream is moved to the library.
        unsafe { entry(call) }
    })?;
    let connector = Duration::from_nanos(call.nanos.max(0) as u64);
    counts.rows += call.rows.max(0) as u64;
    counts.batches += call.batches.max(0) as u64;
    counts.bytes += call.bytes.max(0) as u64;
    counts.library += connector;
    counts.outside += started.elapsed().saturating_sub(connector);
    Ok(messages)
}

/// A call of `kind` for the task `ids`, with the serialized reader or writer `state`.
fn new_call(kind: i32, ids: TaskIds, state: Option<&[u8]>) -> SparkDsBenchCall {
    let task = [ids.stage_id, ids.partition_id, ids.attempt_number];
    SparkDsBenchCall::new(kind, task, ids.task_id, state)
}
