"""Filter pushdown of the template's sample through the bridge: trusted conditions leave
Spark's plan, the others stay (on a pyspark that plans each scan apart; on 4.1 to 4.3 the bridge
offers no filter, and every condition stays). That its rows are Spark's for generated conditions,
on every runtime, is claimed in tests/claims/test_filters.py."""

import re

from sample_conditions import END
from spark_native_bridge._datasource import PUSHES_FILTERS

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


def read(spark, source, pushdown, accepted_filters="reevaluate"):
    if pushdown:
        spark.conf.set(PUSHDOWN, "true")
    else:
        spark.conf.unset(PUSHDOWN)
    # A DataFrame of its own for each query: pyspark keeps a read's planning on its relation.
    return (
        spark.read.format(source).option("end", END).option("num_partitions", 3)
        .option("acceptedFilters", accepted_filters).load()
    )


def rows(df):
    return sorted((r.id, r.label) for r in df.collect())


def filter_nodes(df):
    plan = df._jdf.queryExecution().executedPlan().toString()
    return [line for line in plan.splitlines() if re.match(r"^[\s+\-:*()0-9]*Filter ", line)]


def test_trusted_conditions_on_id_are_not_evaluated_again_and_the_others_are(
    spark, filters_source
):
    try:
        accepted = read(spark, filters_source, True, "trust").where(
            "id BETWEEN 10 AND 14 OR id = 40"
        )
        # An OR is left to Spark, as the sample accepts only conjuncts it folds into bounds.
        assert len(filter_nodes(accepted)) == 1
        on_id = read(spark, filters_source, True, "trust").where("id >= 10 AND id IN (3, 11, 40)")
        assert len(filter_nodes(on_id)) == (0 if PUSHES_FILTERS else 1)
        assert rows(on_id) == [(11, None), (40, "row 40")]
        limited = read(spark, filters_source, True).where("id > 30").limit(3)
        assert rows(limited) == [(31, "row 31"), (32, None), (33, "row 33")]
    finally:
        spark.conf.unset(PUSHDOWN)
