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

use std::ffi::c_int;
use std::time::{Duration, Instant};

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;

use crate::datasource::{DataWriter, Error, Result, TaskContext, Write, Writer};
use crate::ffi::bytes::{borrowed, decode, encode, Tagged};
use crate::ffi::entry::ReadPartition;
use crate::ffi::guard::guard;
use spark_datasource_abi::bench::{SparkDsBenchCall, SPARK_DS_BENCH_READ, SPARK_DS_BENCH_WRITE};
use spark_datasource_abi::v1::SPARK_DS_NO_EPOCH;

/// Runs a write task in process: [`BenchTable::write`] of a source that declares a write. It
/// takes the input stream itself, so that only a library that writes has the code that imports
/// Arrow arrays (every array type of arrow-array: a quarter of a read-only library's size).
pub type WriteTask = unsafe fn(
    &[u8],
    &TaskContext,
    Option<u64>,
    *mut FFI_ArrowArrayStream,
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
    guard(|| {
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
                let epoch = match call.epoch_id {
                    SPARK_DS_NO_EPOCH => Ok(None),
                    id => u64::try_from(id)
                        .map(Some)
                        .map_err(|_| Error::msg(format!("the epoch ID {id} is negative"))),
                };
                let input = call.input.cast::<FFI_ArrowArrayStream>();
                let (Some(write), Ok(epoch)) = (table.write, &epoch) else {
                    // SAFETY: the caller's contract: the stream is the call's.
                    unsafe { release(input) };
                    epoch?;
                    return Err(Error::msg(
                        "this data source declares no write: there is no write to run",
                    ));
                };
                // SAFETY: the caller's contract: the stream is the call's.
                let message = unsafe { write(state, &task, *epoch, input, &mut counts) }?;
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
unsafe fn input_stream(input: *mut FFI_ArrowArrayStream) -> Result<RecordBatchStreamReader> {
    if input.is_null() {
        return Err(Error::msg("the input stream is NULL"));
    }
    // SAFETY: the header's `ArrowArrayStream` has the layout of arrow-rs's; `from_raw` moves
    // the stream out and marks the host's struct released.
    unsafe { RecordBatchStreamReader::from_raw(input.cast::<FFI_ArrowArrayStream>()) }
        .map_err(Error::from)
}

/// Releases the input stream of a write that does not run.
///
/// # Safety
/// `input` is null or a live stream moved to the caller.
unsafe fn release(input: *mut FFI_ArrowArrayStream) {
    if !input.is_null() {
        // SAFETY: the contract; `from_raw` moves the stream out, and dropping it releases it.
        drop(unsafe { FFI_ArrowArrayStream::from_raw(input) });
    }
}

/// A write task in process: [`BenchTable::with_write`] of a source that declares a write. Only
/// the data writer's calls are timed, not the pulls of the batches.
///
/// # Errors
/// The state cannot be decoded, or the data writer's own error.
///
/// # Safety
/// `input` is null or a live stream moved to the call.
pub unsafe fn write_task<S: Write>(
    state: &[u8],
    task: &TaskContext,
    epoch: Option<u64>,
    input: *mut FFI_ArrowArrayStream,
    counts: &mut Counts,
) -> Result<Vec<u8>> {
    // SAFETY: this function's contract.
    let mut input = unsafe { input_stream(input) }?;
    let mut next = || input.next().map(|batch| batch.map_err(Error::from));
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

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatchIterator};
    use arrow_schema::{DataType, Field, Schema, SchemaRef};
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::datasource::{BatchRead, BatchReader, Batches, DataSource, Options, WriteInfo};
    use crate::ffi::entry::partition_read::read_batch;
    use crate::ffi::guard::last_error;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]))
    }

    fn ids(range: std::ops::Range<i64>) -> RecordBatch {
        RecordBatch::try_new(
            schema(),
            vec![Arc::new(Int64Array::from_iter_values(range))],
        )
        .expect("a batch")
    }

    /// Reads `[0, rows)` in batches of 4; its data writers count rows, and refuse a batch of
    /// more than 4.
    struct Counting;

    impl DataSource for Counting {
        fn create(_name: &str, _options: Options) -> Result<Self> {
            Ok(Counting)
        }

        fn schema(&self) -> Result<SchemaRef> {
            Ok(schema())
        }
    }

    impl BatchRead for Counting {
        type Reader = Reader;

        fn reader(&self, _schema: SchemaRef) -> Result<Reader> {
            Ok(Reader { rows: 10 })
        }
    }

    #[derive(Serialize, Deserialize)]
    struct Reader {
        rows: i64,
    }

    impl BatchReader for Reader {
        type Partition = ();

        fn partitions(&self) -> Result<Vec<()>> {
            Ok(vec![()])
        }

        fn read(&self, _partition: (), _task: &TaskContext) -> Result<Batches> {
            let rows = self.rows;
            let batches = (0..rows)
                .step_by(4)
                .map(move |s| Ok(ids(s..(s + 4).min(rows))));
            Ok(Batches::new(schema(), batches))
        }
    }

    impl Write for Counting {
        type Writer = Reader;

        fn writer(&self, _info: WriteInfo) -> Result<Reader> {
            Ok(Reader { rows: 0 })
        }
    }

    impl Writer for Reader {
        type Message = i64;
        type DataWriter = Reader;

        fn data_writer(&self, _task: &TaskContext, _epoch: Option<u64>) -> Result<Reader> {
            Ok(Reader { rows: 0 })
        }

        fn commit(&mut self, _epoch: Option<u64>, _messages: Vec<i64>) -> Result<()> {
            Ok(())
        }

        fn abort(&mut self, _epoch: Option<u64>, _messages: Vec<Option<i64>>) -> Result<()> {
            Ok(())
        }
    }

    impl DataWriter for Reader {
        type Message = i64;

        fn write(&mut self, batch: RecordBatch) -> Result<()> {
            if batch.num_rows() > 4 {
                return Err(Error::msg("a batch of more than 4 rows"));
            }
            self.rows += batch.num_rows() as i64;
            Ok(())
        }

        fn commit(&mut self) -> Result<i64> {
            Ok(self.rows)
        }

        fn abort(&mut self) -> Result<()> {
            Ok(())
        }
    }

    const TABLE: BenchTable = BenchTable::NONE
        .with_read_batch(read_batch::<Counting>)
        .with_write(write_task::<Counting>);

    fn call(kind: i32, state: &[u8]) -> SparkDsBenchCall {
        SparkDsBenchCall::new(kind, [0, 0, 0], 1, Some(state))
    }

    fn last_message() -> String {
        // SAFETY: `last_error` returns this thread's message, valid until the next failure.
        unsafe { CStr::from_ptr(last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_read_in_process_counts_its_rows_batches_and_bytes() {
        let state = encode(&Reader { rows: 10 }).expect("state");
        let partition = encode(&Tagged::Batch(())).expect("partition");
        let mut call = call(SPARK_DS_BENCH_READ, &state);
        call.partition = partition.as_ptr();
        call.partition_length = partition.len() as i64;
        // SAFETY: the call and its bytes live for the call.
        assert_eq!(unsafe { bench(&TABLE, &mut call) }, 0, "{}", last_message());
        assert_eq!((call.rows, call.batches), (10, 3));
        // Three buffers of 4, 4 and 2 numbers, at least.
        assert!(call.bytes >= 80, "{}", call.bytes);
    }

    #[test]
    fn a_partition_of_an_undeclared_read_is_an_error_not_a_panic() {
        let state = encode(&Reader { rows: 10 }).expect("state");
        let partition = encode(&Tagged::Stream(())).expect("partition");
        let mut call = call(SPARK_DS_BENCH_READ, &state);
        call.partition = partition.as_ptr();
        call.partition_length = partition.len() as i64;
        // SAFETY: as above.
        assert_eq!(unsafe { bench(&TABLE, &mut call) }, 1);
        assert!(
            last_message().contains("does not declare"),
            "{}",
            last_message()
        );
        call.size = 8;
        // SAFETY: as above.
        assert_eq!(unsafe { bench(&TABLE, &mut call) }, 1);
        assert!(
            last_message().contains("the call is 8 bytes"),
            "{}",
            last_message()
        );
    }

    extern "C" fn keep(sink: *mut std::ffi::c_void, data: *const u8, length: i64) {
        // SAFETY: `sink` is the test's `Vec<u8>`; the bytes are readable for the call.
        unsafe {
            (*sink.cast::<Vec<u8>>())
                .extend_from_slice(std::slice::from_raw_parts(data, length as usize));
        }
    }

    fn write(batches: Vec<RecordBatch>) -> (c_int, SparkDsBenchCall, Vec<u8>) {
        let state = encode(&Reader { rows: 0 }).expect("state");
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema());
        let mut input = FFI_ArrowArrayStream::new(Box::new(reader));
        let mut message = Vec::new();
        let mut call = call(SPARK_DS_BENCH_WRITE, &state);
        call.input = (&mut input as *mut FFI_ArrowArrayStream).cast();
        call.add = Some(keep);
        call.sink = (&mut message as *mut Vec<u8>).cast();
        // SAFETY: the call, its bytes, the stream and the sink live for the call.
        let rc = unsafe { bench(&TABLE, &mut call) };
        (rc, call, message)
    }

    #[test]
    fn a_write_in_process_counts_its_rows_and_returns_the_commit_message() {
        let (rc, call, message) = write(vec![ids(0..4), ids(4..8), ids(8..9)]);
        assert_eq!(rc, 0, "{}", last_message());
        assert_eq!((call.rows, call.batches), (9, 3));
        assert_eq!(message, b"9");
    }

    #[test]
    fn a_failing_data_writer_is_an_error_with_its_message() {
        let (rc, _, message) = write(vec![ids(0..4), ids(0..5)]);
        assert_eq!(rc, 1);
        assert!(message.is_empty());
        assert!(
            last_message().contains("a batch of more than 4 rows"),
            "{}",
            last_message()
        );
    }
}
