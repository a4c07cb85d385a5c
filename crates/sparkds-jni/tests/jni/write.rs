use std::sync::{Arc, Mutex};

use arrow_array::{Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Schema};
use spark_datasource_core::library_file::Os;
use sparkds::steps::{Checks, TaskIds};
use sparkds_jni::{descriptor, loaded, ops};

use crate::helpers::{example, fixture, fresh_dir, ipc, options};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]))
}

fn batch(ids: std::ops::Range<i64>) -> RecordBatch {
    let names: Vec<Option<String>> = ids
        .clone()
        .map(|i| (i % 2 == 0).then(|| format!("n{i}")))
        .collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(StringArray::from(names)),
        ],
    )
    .expect("a batch")
}

/// Writes `batch` through its descriptor, as Native.write gets it from Java.
fn write_described(
    writer: &mut ops::DataWriterHandle,
    batch: &RecordBatch,
) -> sparkds_jni::error::Result<()> {
    let data = StructArray::from(batch.clone()).into();
    let mut described = Vec::new();
    descriptor::describe(&data, &mut described);
    // SAFETY: the descriptor points into `data`, alive for the call.
    unsafe { writer.write(&described) }
}

fn task(partition_id: i32) -> TaskIds {
    TaskIds {
        task_id: 100 + i64::from(partition_id),
        stage_id: 3,
        partition_id,
        attempt_number: 0,
    }
}

/// The range fixture loaded from a build of its own (a copy with `dir_name` appended, which the
/// loader ignores but which changes its SHA-256: a JVM loads each build once), so that the log
/// function given at load is this test's: what the library logs goes to the list returned.
fn range_logging_to_a_list(dir_name: &str) -> (&'static loaded::Loaded, Arc<Mutex<Vec<String>>>) {
    let path = fresh_dir(dir_name).join(Os::current().library_file_name("range"));
    let mut bytes = std::fs::read(fixture(None)).expect("the fixture");
    bytes.extend_from_slice(dir_name.as_bytes());
    std::fs::write(&path, bytes).expect("copied");
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = log.clone();
    let library = loaded::load(&path, None, "4.3.0", move |_| {
        Some(Box::new(move |_level, message| {
            sink.lock().expect("the log").push(message.to_string());
        }))
    })
    .expect("loads");
    (library, log)
}

#[test]
fn a_batch_write_moves_described_batches_to_the_library_and_commits_the_messages() {
    let (library, log) = range_logging_to_a_list("write-log");

    let source = ops::create(library, "range", &[]).expect("create");
    let writer = source
        .create_writer(&ipc(&schema()), "query-1", 0, false)
        .expect("createWriter");
    let state = writer
        .serialize()
        .expect("serializeWriter")
        .expect("a state");
    assert_eq!(state, b"mode=0");
    let mut messages = Vec::new();
    for (partition, rows) in [(0, 0..5), (1, 5..8)] {
        let mut data_writer = ops::create_data_writer(
            library,
            &ipc(&schema()),
            Some(&state),
            -1,
            task(partition),
            None,
            Checks { full: true },
        )
        .expect("createDataWriter");
        write_described(&mut data_writer, &batch(rows.clone())).expect("write");
        write_described(&mut data_writer, &batch(rows)).expect("a second write");
        messages.push(Some(data_writer.commit().expect("commitDataWriter")));
    }
    assert_eq!(
        messages,
        [
            Some(b"task 0: 10 rows".to_vec()),
            Some(b"task 1: 6 rows".to_vec())
        ]
    );
    writer.commit(-1, &messages).expect("commit");
    assert!(
        log.lock()
            .expect("the log")
            .iter()
            .any(|l| l == "commit epoch -1: [task 0: 10 rows] [task 1: 6 rows]"),
        "{:?}",
        log.lock().expect("the log")
    );
    // A null message is for abort only.
    let e = writer.commit(-1, &[None]).expect_err("refused");
    assert_eq!(
        e.message,
        "the commit message of task 0 is null; commit gets a message from every task (abort takes the null ones)"
    );
    writer
        .abort(-1, &[messages[0].clone(), None])
        .expect("abort");
    assert!(log
        .lock()
        .expect("the log")
        .iter()
        .any(|l| l == "abort epoch -1: [task 0: 10 rows] [missing]"));
}

