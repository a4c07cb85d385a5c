//! Many tasks at once on one loaded library, as the threads of an executor run them: reads of
//! many partitions, several streams, many data writers of one write, and `is_interrupted`
//! flipping in the middle of reads. Every result must equal the one of a sequential run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use spark_datasource_abi::v1::{SPARK_DS_NO_EPOCH, SPARK_DS_WRITE_APPEND};
use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::Int64Type;
use sparkds::arrow_array::{Array, RecordBatch};

use crate::generated_input::{library, sample_batch, source_schema, NAME};
use crate::helpers::build_dir;
use crate::raw::{task, Raw};

/// Threads at once (an executor runs a task per core; more threads than cores on purpose).
const THREADS: usize = 16;

type Row = (i64, Option<String>);

/// The rows of batches of the sample's schema (`id`, `label`).
fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    let mut rows = Vec::new();
    for batch in batches {
        let ids = batch
            .column_by_name("id")
            .expect("an id column")
            .as_primitive::<Int64Type>();
        let labels = batch.column_by_name("label").map(|c| c.as_string::<i32>());
        for i in 0..batch.num_rows() {
            let label = labels.and_then(|l| l.is_valid(i).then(|| l.value(i).to_string()));
            rows.push((ids.value(i), label));
        }
    }
    rows
}

fn options(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn read_partition(raw: &Raw, state: &[u8], partition: &[u8], index: usize) -> Vec<Row> {
    let task = task(index as i64, index as i32, None);
    rows_of(
        &raw.read(&task, state, partition, usize::MAX)
            .unwrap_or_else(|e| panic!("read of partition {index}: {e}")),
    )
}

#[test]
fn many_partitions_read_at_once_give_the_sequential_rows() {
    let raw = library();
    let options = options(&[
        ("num_partitions", THREADS.to_string()),
        ("end", "4000".to_string()),
        ("batch_rows", "7".to_string()),
    ]);
    let (state, partitions) = raw.plan_batch_read(NAME, &options);
    assert_eq!(partitions.len(), THREADS);
    let sequential: Vec<Vec<Row>> = partitions
        .iter()
        .enumerate()
        .map(|(i, p)| read_partition(raw, &state, p, i))
        .collect();
    let total: usize = sequential.iter().map(Vec::len).sum();
    assert!(total > 0, "the partitions hold rows");
    // Three rounds of every partition at once: the tasks of a stage, then retries.
    for round in 0..3 {
        let concurrent: Vec<Vec<Row>> = thread::scope(|scope| {
            let handles: Vec<_> = partitions
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let state = &state;
                    scope.spawn(move || read_partition(raw, state, p, i))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a reading thread"))
                .collect()
        });
        assert!(
            concurrent == sequential,
            "round {round}: {THREADS} partitions read at once differ from the sequential read"
        );
    }
    println!("concurrency: {THREADS} partitions x 3 rounds at once, {total} rows each round, same as sequential");
}

/// The rows of the first micro-batches of a stream, planned and read on one thread.
fn stream_rows(raw: &Raw, micro_batches: usize) -> Vec<Row> {
    let (source, reader, state) = raw.open_stream(
        NAME,
        &options(&[("rows_per_micro_batch", "25".to_string())]),
    );
    let mut start = raw.initial_offset(reader).expect("initial_offset");
    let mut rows = Vec::new();
    for _ in 0..micro_batches {
        let end = raw.latest_offset(reader, &start).expect("latest_offset");
        let partitions = raw
            .stream_partitions(reader, &start, &end)
            .expect("stream_partitions");
        for (i, partition) in partitions.iter().enumerate() {
            rows.extend(read_partition(raw, &state, partition, i));
        }
        raw.commit_offset(reader, &end).expect("commit_offset");
        start = end;
    }
    raw.close_stream_reader(reader);
    raw.close(source);
    rows
}

#[test]
fn several_streams_at_once_give_the_sequential_rows() {
    let raw = library();
    let sequential = stream_rows(raw, 5);
    assert!(!sequential.is_empty(), "the stream has rows");
    let concurrent: Vec<Vec<Row>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| stream_rows(raw, 5)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a stream thread"))
            .collect()
    });
    for (i, rows) in concurrent.iter().enumerate() {
        assert!(
            rows == &sequential,
            "stream {i} read other rows than the sequential one"
        );
    }
    println!(
        "concurrency: 8 streams of 5 micro-batches at once, {} rows each, same as sequential",
        sequential.len()
    );
}

