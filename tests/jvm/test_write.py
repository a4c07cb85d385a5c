"""Writes through the plugin into the generated read-write variant (e2e_rw), which stages
JSON-lines files and publishes them on commit; a read with the same `path` reads them back. The
claims of writes, on every runtime, are in tests/claims/test_write.py; here are the book's
listings (book/src/jvm/run.md) and what only the plugin is asked: many Arrow batches, an
overwrite refused for want of truncate, and update mode."""

import time

import pytest
from pyspark.sql import functions as F

from expected import c_range_rows
from jvm_helpers import native

SCHEMA = "id long, label string"


def table_rows(spark, path):
    df = native(spark, "e2e_rw", path=path).load()
    return sorted((row.id, row.label) for row in df.collect())


def frame(spark, rows):
    return spark.createDataFrame(rows, SCHEMA).repartition(2)


def save(df, path, mode="append"):
    # ANCHOR: write
    df.write.format("native").option("source", "e2e_rw").option("path", path).mode(mode).save()
    # ANCHOR_END: write


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


def test_an_overwrite_of_a_source_without_truncate_is_refused(spark, tmp_path):
    with pytest.raises(Exception) as raised:
        frame(spark, [(1, "x")]).write.format("native").option("source", "c_range").mode(
            "overwrite"
        ).save()

    assert "c_range" in str(raised.value)


def run_batches(query, batches, timeout=180):
    """Waits until `batches` micro-batches with rows have committed, then stops `query`."""
    deadline = time.monotonic() + timeout
    while sum(1 for p in query.recentProgress if p["numInputRows"] > 0) < batches:
        if query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, "the streaming query did not progress"
        time.sleep(0.3)
    query.stop()


def test_the_book_s_streaming_listing_writes_the_range(spark, tmp_path):
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

    run_batches(start(), 2)

    written = table_rows(spark, path)
    assert len(written) >= 10
    assert written == c_range_rows(0, len(written))


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


def test_a_streaming_write_in_update_mode_appends_the_updated_rows(spark, tmp_path):
    path = str(tmp_path / "table")
    query = start_counts_by_parity(spark, tmp_path, path, "update")
    run_batches(query, 2)

    # Each micro-batch appends the two groups it updated, with their counts so far.
    written = table_rows(spark, path)
    assert len(written) >= 4 and len(written) % 2 == 0
    assert {row[0] for row in written} == {0, 1}
    assert sorted(int(row[1]) for row in written if row[0] == 0)[:2] == [2, 4]
