//! The good C fixture passes every protocol, and the drivers return what a generated project's
//! tests assert on.

use std::sync::Arc;

use sparkds::arrow_array::{Int64Array, RecordBatch, StringArray};
use sparkds::arrow_schema::{DataType, Field, Schema};
use sparkds::{render, WriteMode};

use crate::helpers::Fixture;

fn rows(first: i64, n: i64) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let ids: Vec<i64> = (first..first + n).collect();
    let names: Vec<Option<String>> = ids.iter().map(|i| Some(format!("w{i}"))).collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(StringArray::from(names)),
        ],
    )
    .expect("a valid batch")
}

#[test]
fn options_of_the_library_reach_every_create_and_those_of_a_read_win() {
    let library = Fixture::good().load().with_options([("end", "4")]);
    let read = library.batch_read().run().expect("the read succeeds");
    assert_eq!(read.num_rows(), 4);
    let read = library
        .batch_read()
        .option("end", "6")
        .run()
        .expect("the read succeeds");
    assert_eq!(read.num_rows(), 6);
}

#[test]
fn reads_every_partition_in_order() {
    let library = Fixture::good().load();
    let read = library
        .batch_read()
        .option("end", "10")
        .run()
        .expect("the read succeeds");
    assert_eq!(
        render::partitions(&read.partition_bytes()),
        "0: range 0..5\n1: range 5..10\n"
    );
    assert_eq!(
        read.reader_state.as_deref().map(render::bytes),
        Some("columns=2,0,1 limit=-1 batch_size=4".to_string())
    );
    insta::assert_snapshot!("good_schema", render::schema(&read.schema));
    insta::assert_snapshot!("good_rows", render::batches(&read.batches()));
}

#[test]
fn prunes_columns_and_pushes_a_limit() {
    let library = Fixture::good().load();
    let read = library
        .batch_read()
        .option("end", "10")
        .columns(["name", "id"])
        .limit(2)
        .run()
        .expect("the read succeeds");
    assert!(read.pruned);
    assert_eq!(read.limit_accepted, Some(true));
    assert_eq!(
        render::schema_line(&read.schema),
        "name Utf8, id Int64 not null"
    );
    assert_eq!(read.num_rows(), 4);
}

#[test]
fn reads_with_a_schema_that_the_user_gives() {
    let library = Fixture::good().load();
    let schema = sparkds::ddl::parse("id bigint not null, name string").expect("a schema");
    let read = library
        .batch_read()
        .schema(schema)
        .run()
        .expect("the read succeeds");
    assert_eq!(read.num_rows(), 10);
}

#[test]
fn a_killed_task_stops_within_one_batch() {
    let library = Fixture::good().load();
    let read = library
        .batch_read()
        .options([("end", "20"), ("partitions", "1"), ("batch_size", "2")])
        .kill_task(0, 1)
        .run()
        .expect("the read succeeds");
    assert_eq!(read.num_rows(), 2);
}

#[test]
fn a_failing_create_reports_the_message_of_last_error() {
    let library = Fixture::good().load();
    assert_eq!(
        crate::helpers::error(library.batch_read().option("end", "ten").run()),
        "`create` failed: option `end` must be a non-negative integer, got `ten`"
    );
}

