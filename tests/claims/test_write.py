"""Writes into the generated read-write variant (e2e_rw), which stages JSON-lines files and
publishes them on commit, read back with the same `path`, on every runtime: appends, an
overwrite, a failed task that leaves nothing, the library's refusal, streaming writes that
restart with every row once or replace the data each micro-batch; and what the driver calls
when a commit fails (the conformance fixture's record)."""

import os

import pytest

from claims import c_range_rows, failure, input_rows, run_batches
from recorded_writes import failed_epoch_commit, recorded, recording

SCHEMA = "id long, label string"


def table_rows(runtime, path):
    df = runtime.read("e2e_rw", path=path).load()
    return sorted((row.id, row.label) for row in df.collect())


def staged_files(path):
    staging = os.path.join(path, "_staging")
    return [os.path.join(d, f) for d, _, files in os.walk(staging) for f in files]


def frame(runtime, rows):
    return runtime.spark.createDataFrame(rows, SCHEMA).repartition(2)


def save(runtime, df, path, mode="append"):
    runtime.write(df, "e2e_rw", path=path).mode(mode).save()


@pytest.mark.core
def test_a_batch_write_is_read_back(runtime, tmp_path):
    path = str(tmp_path / "table")
    rows = [(i, None if i % 3 == 2 else f"row {i}") for i in range(20)]

    save(runtime, frame(runtime, rows), path)
    assert table_rows(runtime, path) == rows

    save(runtime, frame(runtime, rows[:5]), path)
    assert table_rows(runtime, path) == sorted(rows + rows[:5])
    assert staged_files(path) == []


@pytest.mark.core
def test_an_overwrite_replaces_the_data(runtime, tmp_path):
    path = str(tmp_path / "table")
    save(runtime, frame(runtime, [(1, "old"), (2, "old")]), path)

    save(runtime, frame(runtime, [(3, "new")]), path, mode="overwrite")

    assert table_rows(runtime, path) == [(3, "new")]


def test_a_failed_task_leaves_nothing_visible(runtime, tmp_path):
    from pyspark.sql import functions as F

    path = str(tmp_path / "table")
    save(runtime, frame(runtime, [(1, "kept")]), path)
    # One task fails while the others write: the job fails, Spark aborts the write, and abort
    # removes what the tasks staged.
    failing = runtime.spark.range(0, 100, 1, 4).select(
        F.col("id"),
        F.when(F.col("id") == 90, F.raise_error(F.lit("boom in task")))
        .otherwise(F.concat(F.lit("row "), F.col("id").cast("string")))
        .alias("label"),
    )

    error = failure(lambda: save(runtime, failing, path))

    assert "boom in task" in str(error)
    assert table_rows(runtime, path) == [(1, "kept")]
    assert staged_files(path) == []


def test_a_write_that_the_library_refuses_names_the_function_and_the_reason(runtime, tmp_path):
    df = runtime.spark.createDataFrame([(1.5,)], "price double")

    text = str(failure(lambda: save(runtime, df, str(tmp_path / "t"))))

    assert "NATIVE_DATA_SOURCE_ERROR" in text and "create_writer" in text, text
    assert "the table has no column `price`: select only its columns" in text, text


def test_a_source_without_writers_refuses_a_write_naming_what_it_lacks(runtime):
    df = runtime.spark.range(3)

    text = str(failure(lambda: runtime.write(df, "c_range").mode("append").save()))

    assert "c_range" in text, text
    assert "SPARK_DS_BATCH_WRITE" in text or "does not support" in text.lower(), text


@pytest.mark.core
def test_a_streaming_write_restarts_and_writes_every_row_once(runtime, tmp_path):
    path = str(tmp_path / "table")
    checkpoint = str(tmp_path / "checkpoint")

    def start():
        stream = runtime.read_stream("c_range", rows_per_batch=5).load()
        return (
            runtime.write_stream(stream, "e2e_rw", path=path, checkpointLocation=checkpoint)
            .trigger(processingTime="100 milliseconds")
            .start()
        )

    run_batches(start(), 3)
    if not runtime.resumes_streams:
        text = str(failure(lambda: run_batches(start(), 2)))
        assert "cannot resume a stream from its checkpoint" in text, text
        assert "use Spark 4.2 or later" in text
        return
    run_batches(start(), 2)

    written = table_rows(runtime, path)
    assert len(written) >= 25
    assert written == c_range_rows(0, len(written)), "every row exactly once"


