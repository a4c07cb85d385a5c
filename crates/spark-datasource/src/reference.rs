//! `spark_ds_bench_v1`: the in-process reference of `cargo sparkds bench`.
//!
//! `export!` emits, next to `spark_ds_init`, this second C function. It is not part of
//! `spark_datasource.h` and Spark never calls it: `cargo sparkds bench` looks it up to run the
//! task side of a read or of a write through the safe traits directly, with no Arrow C stream,
//! no guard per batch and no check of the batches, in the same process and the same run as the
//! reads and writes through the interface. The report then shows what the interface costs as a
//! ratio of the two.
//!
//! Why a hidden entry rather than a benchmark binary linking the connector as an rlib: the
//! reference must be the very code that Spark loads (the same `.so`, profile, LTO and
//! allocator), measured side by side in one process with no extra build step, and a generated
//! project must keep only its author's files. The price is one more symbol in the library.
//!
//! The ABI is versioned by the name: a change of [`SparkDsBenchCall`] gets a new name
//! (`spark_ds_bench_v2`), and a host that does not find the name it knows measures no
//! reference. `size` must be the size of version 1.

use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;

use crate::datasource::{DataWriter, Error, Result, TaskContext, Write, Writer};
use crate::ffi::bytes::{borrowed, decode, encode, Tagged};
use crate::ffi::entry::ReadPartition;
use crate::ffi::guard::guard;
use crate::ffi::header::{ArrowArrayStream, SparkDsSink, SPARK_DS_NO_EPOCH};

/// `kind` of a call: read the partition `partition` with the reader `state`.
pub const SPARK_DS_BENCH_READ: i32 = 1;
/// `kind` of a call: run a data writer of the writer `state` over the batches of `input`.
pub const SPARK_DS_BENCH_WRITE: i32 = 2;

/// The argument of `spark_ds_bench_v1`: what to run, and what it counted.
#[repr(C)]
pub struct SparkDsBenchCall {
    /// `sizeof(SparkDsBenchCall)` of version 1.
    pub size: i64,
    /// [`SPARK_DS_BENCH_READ`] or [`SPARK_DS_BENCH_WRITE`].
    pub kind: i32,
    pub stage_id: i32,
    pub partition_id: i32,
    pub attempt_number: i32,
    pub task_id: i64,
    /// The bytes of `serialize_reader`, `serialize_stream_reader` or `serialize_writer`.
    pub state: *const u8,
    pub state_length: i64,
    /// Read: the partition's bytes, as `read` receives them.
    pub partition: *const u8,
    pub partition_length: i64,
    /// Write: the epoch, or `SPARK_DS_NO_EPOCH` for a batch write.
    pub epoch_id: i64,
    /// Write: the batches to write, pulled outside of the measured time; the call releases it.
    pub input: *mut ArrowArrayStream,
    /// Write: receives the commit message of the data writer.
    pub add: Option<SparkDsSink>,
    pub sink: *mut c_void,
    /// Out: the rows, batches and bytes of Arrow buffers read or written.
    pub rows: i64,
    pub batches: i64,
    pub bytes: i64,
    /// Out: the nanoseconds spent in the connector's code (for a write, without the pulls of
    /// `input`).
    pub nanos: i64,
}

/// Runs a write task in process: [`BenchTable::write`] of a source that declares a write.
pub type WriteTask = fn(
    &[u8],
    &TaskContext,
    Option<u64>,
    &mut dyn FnMut() -> Option<Result<RecordBatch>>,
    &mut Counts,
) -> Result<Vec<u8>>;

/// What `export!` gives `spark_ds_bench_v1`: how to read or write a task of each declared
/// capability.
pub struct BenchTable {
    read_batch: Option<ReadPartition>,
    read_stream: Option<ReadPartition>,
    write: Option<WriteTask>,
}

impl BenchTable {
    /// No capability yet.
    pub const NONE: BenchTable = BenchTable {
        read_batch: None,
        read_stream: None,
        write: None,
    };

    pub const fn with_read_batch(self, read: ReadPartition) -> Self {
        BenchTable {
            read_batch: Some(read),
            ..self
        }
    }

    pub const fn with_read_stream(self, read: ReadPartition) -> Self {
        BenchTable {
            read_stream: Some(read),
            ..self
        }
    }

    pub const fn with_write(self, write: WriteTask) -> Self {
        BenchTable {
            write: Some(write),
            ..self
        }
    }
}

/// What a task counted.
#[derive(Default)]
pub struct Counts {
    rows: u64,
    batches: u64,
    bytes: u64,
    time: Duration,
}

impl Counts {
    fn add(&mut self, batch: &RecordBatch) {
        self.rows += batch.num_rows() as u64;
        self.batches += 1;
        self.bytes += batch
            .columns()
            .iter()
            .map(|column| buffer_bytes(&column.to_data()))
            .sum::<u64>();
    }
}

/// The sum of the sizes of the buffers of an array and of its children, as the host counts
/// those it imports.
fn buffer_bytes(data: &ArrayData) -> u64 {
    let own: usize = data.buffers().iter().map(|b| b.len()).sum();
    let nulls = data.nulls().map_or(0, |n| n.buffer().len());
    (own + nulls) as u64 + data.child_data().iter().map(buffer_bytes).sum::<u64>()
}

