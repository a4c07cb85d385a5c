"""Filter pushdown of the template's sample through the JVM plugin, with Spark as the oracle:
for generated conditions over `id` (tests/support/sample_conditions.py), the rows a query reads
with pushdown are those it reads with the option pushDownPredicate=false (every condition
evaluated by Spark) and those Spark computes itself on the same rows."""

import os
import sys

from jvm_helpers import ROOT, executed_plan, native

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from sample_conditions import END, conditions, sample_rows  # noqa: E402

SOURCE = "e2e_filters"


def read(spark, pushdown):
    predicate = "true" if pushdown else "false"
    return native(spark, SOURCE, end=END, num_partitions=3, pushDownPredicate=predicate).load()


def rows(df):
    return sorted((r.id, r.label) for r in df.collect())


def test_the_sample_s_rows_are_spark_s_for_generated_conditions(spark):
    local = spark.createDataFrame(sample_rows(), "id long, label string")
    for condition in conditions():
        pushed = rows(read(spark, True).where(condition))
        without = rows(read(spark, False).where(condition))
        itself = rows(local.where(condition))
        assert pushed == without == itself, str(condition)


def test_the_sample_s_accepted_conditions_are_pushed_and_the_limit_after_them(spark):
    on_id = read(spark, True).where("id >= 10 AND id IN (3, 11, 40)")
    assert "PushedFilters: [id >= 10, id IN (3, 11, 40)]" in executed_plan(on_id)
    assert rows(on_id) == [(11, None), (40, "row 40")]
    assert "PushedFilters" not in executed_plan(read(spark, False).where("id = 3"))
    limited = read(spark, True).where("id > 30").limit(3)
    assert rows(limited) == [(31, "row 31"), (32, None), (33, "row 33")]
