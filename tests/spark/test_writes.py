"""Writes through the bridge, against a variant of the template with batch_write,
streaming_write and truncate: each write stages JSON-lines files and publishes them on commit, and
a read with the same `path` reads what was published."""

import os
import time

import pytest
from pyspark.sql import functions as F
from recorded_writes import failed_epoch_commit, recorded, recording

SCHEMA = "id long, label string"


def table_rows(spark, writer, path):
    df = spark.read.format(writer).option("path", path).load()
    return sorted((row.id, row.label) for row in df.collect())


def staged_files(path):
    staging = os.path.join(path, "_staging")
    return [os.path.join(d, f) for d, _, files in os.walk(staging) for f in files]


def frame(spark, rows):
    return spark.createDataFrame(rows, SCHEMA).repartition(2)


@pytest.mark.core
def test_a_batch_write_is_read_back(spark, writer, tmp_path):
    path = str(tmp_path / "table")
    rows = [(i, None if i % 3 == 2 else f"row {i}") for i in range(20)]

    frame(spark, rows).write.format(writer).option("path", path).mode("append").save()
    assert table_rows(spark, writer, path) == rows

    frame(spark, rows[:5]).write.format(writer).option("path", path).mode("append").save()
    assert table_rows(spark, writer, path) == sorted(rows + rows[:5])
    assert staged_files(path) == []


@pytest.mark.core
def test_an_overwrite_replaces_the_data(spark, writer, tmp_path):
    path = str(tmp_path / "table")
    frame(spark, [(1, "old"), (2, "old")]).write.format(writer).option("path", path).mode(
        "append"
    ).save()

    frame(spark, [(3, "new")]).write.format(writer).option("path", path).mode("overwrite").save()

    assert table_rows(spark, writer, path) == [(3, "new")]


def test_a_failed_write_leaves_no_output(spark, writer, tmp_path):
    path = str(tmp_path / "table")
    frame(spark, [(1, "kept")]).write.format(writer).option("path", path).mode("append").save()
    # One task fails while the others write: the job fails, Spark aborts the write, and abort
    # removes what the tasks staged.
    failing = spark.range(0, 100, 1, 4).select(
        F.col("id"),
        F.when(F.col("id") == 90, F.raise_error(F.lit("boom in task")))
        .otherwise(F.concat(F.lit("row "), F.col("id").cast("string")))
        .alias("label"),
    )

    with pytest.raises(Exception) as raised:
        failing.write.format(writer).option("path", path).mode("append").save()

    assert "boom in task" in str(raised.value)
    assert table_rows(spark, writer, path) == [(1, "kept")]
    assert staged_files(path) == []


def test_a_write_of_other_columns_fails_with_the_library_message(spark, writer, tmp_path):
    df = spark.createDataFrame([(1.5,)], "price double")

    with pytest.raises(Exception) as raised:
        df.write.format(writer).option("path", str(tmp_path / "t")).mode("append").save()

    text = str(raised.value)
    assert "NATIVE_DATA_SOURCE_ERROR" in text and "create_writer" in text


@pytest.mark.core
def test_a_streaming_write_restarts_and_writes_every_row_once(
    spark, c_range, writer, tmp_path, refused_resume
):
    path = str(tmp_path / "table")
    checkpoint = str(tmp_path / "checkpoint")
    rows_per_batch = 5

    def start():
        stream = spark.readStream.format(c_range).option("rows_per_batch", rows_per_batch).load()
        return (
            stream.writeStream.format(writer)
            .option("path", path)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="100 milliseconds")
            .start()
        )

    def run_batches(batches, timeout=180):
        # Progress is reported once a micro-batch has committed: polling it runs no Spark job.
        query = start()
        deadline = time.monotonic() + timeout
        while sum(1 for p in query.recentProgress if p["numInputRows"] > 0) < batches:
            if query.exception() is not None:
                raise query.exception()
            assert time.monotonic() < deadline, "the streaming write did not progress"
            time.sleep(0.5)
        query.stop()

    run_batches(3)
    if refused_resume is not None:
        refused_resume(lambda: run_batches(2))
        return
    run_batches(2)

    written = table_rows(spark, writer, path)
    assert len(written) >= 5 * rows_per_batch
    assert [row[0] for row in written] == list(range(len(written))), "every row exactly once"
    assert written == [(i, None if i % 3 == 2 else f"label {i}") for i in range(len(written))]


