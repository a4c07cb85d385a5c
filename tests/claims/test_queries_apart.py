"""A query reads with its own filters only: the filters pushed for one query of a DataFrame never
reach another query of it, of a view of it, of a fresh DataFrame of the same source, or the other
side of a self-join or a union. The same queries, in the same order, run over a local DataFrame
of the same rows are the oracle, with pushdown and without.

pyspark 4.1 to 4.3 keep the read plan of a Python data source's filtered scan on its relation
and hand it to the relation's later scans (see python/spark_native_bridge/_datasource.py,
`_plans_each_scan_apart`): a bridge that pushed filters there answered `df.count()` with the
rows of the `df.where(...)` before it."""

import pytest

from claims import c_range_rows, rows

END = 100


def queries(spark, make, view):
    """The answers of a sequence of queries over the DataFrames that `make()` returns, one
    relation first, then fresh ones: each query's rows, or its count."""
    from pyspark.sql import functions as F

    df = make()
    df.createOrReplaceTempView(view)
    answers = {}
    answers["where id < 30"] = rows(df.where("id < 30"))
    answers["count after a filter"] = df.count()
    answers["where id >= 70 after another"] = rows(df.where("id >= 70"))
    answers["rows after two filters"] = rows(df)
    answers["view: count"] = spark.sql(f"SELECT count(*) AS n FROM {view}").first().n
    answers["view: where id IN (4, 5, 40)"] = rows(
        spark.sql(f"SELECT * FROM {view} WHERE id IN (4, 5, 40)")
    )
    answers["view: spark.table, count"] = spark.table(view).count()
    answers["fresh: where id = 7"] = rows(make().where("id = 7"))
    answers["fresh: count"] = make().count()
    # A join on a key that is not the filter's column, so that Spark infers no filter of the
    # other side: a side that read the other's rows would match none.
    a, b = df.alias("a"), df.where("id < 10").alias("b")
    answers["self-join, one side filtered"] = sorted(
        (r.a_id, r.b_id)
        for r in a.join(b, F.col("a.id") == F.col("b.id") + 50)
        .select(F.col("a.id").alias("a_id"), F.col("b.id").alias("b_id"))
        .collect()
    )
    answers["union of two filters"] = rows(df.where("id < 3").union(df.where("id > 96")))
    answers["count at the end"] = df.count()
    return answers


def shown(answer):
    """A count as it is; rows as their number and the first few."""
    if isinstance(answer, list) and len(answer) > 4:
        return f"{len(answer)} rows {answer[:3]}..."
    return answer


@pytest.mark.core
@pytest.mark.parametrize("pushdown", [True, False], ids=["pushdown", "no_pushdown"])
def test_each_query_reads_with_its_own_filters_only(runtime, pushdown):
    spark = runtime.spark

    def source():
        return runtime.read("c_range", pushdown=pushdown, end=END, num_partitions=3).load()

    def local():
        return spark.createDataFrame(c_range_rows(0, END), "id long, label string")

    suffix = f"{runtime.name}_{'on' if pushdown else 'off'}"
    expected = queries(spark, local, f"apart_local_{suffix}")
    got = queries(spark, source, f"apart_source_{suffix}")

    wrong = [query for query, answer in expected.items() if got[query] != answer]
    assert not wrong, "\n".join(
        f"{query}: read {shown(got[query])}, Spark's own {shown(expected[query])}" for query in wrong
    )
    # The oracle is not vacuous: the filters kept what they should.
    assert expected["count after a filter"] == END
    assert len(expected["self-join, one side filtered"]) == 10
