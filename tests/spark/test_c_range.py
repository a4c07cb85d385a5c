"""The c_range example, read by Spark through the bridge: batch reads, options, errors and a
streaming query that restarts from its checkpoint."""

import time

import pytest
from pyspark.errors import PySparkException
from pyspark.sql.utils import CapturedException


def expected_rows(start, end):
    return [(i, None if i % 3 == 2 else f"label {i}") for i in range(start, end)]


def rows(df):
    return sorted((row.id, row.label) for row in df.collect())


@pytest.mark.core
def test_a_batch_read_returns_the_rows_of_the_range(spark, c_range):
    df = spark.read.format(c_range).load()

    assert rows(df) == expected_rows(0, 10)


def test_the_schema_comes_from_the_library_with_its_nullability(spark, c_range):
    schema = spark.read.format(c_range).load().schema

    assert [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields] == [
        ("id", "bigint", False),
        ("label", "string", True),
    ]


@pytest.mark.core
def test_options_reach_the_library(spark, c_range):
    df = (
        spark.read.format(c_range)
        .option("end", 1000)
        .option("num_partitions", 3)
        .option("batch_rows", 7)
        .load()
    )

    assert df.rdd.getNumPartitions() == 3
    assert rows(df) == expected_rows(0, 1000)


def test_a_schema_given_by_the_query_reads_only_its_columns(spark, c_range):
    df = spark.read.format(c_range).schema("id long").option("end", 5).load()

    assert sorted(row.id for row in df.collect()) == [0, 1, 2, 3, 4]


def test_an_empty_range_reads_no_rows(spark, c_range):
    assert spark.read.format(c_range).option("end", 0).load().count() == 0


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("end", "ten", "option `end` must be a non-negative integer, got `ten`"),
        ("num_partitions", "0", "option `num_partitions` must be a positive integer, got `0`"),
        ("colour", "red", "unknown option `colour`: the options of c_range are `end`"),
    ],
)
@pytest.mark.core
def test_a_native_error_surfaces_in_spark_with_its_message(spark, c_range, key, value, message):
    with pytest.raises((PySparkException, CapturedException, Exception)) as raised:
        spark.read.format(c_range).option(key, value).load().collect()

    text = str(raised.value)
    assert "NATIVE_DATA_SOURCE_ERROR" in text
    assert message in text


def test_a_source_without_writers_refuses_a_write_clearly(spark, c_range):
    df = spark.range(3)

    with pytest.raises(Exception) as raised:
        df.write.format(c_range).mode("append").save()

    assert "does not declare SPARK_DS_BATCH_WRITE" in str(raised.value)


class BatchCollector:
    """A foreachBatch function that keeps the ids of each micro-batch by batch ID. Spark runs a
    batch again after a restart when its output was not committed: the rows must then be the
    same, since reading an offset range again is repeatable."""

    def __init__(self):
        self.batches = {}

    def __call__(self, df, batch_id):
        ids = sorted(row.id for row in df.select("id").collect())
        if batch_id in self.batches:
            assert self.batches[batch_id] == ids, f"batch {batch_id} read other rows on replay"
        self.batches[batch_id] = ids


def run_until(query, collector, batches, timeout=120):
    deadline = time.monotonic() + timeout
    while len(collector.batches) < batches:
        if query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, f"only {len(collector.batches)} micro-batches ran"
        time.sleep(0.2)
    query.stop()


@pytest.mark.core
def test_a_stream_restarts_from_its_checkpoint_and_reads_every_row_once(
    spark, c_range, tmp_path, refused_resume
):
    rows_per_batch = 7
    checkpoint = str(tmp_path / "checkpoint")
    collector = BatchCollector()

    def start(trigger):
        stream = (
            spark.readStream.format(c_range)
            .option("rows_per_batch", rows_per_batch)
            .option("num_partitions", 2)
            .load()
        )
        return (
            stream.writeStream.foreachBatch(collector)
            .option("checkpointLocation", checkpoint)
            .trigger(**trigger)
            .start()
        )

    run_until(start({"processingTime": "100 milliseconds"}), collector, batches=3)
    first_run = len(collector.batches)
    if refused_resume is not None:
        refused_resume(
            lambda: run_until(start({"processingTime": "100 milliseconds"}), collector, 99)
        )
        return
    run_until(start({"processingTime": "100 milliseconds"}), collector, batches=first_run + 2)
    # Trigger.AvailableNow reads what is available when the query starts, then stops.
    before = len(collector.batches)
    query = start({"availableNow": True})
    assert query.awaitTermination(120)
    assert query.exception() is None
    # One new micro-batch, after any that the stopped run had planned but not run.
    assert before + 1 <= len(collector.batches) <= before + 2

    all_ids = [i for batch in sorted(collector.batches) for i in collector.batches[batch]]
    assert all_ids == list(range(len(all_ids))), "every row once, in order of the batches"
    assert all(len(ids) == rows_per_batch for ids in collector.batches.values())
