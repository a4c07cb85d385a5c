"""An executor killed with SIGKILL in the middle of a batch read, a batch write, a streaming read
and a streaming write: Spark loses the executor's tasks, runs them again elsewhere, and each query
either completes with every row exactly once or fails with nothing visible; a streaming query
restarted from its checkpoint goes on exactly once."""

import os
import time

import pytest
from conftest import EXECUTORS, OUTCOMES, ExecutorKiller, wait_for_executors
from pyspark.sql import functions as F

# Enough rows that the tasks run for seconds through the bridge on two executors of one core.
ROWS = 2_000_000


@pytest.fixture(scope="module")
def spark(plain_cluster):
    return plain_cluster


@pytest.fixture(scope="module")
def c_range(spark, c_range_library):
    from spark_native_bridge import register

    return register(spark, c_range_library).name()


@pytest.fixture(scope="module")
def writer(spark, writer_library):
    from spark_native_bridge import register

    return register(spark, writer_library).name()


@pytest.fixture(autouse=True)
def both_executors(spark):
    """Each test starts with two live executors: the workers replace a killed one."""
    wait_for_executors(spark, EXECUTORS)


def once(df, column="id"):
    row = df.agg(F.count("*"), F.countDistinct(column), F.sum(column)).collect()[0]
    return tuple(row)


def expected(rows):
    return (rows, rows, rows * (rows - 1) // 2)


def test_a_batch_read_survives_a_killed_executor(spark, c_range):
    df = spark.read.format(c_range).option("end", ROWS).option("num_partitions", 8).load()

    # Soon after the first task starts: on executors that earlier modules warmed up, the whole
    # read can end within a second.
    with ExecutorKiller(spark, after_seconds=0.2) as killer:
        counts = once(df)

    killer.assert_killed(mid_job=True)
    assert counts == expected(ROWS)
    OUTCOMES.append(f"batch read, executor killed: completed, {counts[0]} rows, each once")


def test_a_batch_write_survives_a_killed_executor_or_shows_nothing(spark, writer, tmp_path):
    path = str(tmp_path / "table")
    rows = spark.range(0, ROWS, 1, 8).select(
        "id", F.concat(F.lit("row "), F.col("id").cast("string")).alias("label")
    )

    with ExecutorKiller(spark) as killer:
        try:
            rows.write.format(writer).option("path", path).mode("append").save()
            completed = True
        except Exception:  # noqa: BLE001 - a failed job must leave nothing visible
            completed = False

    killer.assert_killed()
    written = once(spark.read.format(writer).option("path", path).load())
    assert written == (expected(ROWS) if completed else (0, 0, None))
    staging = os.path.join(path, "_staging")
    left = sum(len(files) for _, _, files in os.walk(staging))
    OUTCOMES.append(
        f"batch write, executor killed: {'completed' if completed else 'failed'}, "
        f"{written[0]} rows visible, each once; {left} staged files left by killed attempts"
    )


def run_micro_batches(start, batches, timeout=240):
    """Starts a streaming query with `start` and stops it once `batches` micro-batches with rows
    have committed, or raises what made the query fail."""
    query = start()
    deadline = time.monotonic() + timeout
    try:
        while sum(1 for p in query.recentProgress if p["numInputRows"] > 0) < batches:
            if query.exception() is not None:
                raise query.exception()
            assert time.monotonic() < deadline, "the streaming query did not progress"
            time.sleep(0.2)
    finally:
        query.stop()


def contiguous_ids(df):
    ids = [row.id for row in df.select("id").orderBy("id").collect()]
    assert ids == list(range(len(ids))), "every row exactly once"
    return len(ids)


@pytest.mark.parametrize("sink", ["parquet", "native"])
def test_a_streaming_query_survives_a_killed_executor_and_restarts_once(
    spark, c_range, writer, tmp_path, sink
):
    """A streaming read of c_range (micro-batches of `rows_per_batch` rows) into a sink: Spark's
    parquet file sink for the read, the generated variant's streaming write for the write."""
    path = str(tmp_path / "table")
    checkpoint = str(tmp_path / "checkpoint")
    rows_per_batch = 400_000

    def start():
        stream = (
            spark.readStream.format(c_range)
            .option("rows_per_batch", rows_per_batch)
            .option("num_partitions", 4)
            .load()
        )
        out = stream.writeStream.format("parquet" if sink == "parquet" else writer)
        return (
            out.option("path", path)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="200 milliseconds")
            .start()
        )

    with ExecutorKiller(spark, after_seconds=0.5) as killer:
        run_micro_batches(start, 3)
    killer.assert_killed()
    wait_for_executors(spark, EXECUTORS)
    run_micro_batches(start, 2)

    table = spark.read.parquet(path) if sink == "parquet" else (
        spark.read.format(writer).option("path", path).load()
    )
    rows = contiguous_ids(table)
    assert rows >= 5 * rows_per_batch
    OUTCOMES.append(
        f"streaming {'read (parquet sink)' if sink == 'parquet' else 'read and native write'}, "
        f"executor killed, then restarted: {rows} rows, each once"
    )
