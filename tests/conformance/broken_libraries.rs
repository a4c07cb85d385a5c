//! Each broken rule is caught, with the function, the place and the rule in its message, and
//! the host survives it.

use crate::helpers::{error, Fixture};

fn read_error(fault: &'static str) -> String {
    error(Fixture::with_fault(fault).load().batch_read().run())
}

#[test]
fn a_sliced_array_is_reported() {
    assert_eq!(
        read_error("SLICED_ARRAY"),
        "`read` (partition 0): batch 0, column `id`: array offset is 1; exported arrays must have offset 0 (rule 13: offset 0 at every level; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-13)"
    );
}

#[test]
fn a_null_row_in_the_batch_struct_is_reported() {
    assert_eq!(
        read_error("NULL_ROW"),
        "`read` (partition 0): batch 0: the batch's struct has 1 null row; a batch must have no null rows: mark the values of its columns null instead (rule 16: the batch is a struct without nulls; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-16)"
    );
}

#[test]
fn a_null_in_a_non_nullable_column_is_reported() {
    assert_eq!(
        read_error("NULL_IN_NOT_NULL"),
        "`read` (partition 0): batch 0, column `id`: holds 1 null but the column is not nullable; declare it nullable or export no nulls (rule 17: no null in a non-nullable column; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-17)"
    );
}

#[test]
fn string_offsets_that_do_not_start_at_zero_are_reported() {
    assert_eq!(
        read_error("STRING_OFFSETS"),
        "`read` (partition 0): batch 0, column `name`: string and binary offsets start at 2; string and binary offsets must start at 0 (rule 14: string and binary offsets start at 0; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-14)"
    );
}

#[test]
fn an_unknown_null_count_is_reported() {
    assert_eq!(
        read_error("NULL_COUNT"),
        "`read` (partition 0): batch 0, column `name`: null_count is -1 (unknown); export the exact count (rule 15: an exact `null_count`; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-15)"
    );
}

#[test]
fn a_large_string_type_is_reported() {
    assert_eq!(
        read_error("LARGE_STRING"),
        "`schema`: column `name` has the Arrow type LargeUtf8, which version 1 does not read; use utf8 (rule 18: only the types of version 1; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-18)"
    );
}

#[test]
fn a_declared_capability_with_a_null_required_function_is_reported() {
    let library = Fixture::with_fault("MISSING_WRITE").load();
    assert_eq!(
        error(library.capabilities([("end", "1")])),
        "`create`: declares SPARK_DS_BATCH_WRITE, but `write` is NULL; a source must not declare a capability whose required functions are NULL (rule 4: declared capabilities are implemented; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-4)"
    );
}

#[test]
fn a_table_smaller_than_version_1_is_refused() {
    let word = std::mem::size_of::<usize>();
    assert_eq!(
        Fixture::with_fault("SMALL_TABLE").load_error(),
        format!(
            "`spark_ds_init`: the table's size is {}; it must be a multiple of {word} and at least {}, the size up to `read` (rule 2: the table's size covers version 1; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-2)",
            16 + 18 * word,
            16 + 19 * word
        )
    );
}

#[test]
fn a_library_without_spark_ds_init_is_refused() {
    // Any shared library that is not a data source: one C function, and no `spark_ds_init`.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let source = dir.path().join("no_init.c");
    std::fs::write(&source, "int not_a_data_source(void) { return 0; }\n").expect("write");
    let library = dir
        .path()
        .join(sparkds::library_file_name("spark_datasource_no_init"));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let status = std::process::Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("the C compiler ($CC, else cc) runs");
    assert!(status.success(), "cc failed to build {}", library.display());
    let error = sparkds::Library::load(&library).expect_err("a library without spark_ds_init");
    assert_eq!(
        error.to_string(),
        "`spark_ds_init`: the library does not export `spark_ds_init`; export it with SPARK_DS_EXPORT in C, or #[no_mangle] pub extern \"C\" in Rust (rule 1: `spark_ds_init` returns one table; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-1)"
    );
}

#[test]
fn another_abi_version_is_refused() {
    assert_eq!(
        Fixture::with_fault("ABI_VERSION").load_error(),
        "`spark_ds_init`: the table declares abi_version 2, but this host supports version 1 only; return a table of version 1 (rule 3: an ABI version the host supports; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-3)"
    );
}

#[test]
fn a_null_handle_returned_with_success_is_reported() {
    assert_eq!(
        read_error("NULL_HANDLE"),
        "`create_reader`: returned 0 but a NULL reader; return a handle that `close_reader` releases, or fail with a message (rule 21: each handle is closed exactly once; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-21)"
    );
}

#[test]
fn an_exceeded_limit_is_reported() {
    let library = Fixture::with_fault("LIMIT_IGNORED").load();
    assert_eq!(
        error(library.batch_read().limit(2).run()),
        "`read` (partition 0): returned 4 rows after `push_limit` accepted a limit of 2; a pushed limit is never exceeded (rule 22: a pushed limit and a pruned schema are honoured; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-22)"
    );
}

