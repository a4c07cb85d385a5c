"""Batch reads of c_range from a Connect client: options, schema, pruning and limit pushed to
the library (in the plan the server returns, and in the rows)."""

from connect_helpers import c_range_rows, native, plan, rows


def test_a_batch_read_returns_the_rows_and_schema_of_the_library(spark):
    # ANCHOR: read
    df = spark.read.format("native").option("source", "c_range").option("end", 10).load()
    # ANCHOR_END: read

    assert df.schema.simpleString() == "struct<id:bigint,label:string>"
    assert rows(df) == c_range_rows(0, 10)
    assert df.count() == 10


def test_pruned_columns_and_a_limit_reach_the_library(spark):
    df = native(spark, "c_range", end=1000, num_partitions=1).load().select("id").limit(3)

    shown = plan(df)
    rows = df.collect()

    assert "PrunedColumns: [id]" in shown, shown
    assert "PushedLimit: 3" in shown, shown
    assert [tuple(r) for r in rows] == [(0,), (1,), (2,)]