def test_a_streaming_write_in_complete_mode_replaces_the_data_each_micro_batch(
    spark, c_range, writer, tmp_path
):
    path = str(tmp_path / "table")
    counts = (
        spark.readStream.format(c_range)
        .option("rows_per_batch", 4)
        .load()
        .groupBy((F.col("id") % 2).alias("id"))
        .agg(F.count("*").cast("string").alias("label"))
    )
    query = (
        counts.writeStream.format(writer)
        .outputMode("complete")
        .option("path", path)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    deadline = time.monotonic() + 180
    while sum(1 for p in query.recentProgress if p["numInputRows"] > 0) < 2:
        if query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, "the streaming write did not progress"
        time.sleep(0.5)
    query.stop()
    rows_read = sum(p["numInputRows"] for p in query.recentProgress)

    # SPARK_DS_WRITE_TRUNCATE: only the result of the last micro-batch is left, whose counts
    # cover every row read (a micro-batch may have committed after the last progress report).
    written = table_rows(spark, writer, path)
    assert [row[0] for row in written] == [0, 1]
    total = sum(int(row[1]) for row in written)
    assert total >= rows_read and total % 4 == 0


# -- the writers' calls, as a library records them ----------------------------------------------


@pytest.fixture(scope="module")
def recording_writes(spark, tmp_path_factory):
    """tests/conformance/fixtures/range.c with RECORD_WRITES, registered as `recorded_writes`:
    it appends each call of the driver's write protocol to the file of its option `record`,
    and its commit fails with `fail_commit=true`."""
    from library_fixtures import conformance_fixture
    from spark_native_bridge import register

    directory = str(tmp_path_factory.mktemp("recording"))
    return register(spark, conformance_fixture(directory, "recorded_writes", "RECORD_WRITES")).name()


def recorded_writers(record):
    """{writer: [(call, rest), ...]} of the calls the library recorded, and the writers in the
    order they were created. pyspark runs the driver's steps of a write (the writer's state, the
    commit, the abort) in Python workers of their own, so each step creates its own writer."""
    calls = {}
    order = []
    for call, writer, rest in recorded(record):
        if call == "create_writer":
            order.append(writer)
        calls.setdefault(writer, []).append((call, rest))
    return calls, order


def assert_aborted_after_the_failed_commit(record, epoch):
    """The writers of a write whose commit failed: each created and closed once, all of the
    same query, one that commits, then one that aborts with what the commit got. pyspark creates
    the writer again in every Python worker of a step, so some writers do nothing else. Returns
    what the commit got (`epoch E messages present/all`)."""
    calls, order = recorded_writers(record)
    for writer in order:
        made = [call for call, _ in calls[writer]]
        assert made[0] == "create_writer" and made[-1] == "close_writer", (writer, made)
        assert made.count("create_writer") == made.count("close_writer") == 1, (writer, made)
    assert len({calls[writer][0][1] for writer in order}) == 1, "one query ID"
    [(commit, committed), (abort, aborted)] = [
        step for writer in order for step in calls[writer][1:-1]
    ]
    assert (commit, abort) == ("commit", "abort")
    assert committed.startswith(f"epoch {epoch} messages ")
    # The abort gets the messages of every task, so that the library removes what they staged.
    assert aborted == committed
    return committed


def test_a_failed_commit_is_aborted_and_every_writer_closed_once(
    spark, recording_writes, tmp_path
):
    record = tmp_path / "record.txt"
    rows = spark.range(0, 10, 1, 2).selectExpr("id", "CAST(id AS STRING) AS name")

    with pytest.raises(Exception) as raised:
        recording(rows.write.format(recording_writes), record, fail_commit=True).mode(
            "append"
        ).save()

    assert "commit refused (the option fail_commit)" in str(raised.value)
    assert assert_aborted_after_the_failed_commit(record, -1) == "epoch -1 messages 2/2"


def test_a_failed_epoch_commit_is_aborted_and_every_writer_closed_once(
    spark, recording_writes, c_range, tmp_path
):
    record = tmp_path / "record.txt"
    stream = (
        spark.readStream.format(c_range)
        .option("rows_per_batch", 5)
        .load()
        .selectExpr("id", "label AS name")
    )
    error = failed_epoch_commit(
        stream.writeStream.format(recording_writes), record, tmp_path / "checkpoint"
    )

    assert "commit refused (the option fail_commit)" in error
    assert_aborted_after_the_failed_commit(record, 0)


def test_the_streaming_query_id_holds_no_secret_option(writer_library):
    """The bridge derives a streaming write's query ID from the sink's options, for every
    process to agree on it: never from the value of a secret option (Spark's redaction rule),
    which the library would receive hashed in every create_writer."""
    from pyspark.sql.types import LongType, StructField, StructType

    from spark_native_bridge._datasource import NativeDataSource, _Library

    schema = StructType([StructField("id", LongType())])
    library = _Library(path=writer_library, sha256="0" * 64, name="e2e_rw",
                       redaction=("(?i)tenant",))

    def query_id(**options):
        source = type("Sink", (NativeDataSource,), {"_library": library})(options)
        return source._write_spec(schema, overwrite=False, streaming=True).query_id

    with_secret = query_id(path="/t", password="hunter2", jdbcUrl="u://x:y@h", tenant="a")
    assert with_secret == query_id(path="/t", password="other", jdbcUrl="u://z@h", tenant="b")
    # The other options identify the sink, as before; the secret ones by their keys.
    assert with_secret != query_id(path="/elsewhere", password="hunter2", jdbcUrl="u://x:y@h",
                                   tenant="a")
    assert with_secret != query_id(path="/t", jdbcUrl="u://x:y@h", tenant="a")