/// A batch write of `tasks` data writers, on threads when `threads`, then the table read back.
fn write_then_read(raw: &Raw, tasks: usize, threads: bool) -> Vec<Row> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = build_dir().join(format!(
        "concurrent-write-{}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("a table directory");
    let path = options(&[("path", dir.display().to_string())]);
    let schema = source_schema(raw);
    let source = raw.create(NAME, &path).expect("create");
    let writer = raw
        .create_writer(source, &schema, SPARK_DS_WRITE_APPEND, false)
        .expect("create_writer");
    let state = raw.serialize_writer(writer).expect("serialize_writer");
    let write_task = |i: usize| -> Vec<u8> {
        let task = task(100 + i as i64, i as i32, None);
        let data_writer = raw
            .create_data_writer(&task, &state, SPARK_DS_NO_EPOCH)
            .expect("create_data_writer");
        for part in 0..3 {
            let batch = sample_batch(&schema, (i * 1000 + part * 20) as i64, 20);
            raw.write(data_writer, &batch).expect("write");
        }
        let message = raw
            .commit_data_writer(data_writer)
            .expect("commit_data_writer");
        raw.close_data_writer(data_writer);
        message
    };
    let messages: Vec<Vec<u8>> = if threads {
        thread::scope(|scope| {
            let handles: Vec<_> = (0..tasks)
                .map(|i| scope.spawn(move || write_task(i)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a writing thread"))
                .collect()
        })
    } else {
        (0..tasks).map(write_task).collect()
    };
    raw.commit(writer, SPARK_DS_NO_EPOCH, &messages)
        .expect("commit");
    raw.close_writer(writer);
    raw.close(source);
    let (state, partitions) = raw.plan_batch_read(NAME, &path);
    let mut rows: Vec<Row> = partitions
        .iter()
        .enumerate()
        .flat_map(|(i, p)| read_partition(raw, &state, p, i))
        .collect();
    rows.sort();
    rows
}

#[test]
fn many_data_writers_of_one_write_at_once_write_what_a_sequential_write_does() {
    let raw = library();
    let sequential = write_then_read(raw, THREADS, false);
    assert_eq!(sequential.len(), THREADS * 60, "every row written, once");
    let concurrent = write_then_read(raw, THREADS, true);
    assert!(
        concurrent == sequential,
        "{THREADS} data writers at once wrote other rows"
    );
    let mut ids: Vec<i64> = concurrent.iter().map(|(id, _)| *id).collect();
    ids.dedup();
    assert_eq!(ids.len(), concurrent.len(), "no row twice");
    println!("concurrency: {THREADS} data writers of one write at once, {} rows read back, same as sequential", concurrent.len());
}

#[test]
fn interrupts_flipping_mid_read_stop_tasks_without_wrong_rows() {
    let raw = library();
    let options = options(&[
        ("num_partitions", THREADS.to_string()),
        ("end", "20000".to_string()),
        ("batch_rows", "3".to_string()),
    ]);
    let (state, partitions) = raw.plan_batch_read(NAME, &options);
    let full: Vec<Vec<Row>> = partitions
        .iter()
        .enumerate()
        .map(|(i, p)| read_partition(raw, &state, p, i))
        .collect();
    let flags: Vec<Arc<AtomicBool>> = (0..THREADS)
        .map(|_| Arc::new(AtomicBool::new(false)))
        .collect();
    let outcomes: Vec<(usize, bool)> = thread::scope(|scope| {
        let handles: Vec<_> = partitions
            .iter()
            .enumerate()
            .map(|(i, partition)| {
                let (state, flag, full) = (&state, flags[i].clone(), &full[i]);
                scope.spawn(move || {
                    let task = task(i as i64, i as i32, Some(&flag));
                    match raw.read(&task, state, partition, usize::MAX) {
                        Ok(batches) => {
                            let rows = rows_of(&batches);
                            // Stopped early or not, what was read is the start of the partition.
                            assert!(
                                full.starts_with(&rows),
                                "partition {i}: an interrupted read returned rows the full read does not start with"
                            );
                            (rows.len(), true)
                        }
                        // A killed task may also fail its stream, with a message.
                        Err(message) => {
                            assert!(!message.is_empty());
                            (0, false)
                        }
                    }
                })
            })
            .collect();
        // Flip the tasks' flags one after the other while they read.
        for (i, flag) in flags.iter().enumerate() {
            thread::sleep(Duration::from_micros(200 * i as u64));
            flag.store(true, Ordering::SeqCst);
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("a reading thread"))
            .collect()
    });
    // A task killed before it starts reads (almost) nothing: the flag is honoured at all.
    let killed = AtomicBool::new(true);
    let early = raw.read(
        &task(99, 0, Some(&killed)),
        &state,
        &partitions[0],
        usize::MAX,
    );
    if let Ok(batches) = early {
        let rows = rows_of(&batches);
        assert!(
            rows.len() < full[0].len() && full[0].starts_with(&rows),
            "a read whose task was killed before it began returned {} of {} rows",
            rows.len(),
            full[0].len()
        );
    }
    let stopped = outcomes
        .iter()
        .zip(&full)
        .filter(|((rows, _), full)| *rows < full.len())
        .count();
    println!(
        "concurrency: {THREADS} reads interrupted at staggered times, {stopped} stopped before their end, none returned a wrong row"
    );
}