#[test]
fn streams_micro_batches_and_resumes_after_a_restart() {
    let library = Fixture::good().load();
    let stream = library
        .stream_read()
        .option("rows", "5")
        .micro_batches(4)
        .restart_after(2)
        .run()
        .expect("the stream runs");
    assert_eq!(render::bytes(&stream.initial_offset), "0");
    assert_eq!(
        stream.offsets(),
        [("0", "5"), ("5", "10"), ("10", "15"), ("15", "20")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert_eq!(stream.rows_per_micro_batch(), vec![5, 5, 5, 5]);
    assert_eq!(stream.restarted_before, Some(2));
}

#[test]
fn writes_each_task_and_commits_their_messages() {
    let library = Fixture::good().own_copy("commit").load();
    let write = library
        .batch_write()
        .task([rows(0, 2), rows(2, 1)])
        .task([rows(3, 4)])
        .run()
        .expect("the write succeeds");
    assert!(write.committed && !write.aborted);
    assert_eq!(
        write.messages,
        vec![
            Some(b"task 0: 3 rows".to_vec()),
            Some(b"task 1: 4 rows".to_vec())
        ]
    );
    let log: Vec<String> = library.log().iter().map(|m| m.message.clone()).collect();
    assert_eq!(
        log,
        [
            "create_writer mode=0 streaming=0 columns=2",
            "commit epoch -1: [task 0: 3 rows] [task 1: 4 rows]"
        ]
    );
}

#[test]
fn a_failing_task_aborts_the_write_with_a_missing_message() {
    let library = Fixture::good().own_copy("abort").load();
    let write = library
        .batch_write()
        .mode(WriteMode::Truncate)
        .task([rows(0, 2)])
        .task([rows(2, 2)])
        .failing_task(1)
        .run()
        .expect("the write runs");
    assert!(write.aborted && !write.committed);
    assert_eq!(write.messages, vec![Some(b"task 0: 2 rows".to_vec()), None]);
    let log: Vec<String> = library.log().iter().map(|m| m.message.clone()).collect();
    assert_eq!(
        log,
        [
            "create_writer mode=1 streaming=0 columns=2",
            "abort epoch -1: [task 0: 2 rows] [missing]"
        ]
    );
}

#[test]
fn a_streaming_write_commits_each_epoch() {
    let library = Fixture::good().own_copy("epochs").load();
    let epochs = library
        .streaming_write()
        .epoch([[rows(0, 1)], [rows(1, 1)]])
        .epoch([[rows(2, 3)]])
        .run()
        .expect("the write succeeds");
    assert_eq!(epochs.len(), 2);
    assert!(epochs.iter().all(|e| e.committed));
    let log: Vec<String> = library.log().iter().map(|m| m.message.clone()).collect();
    assert_eq!(
        log,
        [
            "create_writer mode=0 streaming=1 columns=2",
            "commit epoch 0: [task 0: 1 rows] [task 1: 1 rows]",
            "commit epoch 1: [task 0: 3 rows]"
        ]
    );
}

#[test]
fn a_check_of_a_good_library_passes_every_protocol() {
    let report = sparkds::check::Check::new(Fixture::good().path()).run();
    insta::assert_snapshot!("good_check", report.to_string());
}

#[test]
fn a_source_without_schema_reads_with_the_schema_of_the_query() {
    let library = Fixture::with_fault("NO_SCHEMA").load();
    assert_eq!(
        crate::helpers::error(library.batch_read().run()),
        "the source has no `schema` function, so the read needs a schema: pass one (`.schema(...)` in Rust, `--schema \"id bigint, name string\"` on the command line)"
    );
    let schema = sparkds::ddl::parse("id bigint not null, name string").expect("a schema");
    let read = library
        .batch_read()
        .schema(schema)
        .option("end", "3")
        .run()
        .expect("the read succeeds");
    assert_eq!(read.num_rows(), 3);
}

#[test]
fn a_library_can_be_shared_by_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<sparkds::Library>();
}

#[test]
fn a_killed_task_may_fail_its_stream_instead_of_ending_it() {
    let library = Fixture::with_fault("FAIL_WHEN_KILLED").load();
    let read = library
        .batch_read()
        .options([("end", "20"), ("partitions", "1"), ("batch_size", "2")])
        .kill_task(0, 1);
    assert_eq!(
        crate::helpers::error(read.run()),
        "`read` (partition 0, `get_next` of the stream) failed: the task was killed"
    );
    let report = sparkds::check::Check::new(Fixture::with_fault("FAIL_WHEN_KILLED").path())
        .protocols([sparkds::check::Protocol::BatchRead])
        .run();
    assert!(report.passed(), "{report}");
}

/// The calls that a `CallObserver` saw, in order.
#[derive(Default)]
struct Seen(std::sync::Mutex<Vec<&'static str>>);

impl sparkds::CallObserver for Seen {
    fn called(&self, function: &'static str, _elapsed: std::time::Duration) {
        self.0.lock().expect("not poisoned").push(function);
    }
}

#[test]
fn an_observer_sees_every_call_into_the_library_in_order() {
    use sparkds::steps::{Checks, OpenSource, PartitionStream, TaskContext, TaskIds};

    let seen = Arc::new(Seen::default());
    let host = sparkds::HostOptions {
        observer: Some(seen.clone()),
        ..sparkds::HostOptions::default()
    };
    let library: &'static sparkds::Library = Box::leak(Box::new(
        sparkds::Library::load_with(Fixture::good().path(), host).expect("loads"),
    ));
    let name = library.name().to_string();
    let source =
        OpenSource::create(library, &name, &[("end".into(), "5".into())]).expect("creates");
    let schema = source.schema().expect("a schema").expect("has one");
    let reader = source.create_reader(schema.clone()).expect("a reader");
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("a state");
    drop(reader);
    drop(source);
    let task = TaskContext::new(TaskIds::default(), None);
    let mut stream = PartitionStream::open(
        library,
        task,
        schema,
        state.as_deref(),
        &partitions[0],
        Checks::default(),
    )
    .expect("a stream");
    let mut rows = 0;
    while let Some(batch) = stream.next_batch().expect("a batch") {
        rows += batch.num_rows();
    }
    drop(stream);
    assert!(rows > 0, "the first partition has rows");
    let seen = seen.0.lock().expect("not poisoned").clone();
    // Each batch is released before the next `get_next`.
    let batches = seen.iter().filter(|f| **f == "get_next").count() - 1;
    let mut expected = vec![
        "create",
        "schema",
        "create_reader",
        "partitions",
        "serialize_reader",
        "close_reader",
        "close",
        "read",
        "get_schema",
    ];
    for _ in 0..batches {
        expected.extend(["get_next", "release"]);
    }
    // The end of the stream, then the stream's own release.
    expected.extend(["get_next", "release"]);
    assert_eq!(seen, expected);
}