def test_a_streaming_write_in_complete_mode_replaces_the_data_each_micro_batch(runtime, tmp_path):
    from pyspark.sql import functions as F

    path = str(tmp_path / "table")
    counts = (
        runtime.read_stream("c_range", rows_per_batch=4)
        .load()
        .groupBy((F.col("id") % 2).alias("id"))
        .agg(F.count("*").cast("string").alias("label"))
    )
    query = run_batches(
        runtime.write_stream(counts, "e2e_rw", path=path,
                             checkpointLocation=str(tmp_path / "checkpoint"))
        .outputMode("complete")
        .trigger(processingTime="100 milliseconds")
        .start(),
        2,
    )
    rows_read = sum(input_rows(p) for p in query.recentProgress)

    # SPARK_DS_WRITE_TRUNCATE: only the result of the last micro-batch is left, whose counts
    # cover every row read (a micro-batch may have committed after the last progress report).
    written = table_rows(runtime, path)
    assert [row[0] for row in written] == [0, 1]
    total = sum(int(row[1]) for row in written)
    assert total >= rows_read and total % 4 == 0


# -- the driver's calls when a commit fails, as the library records them -------------------------


def recorded_writers(record):
    """{writer: [(call, rest), ...]} of the calls the library recorded, and the writers in the
    order they were created. The bridge runs the driver's steps of a write (the writer's state,
    the commit, the abort) in Python workers of their own, so each step creates its own writer;
    the plugin makes one."""
    calls = {}
    order = []
    for call, writer, rest in recorded(record):
        if call == "create_writer":
            order.append(writer)
        calls.setdefault(writer, []).append((call, rest))
    return calls, order


def assert_aborted_after_the_failed_commit(record, epoch):
    """Every writer of a write whose commit failed is created and closed once, all of one query;
    one commits, then one aborts with what the commit got: the messages of every task, so that
    the library removes what they staged."""
    calls, order = recorded_writers(record)
    for writer in order:
        made = [call for call, _ in calls[writer]]
        assert made[0] == "create_writer" and made[-1] == "close_writer", (writer, made)
        assert made.count("create_writer") == made.count("close_writer") == 1, (writer, made)
    assert len({calls[writer][0][1] for writer in order}) == 1, "one query ID"
    assert calls[order[0]][0][1].startswith("query ")
    [(commit, committed), (abort, aborted)] = [
        step for writer in order for step in calls[writer][1:-1]
    ]
    assert (commit, abort) == ("commit", "abort")
    assert committed.startswith(f"epoch {epoch} messages ")
    assert aborted == committed
    return committed


def rows_to_record(runtime):
    return runtime.spark.range(0, 10, 1, 2).selectExpr("id", "CAST(id AS STRING) AS name")


def test_a_committed_write_closes_every_writer_once(runtime, tmp_path):
    record = tmp_path / "record.txt"

    recording(runtime.write(rows_to_record(runtime), "recorded_writes"), record,
              fail_commit=False).mode("append").save()

    calls, order = recorded_writers(record)
    steps = [step for writer in order for step in calls[writer][1:-1]]
    assert steps == [("commit", "epoch -1 messages 2/2")]
    assert all(calls[w][-1][0] == "close_writer" for w in order)


def test_a_failed_commit_is_aborted_and_every_writer_closed_once(runtime, tmp_path):
    record = tmp_path / "record.txt"

    error = failure(
        lambda: recording(runtime.write(rows_to_record(runtime), "recorded_writes"), record,
                          fail_commit=True).mode("append").save()
    )

    text = str(error)
    assert "commit refused (the option fail_commit)" in text, text
    assert "not an open writer handle" not in text
    assert assert_aborted_after_the_failed_commit(record, -1) == "epoch -1 messages 2/2"


def test_a_failed_epoch_commit_is_aborted_and_every_writer_closed_once(runtime, tmp_path):
    record = tmp_path / "record.txt"
    stream = (
        runtime.read_stream("c_range", rows_per_batch=5).load().selectExpr("id", "label AS name")
    )

    error = failed_epoch_commit(
        runtime.write_stream(stream, "recorded_writes"), record, tmp_path / "checkpoint"
    )

    assert "commit refused (the option fail_commit)" in error
    assert_aborted_after_the_failed_commit(record, 0)