#[test]
fn an_error_without_a_message_is_reported() {
    let library = Fixture::with_fault("NO_MESSAGE").load();
    assert_eq!(
        error(library.batch_read().option("end", "ten").run()),
        "`create`: returned 1 and `last_error` returned NULL; a failing function must set a message, in UTF-8 (rule 7: a failure sets `last_error`; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-7)"
    );
}

#[test]
fn a_task_that_ignores_its_kill_is_reported() {
    let library = Fixture::with_fault("IGNORE_INTERRUPT").load();
    let read = library
        .batch_read()
        .options([("end", "20"), ("partitions", "1"), ("batch_size", "2")])
        .kill_task(0, 1);
    assert_eq!(
        error(read.run()),
        "`read` (partition 0): the task was killed after 1 batch, but the stream returned 2 more; a killed task (`is_interrupted` true) must stop within one batch (rule 23: a killed task stops within one batch; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-23)"
    );
}

#[test]
fn a_sink_called_after_its_call_is_reported() {
    assert_eq!(
        read_error("LATE_SINK"),
        "`partitions`: called its sink after it returned; call the sink only during the call, on the calling thread (rule 10: sinks are called only during the call; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-10)"
    );
}

#[test]
fn a_batch_that_write_never_releases_is_reported() {
    let library = Fixture::with_fault("KEEPS_BATCH").load();
    let schema = sparkds::ddl::parse("id bigint not null, name string").expect("a schema");
    let batch = sparkds::sample::rows(&schema, 0, 3).expect("sample rows");
    assert_eq!(
        error(library.batch_write().task([batch]).run()),
        "`write` (task 0): batch 0 was never released, even after `close_data_writer`; release a moved batch exactly once (rule 11: each Arrow struct is released exactly once; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-11)"
    );
}

#[test]
fn a_check_reports_each_broken_protocol() {
    // The fixture's writes keep nothing: what `end` points at may be overwritten.
    let report = sparkds::check::Check::new(Fixture::with_fault("SLICED_ARRAY").path())
        .option("end", "4")
        .scratch()
        .run();
    insta::assert_snapshot!("sliced_check", report.to_string());
    assert!(!report.passed());
}

#[test]
fn a_data_writer_handed_to_two_tasks_at_once_is_reported() {
    let library = Fixture::with_fault("SAME_DATA_WRITER").load();
    let schema = sparkds::ddl::parse("id bigint not null").expect("a schema");
    let batch = || sparkds::sample::rows(&schema, 0, 2).expect("sample rows");
    let message = error(library.batch_write().task([batch()]).task([batch()]).run());
    // Whichever task creates its data writer second gets the handle that is still open.
    let expected = |task: usize| {
        format!("`create_data_writer` (task {task}): returned a data writer that is still open; each call must return a new handle, closed exactly once (rule 21: each handle is closed exactly once; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-21)")
    };
    assert!(
        message == expected(0) || message == expected(1),
        "{message}"
    );
}

#[test]
fn a_range_that_reads_other_rows_when_replayed_is_reported() {
    let library = Fixture::with_fault("UNSTABLE_REPLAY").load();
    assert_eq!(
        error(library.stream_read().run()),
        "`stream_partitions` (replay of micro-batch 2): reading the offsets 10 to 15 again returned other rows; the same range must return the same rows (rule 25: a replayed offset range gives the same rows; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-25)"
    );
}

#[test]
fn functions_beyond_the_table_size_are_ignored() {
    // The table stops after `read`: the write functions that follow are set in memory but
    // outside `size`, so the host must see them as NULL, and the declared writes as broken.
    let library = Fixture::with_fault("TABLE_UP_TO_READ").load();
    assert!(!library.functions().contains(&"commit"));
    assert_eq!(
        error(library.capabilities([("end", "1")])),
        "`create`: declares SPARK_DS_BATCH_WRITE, but `commit` is NULL; a source must not declare a capability whose required functions are NULL (rule 4: declared capabilities are implemented; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-4)"
    );
}

#[test]
fn a_sink_called_from_another_thread_is_reported() {
    assert_eq!(
        read_error("SINK_FROM_THREAD"),
        "`partitions`: called its sink from another thread; call the sink only during the call, on the calling thread (rule 10: sinks are called only during the call; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-10)"
    );
}

#[test]
fn a_failure_that_writes_its_out_parameter_is_reported() {
    assert_eq!(
        read_error("OUT_ON_FAILURE"),
        "`create_reader`: failed (the reader is not ready) but wrote a reader to its out-parameter; on failure leave out-parameters untouched (rule 8: out-parameters untouched on failure; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-8)"
    );
}

