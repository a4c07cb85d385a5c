"""Writes through the plugin into the generated read-write variant (e2e_rw), which stages
JSON-lines files and publishes them on commit; a read with the same `path` reads them back."""

import os
import time

import pytest
from pyspark.sql import functions as F

from jvm_helpers import native
from recorded_writes import failed_epoch_commit, recorded, recording

SCHEMA = "id long, label string"


def table_rows(spark, path):
    df = native(spark, "e2e_rw", path=path).load()
    return sorted((row.id, row.label) for row in df.collect())


def staged_files(path):
    staging = os.path.join(path, "_staging")
    return [os.path.join(d, f) for d, _, files in os.walk(staging) for f in files]


def frame(spark, rows):
    return spark.createDataFrame(rows, SCHEMA).repartition(2)


def save(df, path, mode="append"):
    # ANCHOR: write
    df.write.format("native").option("source", "e2e_rw").option("path", path).mode(mode).save()
    # ANCHOR_END: write


@pytest.mark.core
def test_a_batch_write_is_read_back(spark, tmp_path):
    path = str(tmp_path / "table")
    rows = [(i, None if i % 3 == 2 else f"row {i}") for i in range(20)]

    save(frame(spark, rows), path)
    assert table_rows(spark, path) == rows

    save(frame(spark, rows[:5]), path)
    assert table_rows(spark, path) == sorted(rows + rows[:5])
    assert staged_files(path) == []


def test_a_write_of_many_batches_is_read_back(spark, tmp_path):
    path = str(tmp_path / "table")
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "1000")
    try:
        df = spark.range(0, 25000, 1, 3).selectExpr("id", "concat('row ', id) AS label")
        save(df, path)
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")

    written = table_rows(spark, path)
    assert written == [(i, f"row {i}") for i in range(25000)]


@pytest.mark.core
def test_an_overwrite_replaces_the_data(spark, tmp_path):
    path = str(tmp_path / "table")
    save(frame(spark, [(1, "old"), (2, "old")]), path)

    save(frame(spark, [(3, "new")]), path, mode="overwrite")

    assert table_rows(spark, path) == [(3, "new")]


def test_an_overwrite_of_a_source_without_truncate_is_refused(spark, tmp_path):
    with pytest.raises(Exception) as raised:
        frame(spark, [(1, "x")]).write.format("native").option("source", "c_range").mode(
            "overwrite"
        ).save()

    assert "c_range" in str(raised.value)


def test_a_failed_task_leaves_nothing_visible(spark, tmp_path):
    path = str(tmp_path / "table")
    save(frame(spark, [(1, "kept")]), path)
    failing = spark.range(0, 100, 1, 4).select(
        F.col("id"),
        F.when(F.col("id") == 90, F.raise_error(F.lit("boom in task")))
        .otherwise(F.concat(F.lit("row "), F.col("id").cast("string")))
        .alias("label"),
    )

    with pytest.raises(Exception) as raised:
        save(failing, path)

    assert "boom in task" in str(raised.value)
    assert table_rows(spark, path) == [(1, "kept")]
    assert staged_files(path) == []


def test_a_write_that_the_library_refuses_names_the_function(spark, tmp_path):
    df = spark.createDataFrame([(1.5,)], "price double")

    with pytest.raises(Exception) as raised:
        save(df, str(tmp_path / "t"))

    text = str(raised.value)
    assert "[NATIVE_DATA_SOURCE_ERROR]" in text and "create_writer" in text
    assert "the table has no column `price`: select only its columns" in text


def run_batches(query, batches, timeout=180):
    """Waits until `batches` micro-batches with rows have committed, then stops `query`."""
    deadline = time.monotonic() + timeout
    while sum(1 for p in query.recentProgress if p["numInputRows"] > 0) < batches:
        if query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, "the streaming query did not progress"
        time.sleep(0.3)
    query.stop()


@pytest.mark.core
def test_a_streaming_write_restarts_and_writes_every_row_once(spark, tmp_path):
    path = str(tmp_path / "table")
    checkpoint = str(tmp_path / "checkpoint")

    def start():
        # ANCHOR: stream
        stream = (
            spark.readStream.format("native")
            .option("source", "c_range")
            .option("rows_per_batch", 5)
            .load()
        )
        return (
            stream.writeStream.format("native")
            .option("source", "e2e_rw")
            .option("path", path)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="100 milliseconds")
            .start()
        )
        # ANCHOR_END: stream

    run_batches(start(), 3)
    run_batches(start(), 2)

    written = table_rows(spark, path)
    assert len(written) >= 25
    assert [row[0] for row in written] == list(range(len(written))), "every row exactly once"
    assert written == [(i, None if i % 3 == 2 else f"label {i}") for i in range(len(written))]


