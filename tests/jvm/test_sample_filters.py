"""Filter pushdown of the template's sample through the JVM plugin: the conditions it accepts
shown in the plan, none with the option pushDownPredicate=false. That its rows are Spark's for
generated conditions, on every runtime, is claimed in tests/claims/test_filters.py."""

import os
import sys

from jvm_helpers import ROOT, executed_plan, native

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from sample_conditions import END  # noqa: E402

SOURCE = "e2e_filters"


def read(spark, pushdown):
    predicate = "true" if pushdown else "false"
    return native(spark, SOURCE, end=END, num_partitions=3, pushDownPredicate=predicate).load()


def rows(df):
    return sorted((r.id, r.label) for r in df.collect())


def test_the_sample_s_accepted_conditions_are_pushed_and_the_limit_after_them(spark):
    on_id = read(spark, True).where("id >= 10 AND id IN (3, 11, 40)")
    assert "PushedFilters: [id >= 10, id IN (3, 11, 40)]" in executed_plan(on_id)
    assert rows(on_id) == [(11, None), (40, "row 40")]
    assert "PushedFilters" not in executed_plan(read(spark, False).where("id = 3"))
    limited = read(spark, True).where("id > 30").limit(3)
    assert rows(limited) == [(31, "row 31"), (32, None), (33, "row 33")]
