"""Batch reads of c_range through the plugin, what only the plugin shows: its pushdowns in the
plan, count(*) over no column in the plan, both kinds of column vectors, a canceled query. What
a read returns, on every runtime, is claimed in tests/claims/test_read.py."""

import pytest

from expected import c_range_rows, rows
from jvm_helpers import executed_plan, native


def test_the_book_s_read_listing_reads_the_range(spark):
    # The listing of book/src/jvm/run.md; tests/claims/test_read.py holds the claim.
    # ANCHOR: read
    df = (
        spark.read.format("native")
        .option("source", "c_range")
        .option("end", 1000)
        .option("num_partitions", 3)
        .option("batch_rows", 7)
        .load()
    )
    # ANCHOR_END: read

    assert df.rdd.getNumPartitions() == 3
    assert rows(df) == c_range_rows(0, 1000)


def test_reads_are_columnar(spark):
    plan = executed_plan(native(spark, "c_range").load())

    assert "BatchScan native.c_range" in plan
    assert "ColumnarToRow" in plan


@pytest.mark.core
def test_a_pushed_limit_and_pruned_columns_show_in_the_plan(spark):
    df = native(spark, "c_range", end=1000).load().select("label").limit(4)

    plan = executed_plan(df)
    # ANCHOR: plan
    # BatchScan native.c_range[label#1] NativeScan c_range [.../libspark_datasource_c_range.so]
    #   PushedLimit: 4 PrunedColumns: [label]
    # ANCHOR_END: plan
    assert "PushedLimit: 4" in plan
    assert "PrunedColumns: [label]" in plan
    assert len(df.collect()) == 4


def test_count_reads_no_column(spark):
    df = native(spark, "c_range", end=12345, batch_rows=1000).load()

    assert df.count() == 12345
    grouped = df.groupBy().count()
    assert "PrunedColumns: []" in executed_plan(grouped)


def test_arrow_column_vectors_read_the_same_rows(spark):
    spark.conf.set("spark.sparkds.columnVectors", "arrow")
    try:
        df = native(spark, "c_range", end=500, batch_rows=64).load()
        assert rows(df) == c_range_rows(0, 500)
        assert df.count() == 500
    finally:
        spark.conf.unset("spark.sparkds.columnVectors")


def test_an_invalid_column_vectors_setting_is_named(spark):
    spark.conf.set("spark.sparkds.columnVectors", "fast")
    try:
        with pytest.raises(Exception) as raised:
            native(spark, "c_range").load().collect()
    finally:
        spark.conf.unset("spark.sparkds.columnVectors")
    assert "spark.sparkds.columnVectors must be `native` or `arrow`, got `fast`" in str(
        raised.value
    )


def test_a_canceled_query_stops_its_native_reads(spark):
    import time

    from pyspark import InheritableThread

    outcome = {}

    def run():
        spark.sparkContext.setJobGroup("sparkds-cancel", "an endless read", interruptOnCancel=True)
        try:
            native(spark, "c_range", end=10**15, batch_rows=4096).load().count()
            outcome["result"] = "finished"
        except Exception as error:  # the cancellation, as the job's failure
            outcome["result"] = str(error)

    thread = InheritableThread(target=run)
    thread.start()
    time.sleep(5)
    started = time.monotonic()
    spark.sparkContext.cancelJobGroup("sparkds-cancel")
    thread.join(timeout=120)

    assert not thread.is_alive(), "the canceled read did not stop"
    assert time.monotonic() - started < 60
    assert "cancel" in outcome["result"].lower()