/// `spark_ds_bench_v1`.
///
/// # Safety
/// `call` is valid for reads and writes, its byte arrays readable for their lengths, `input`
/// a live stream moved to the call (for a write), `add` and `sink` the host's sink.
pub unsafe fn bench(table: &BenchTable, call: *mut SparkDsBenchCall) -> c_int {
    guard("spark_ds_bench_v1", || {
        // SAFETY: the caller's contract.
        let call = unsafe { call.as_mut() }.ok_or_else(|| Error::msg("the call is NULL"))?;
        if call.size != std::mem::size_of::<SparkDsBenchCall>() as i64 {
            return Err(Error::msg(format!(
                "the call is {} bytes, not the {} of spark_ds_bench_v1",
                call.size,
                std::mem::size_of::<SparkDsBenchCall>()
            )));
        }
        let task = TaskContext::new(
            (
                call.task_id,
                call.stage_id,
                call.partition_id,
                call.attempt_number,
            ),
            Box::new(|| false),
        );
        // SAFETY: the caller's contract.
        let state = unsafe { borrowed("state", call.state, call.state_length) }?;
        let mut counts = Counts::default();
        match call.kind {
            SPARK_DS_BENCH_READ => {
                // SAFETY: the caller's contract.
                let partition =
                    unsafe { borrowed("partition", call.partition, call.partition_length) }?;
                read(table, state, partition, &task, &mut counts)?;
            }
            SPARK_DS_BENCH_WRITE => {
                // SAFETY: the caller's contract: the stream is the call's.
                let mut input = unsafe { input(call.input) }?;
                let write = table.write.ok_or_else(|| {
                    Error::msg("this data source declares no write: there is no write to run")
                })?;
                let epoch = match call.epoch_id {
                    SPARK_DS_NO_EPOCH => None,
                    id => Some(
                        u64::try_from(id)
                            .map_err(|_| Error::msg(format!("the epoch ID {id} is negative")))?,
                    ),
                };
                let mut next = || input.next().map(|batch| batch.map_err(Error::from));
                let message = write(state, &task, epoch, &mut next, &mut counts)?;
                let add = call
                    .add
                    .ok_or_else(|| Error::msg("the sink of the commit message is NULL"))?;
                // SAFETY: the host's sink copies the bytes during the call.
                unsafe { add(call.sink, message.as_ptr(), message.len() as i64) };
            }
            other => {
                return Err(Error::msg(format!(
                    "unknown kind {other}: 1 reads a partition, 2 writes a task"
                )))
            }
        }
        call.rows = counts.rows as i64;
        call.batches = counts.batches as i64;
        call.bytes = counts.bytes as i64;
        call.nanos = i64::try_from(counts.time.as_nanos()).unwrap_or(i64::MAX);
        Ok(())
    })
}

/// The task of a read, timed from the decoding of the partition to the last batch, each batch
/// counted and dropped.
fn read(
    table: &BenchTable,
    state: &[u8],
    partition: &[u8],
    task: &TaskContext,
    counts: &mut Counts,
) -> Result<()> {
    let start = Instant::now();
    let (read, partition) = match decode::<Tagged<serde_json::Value>>("partition", partition)? {
        Tagged::Batch(partition) => (table.read_batch, partition),
        Tagged::Stream(partition) => (table.read_stream, partition),
    };
    let read = read.ok_or_else(|| {
        Error::msg("the partition belongs to a kind of read that this data source does not declare")
    })?;
    for batch in read(state, partition, task)? {
        counts.add(&batch?);
    }
    counts.time = start.elapsed();
    Ok(())
}

/// Takes the stream of the batches to write.
///
/// # Safety
/// `input` is null or a live stream moved to the caller.
unsafe fn input(input: *mut ArrowArrayStream) -> Result<RecordBatchStreamReader> {
    if input.is_null() {
        return Err(Error::msg("the input stream is NULL"));
    }
    // SAFETY: the header's `ArrowArrayStream` has the layout of arrow-rs's; `from_raw` moves
    // the stream out and marks the host's struct released.
    unsafe { RecordBatchStreamReader::from_raw(input.cast::<FFI_ArrowArrayStream>()) }
        .map_err(Error::from)
}

/// A write task in process: [`BenchTable::with_write`] of a source that declares a write. Only
/// the data writer's calls are timed, not the pulls of the batches.
///
/// # Errors
/// The state cannot be decoded, or the data writer's own error.
pub fn write_task<S: Write>(
    state: &[u8],
    task: &TaskContext,
    epoch: Option<u64>,
    next: &mut dyn FnMut() -> Option<Result<RecordBatch>>,
    counts: &mut Counts,
) -> Result<Vec<u8>> {
    let start = Instant::now();
    let writer: <S as Write>::Writer = decode("writer state", state)?;
    let mut data_writer = writer.data_writer(task, epoch)?;
    let mut time = start.elapsed();
    let written = (|| {
        while let Some(batch) = next() {
            let batch = batch?;
            counts.add(&batch);
            let start = Instant::now();
            data_writer.write(batch)?;
            time += start.elapsed();
        }
        Ok(())
    })();
    if let Err(error) = written {
        // As Spark does with a failed task: the data writer cleans up what it wrote.
        let _ = data_writer.abort();
        return Err(error);
    }
    let start = Instant::now();
    let message = encode(&data_writer.commit()?)?;
    counts.time = time + start.elapsed();
    Ok(message)
}