#[test]
fn a_batch_that_does_not_match_the_writers_schema_is_refused_before_the_library_sees_it() {
    let library = crate::helpers::load(&fixture(None));
    let mut data_writer = ops::create_data_writer(
        library,
        &ipc(&schema()),
        None,
        -1,
        task(0),
        None,
        Checks::default(),
    )
    .expect("createDataWriter");
    // A null in the non-nullable `id`.
    let ids = Int64Array::from(vec![Some(1), None]);
    let names = StringArray::from(vec![Some("a"), Some("b")]);
    let nullable = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ]));
    let bad =
        RecordBatch::try_new(nullable, vec![Arc::new(ids), Arc::new(names)]).expect("a batch");
    let e = write_described(&mut data_writer, &bad).expect_err("refused");
    assert_eq!(
        e.message,
        "native data source `range`: batch 0 to write: column `id` is not nullable but holds 1 null"
    );
    data_writer.abort().expect("abortDataWriter");
}

#[test]
fn text_files_writes_what_a_batch_read_of_it_returns() {
    let library = crate::helpers::load(&example("text_files"));
    let out = fresh_dir("text-files-out");
    let out = out.display().to_string();
    let opts = options(&[("path", &out), ("format", "jsonl")]);
    let source = ops::create(library, "text_files", &opts).expect("create");
    let writer = source
        .create_writer(&ipc(&schema()), "query-text", 0, false)
        .expect("createWriter");
    let state = writer.serialize().expect("serializeWriter");
    let mut data_writer = ops::create_data_writer(
        library,
        &ipc(&schema()),
        state.as_deref(),
        -1,
        task(0),
        None,
        Checks { full: true },
    )
    .expect("createDataWriter");
    write_described(&mut data_writer, &batch(0..6)).expect("write");
    let message = data_writer.commit().expect("commitDataWriter");
    drop(data_writer);
    writer.commit(-1, &[Some(message)]).expect("commit");
    drop(writer);

    let reader = source.create_reader(&ipc(&schema())).expect("createReader");
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    let mut rows = Vec::new();
    for (i, partition) in partitions.iter().enumerate() {
        let mut stream = ops::read(
            library,
            &ipc(&schema()),
            ops::ReadInputs {
                state: state.as_deref(),
                partition,
                accepted_filters: None,
            },
            task(i as i32),
            None,
            Checks { full: true },
        )
        .expect("read");
        while let Some(d) = stream.next_batch().expect("next") {
            rows.push(crate::helpers::read_back(&schema(), d));
        }
    }
    let all = arrow_select::concat::concat_batches(&schema(), &rows).expect("concat");
    assert_eq!(all, batch(0..6));
}

#[test]
fn a_streaming_write_commits_each_epoch_with_its_id() {
    let (library, log) = range_logging_to_a_list("write-streaming");
    let source = ops::create(library, "range", &[]).expect("create");
    assert_eq!(source.capabilities() & 8, 8, "SPARK_DS_STREAMING_WRITE");
    let writer = source
        .create_writer(&ipc(&schema()), "stream-query", 1, true)
        .expect("createWriter, complete mode");
    let state = writer.serialize().expect("serializeWriter");
    for epoch in 0..2i64 {
        let mut data_writer = ops::create_data_writer(
            library,
            &ipc(&schema()),
            state.as_deref(),
            epoch,
            task(0),
            None,
            Checks::default(),
        )
        .expect("createDataWriter");
        write_described(&mut data_writer, &batch(0..(epoch + 1) * 3)).expect("write");
        let message = data_writer.commit().expect("commitDataWriter");
        writer.commit(epoch, &[Some(message)]).expect("commit");
    }
    let log = log.lock().expect("the log");
    assert!(
        log.iter()
            .any(|l| l == "create_writer mode=1 streaming=1 columns=2"),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l == "commit epoch 0: [task 0: 3 rows]"),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l == "commit epoch 1: [task 0: 6 rows]"),
        "{log:?}"
    );
}

#[test]
fn a_mode_that_the_header_does_not_define_is_refused() {
    let library = crate::helpers::load(&fixture(None));
    let source = ops::create(library, "range", &[]).expect("create");
    let e = source
        .create_writer(&ipc(&schema()), "q", 7, false)
        .err()
        .expect("refused");
    assert_eq!(
        e.message,
        "the write mode is 7; pass SPARK_DS_WRITE_APPEND (0) or SPARK_DS_WRITE_TRUNCATE (1)"
    );
}

#[test]
fn a_write_to_a_source_without_the_capability_is_unsupported() {
    let library = crate::helpers::load(crate::helpers::c_range());
    let source = ops::create(library, "c_range", &[]).expect("create");
    let e = source
        .create_writer(&ipc(&schema()), "q", 0, false)
        .err()
        .expect("refused");
    assert_eq!(e.class, sparkds_jni::error::ErrorClass::Unsupported);
    assert_eq!(
        e.message,
        "native data source `c_range`: the source does not declare SPARK_DS_BATCH_WRITE, which a batch write needs; use a source that declares it, or do not ask for a batch write"
    );
}