def start_counts_by_parity(spark, tmp_path, path, mode):
    """Starts a stream of c_range's row counts by id parity, written to e2e_rw at `path` in
    output mode `mode`."""
    counts = (
        spark.readStream.format("native")
        .option("source", "c_range")
        .option("rows_per_batch", 4)
        .load()
        .groupBy((F.col("id") % 2).alias("id"))
        .agg(F.count("*").cast("string").alias("label"))
    )
    return (
        counts.writeStream.format("native")
        .option("source", "e2e_rw")
        .outputMode(mode)
        .option("path", path)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )


def test_a_streaming_write_in_complete_mode_replaces_the_data(spark, tmp_path):
    path = str(tmp_path / "table")
    query = start_counts_by_parity(spark, tmp_path, path, "complete")
    run_batches(query, 2)
    rows_read = sum(p["numInputRows"] for p in query.recentProgress)

    written = table_rows(spark, path)
    assert [row[0] for row in written] == [0, 1]
    total = sum(int(row[1]) for row in written)
    assert total >= rows_read and total % 4 == 0


def test_a_streaming_write_in_update_mode_appends_the_updated_rows(spark, tmp_path):
    path = str(tmp_path / "table")
    query = start_counts_by_parity(spark, tmp_path, path, "update")
    run_batches(query, 2)

    # Each micro-batch appends the two groups it updated, with their counts so far.
    written = table_rows(spark, path)
    assert len(written) >= 4 and len(written) % 2 == 0
    assert {row[0] for row in written} == {0, 1}
    assert sorted(int(row[1]) for row in written if row[0] == 0)[:2] == [2, 4]


# -- the driver's calls, as a library records them -----------------------------------------------


@pytest.fixture(scope="module")
def recording_writes(dirs):
    """tests/conformance/fixtures/range.c with RECORD_WRITES, as data source `recorded_writes`
    in the session's library path: it appends each call of the driver's write protocol to the
    file of its option `record`, and its commit fails with `fail_commit=true`."""
    from library_fixtures import conformance_fixture

    return conformance_fixture(dirs["scratch"], "recorded_writes", "RECORD_WRITES")


def to_recorded_writes(writer, record, fail_commit):
    return recording(writer.format("native").option("source", "recorded_writes"), record,
                     fail_commit)


def rows_to_write(spark):
    return spark.range(0, 10, 1, 2).selectExpr("id", "CAST(id AS STRING) AS name")


def test_a_committed_write_closes_its_writer_once(spark, recording_writes, tmp_path):
    record = tmp_path / "record.txt"

    to_recorded_writes(rows_to_write(spark).write, record, fail_commit=False).mode("append").save()

    [created, committed, closed] = recorded(record)
    writer = created[1]
    assert created[0] == "create_writer" and created[2].startswith("query ")
    assert committed == ("commit", writer, "epoch -1 messages 2/2")
    assert closed == ("close_writer", writer, "")


def test_a_failed_commit_is_aborted_on_its_open_writer_which_closes_once(
    spark, recording_writes, tmp_path
):
    record = tmp_path / "record.txt"

    with pytest.raises(Exception) as raised:
        to_recorded_writes(rows_to_write(spark).write, record, fail_commit=True).mode(
            "append"
        ).save()

    text = str(raised.value)
    assert "commit refused (the option fail_commit)" in text
    assert "not an open writer handle" not in text
    [created, committed, aborted, closed] = recorded(record)
    writer = created[1]
    assert committed == ("commit", writer, "epoch -1 messages 2/2")
    # The abort reaches the same writer with the messages of every task, so that the library
    # removes what they staged.
    assert aborted == ("abort", writer, "epoch -1 messages 2/2")
    assert closed == ("close_writer", writer, "")


def test_a_failed_epoch_commit_is_aborted_on_its_open_writer(spark, recording_writes, tmp_path):
    record = tmp_path / "record.txt"
    stream = (
        spark.readStream.format("native")
        .option("source", "c_range")
        .option("rows_per_batch", 5)
        .load()
        .selectExpr("id", "label AS name")
    )
    error = failed_epoch_commit(
        stream.writeStream.format("native").option("source", "recorded_writes"),
        record,
        tmp_path / "checkpoint",
    )

    assert "commit refused (the option fail_commit)" in error
    [created, committed, aborted, closed] = recorded(record)
    writer = created[1]
    assert committed[:2] == ("commit", writer) and committed[2].startswith("epoch 0 ")
    assert aborted == ("abort", writer, committed[2])
    assert closed == ("close_writer", writer, "")