#[test]
fn a_borrowed_schema_that_write_releases_is_reported() {
    let library = Fixture::with_fault("RELEASES_SCHEMA").load();
    let schema = sparkds::ddl::parse("id bigint not null").expect("a schema");
    let batch = sparkds::sample::rows(&schema, 0, 2).expect("sample rows");
    assert_eq!(
        error(library.batch_write().task([batch]).run()),
        "`write` (task 0): released the schema it was lent; a borrowed schema is only read, its owner releases it (rule 11: each Arrow struct is released exactly once; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-11)"
    );
}

#[test]
fn an_inexact_null_count_is_reported() {
    assert_eq!(
        read_error("WRONG_NULL_COUNT"),
        "`read` (partition 0): batch 0, column `name`: null_count is 2 but the validity buffer has 1 null; export the exact count (rule 15: an exact `null_count`; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-15)"
    );
}

#[test]
fn a_column_shorter_than_its_batch_is_reported() {
    assert_eq!(
        read_error("SHORT_COLUMN"),
        "`read` (partition 0): batch 0, column `name`: has 3 values but the batch has 4; every column must have the batch's length (rule 16: the batch is a struct without nulls; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-16)"
    );
}

#[test]
fn a_batch_that_fails_full_validation_is_reported() {
    let message = read_error("INVALID_UTF8");
    assert!(
        message
            .starts_with("`read` (partition 0): batch 0, column `name`: fails full validation: ")
            && message.ends_with("(rule 12: batches pass full validation; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-12)"),
        "{message}"
    );
}

#[test]
fn a_stream_that_ignores_the_pruned_columns_is_reported() {
    let library = Fixture::with_fault("PRUNE_IGNORED").load();
    assert_eq!(
        error(library.batch_read().columns(["name"]).run()),
        "`read` (partition 0): the stream's schema is `id Int64 not null, name Utf8` but `name Utf8` was asked for; return exactly the schema to read, after `prune_columns` (rule 19: the stream's schema is the one asked for; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-19)"
    );
}

#[test]
fn an_end_of_stream_that_does_not_repeat_is_reported() {
    assert_eq!(
        read_error("END_NOT_REPEATED"),
        "`read` (partition 0): `get_next` returned a batch or an error after the end of the stream; the end must repeat (0 and a released array) (rule 19: the stream's schema is the one asked for; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-19)"
    );
}

/// What `check` reports for `protocol` of the range built with `fault`.
fn check_outcome(
    fault: &'static str,
    protocol: sparkds::check::Protocol,
) -> sparkds::check::Outcome {
    let report = sparkds::check::Check::new(Fixture::with_fault(fault).path())
        .protocols([protocol])
        .run();
    report.results[0].1.clone()
}

#[test]
fn a_misaligned_buffer_is_reported() {
    assert_eq!(read_error("MISALIGNED"), "`read` (partition 0): batch 0, column `id`: buffer 1 is not aligned to 8 bytes (rule 20: buffers aligned to their element width; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-20)");
}

#[test]
fn an_empty_projection_that_prune_columns_refuses_is_reported() {
    assert_eq!(
        check_outcome("NO_EMPTY_PROJECTION", sparkds::check::Protocol::BatchRead),
        sparkds::check::Outcome::Failed("`prune_columns`: a read pruned to no column failed: prune_columns: no column to read; Spark prunes to no column for `count(*)`: accept it and return batches of a row count only (rule 26: an empty projection works; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-26)".into())
    );
}

#[test]
fn a_refused_path_option_is_reported() {
    assert_eq!(
        check_outcome("REFUSES_SPARK_OPTIONS", sparkds::check::Protocol::BatchRead),
        sparkds::check::Outcome::Failed("`create`: failed with the option `path`, which Spark adds by itself, and passed without it: unknown option `path`; the options are end, partitions, batch_size, rows; accept `path`, and ignore it when the source does not use it (rule 27: the options Spark adds are accepted; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-27)".into())
    );
}

#[test]
fn a_path_option_refused_by_a_write_is_reported() {
    // The check gives a write an empty directory of its own as `path`, which Spark adds to a
    // write too (`save(path)`, `start(path)`); the fixture refuses it before `checkpointLocation`.
    assert_eq!(
        check_outcome(
            "REFUSES_SPARK_OPTIONS",
            sparkds::check::Protocol::StreamingWrite
        ),
        sparkds::check::Outcome::Failed("`create`: failed with the option `path`, which Spark adds by itself, and passed without it: unknown option `path`; the options are end, partitions, batch_size, rows; accept `path`, and ignore it when the source does not use it (rule 27: the options Spark adds are accepted; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-27)".into())
    );
}

#[test]
fn a_pruning_kept_outside_the_reader_state_is_reported() {
    assert_eq!(
        check_outcome("PRUNING_IN_MEMORY", sparkds::check::Protocol::BatchRead),
        sparkds::check::Outcome::Failed("`read` (read again, partition 0): the partitions of a reader pruned to `id`, read with its state after a reader of every column: the stream's schema is `id Int64 not null, name Utf8` but `id Int64 not null` was asked for; the state of `serialize_reader` must carry the pruning, since executors get nothing else (rule 28: the reader state carries what executors need; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-28)".into())
    );
}
