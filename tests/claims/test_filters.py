"""Filter pushdown on every runtime, with Spark as the oracle: for generated conditions over
c_range and over the template's sample with push_filters, the rows a query reads with pushdown
are those it reads without it and those Spark computes itself on the same rows; NULLs and empty
IN lists; and what becomes of rows that break a filter the library accepted (rule 31) under each
value of the option `acceptedFilters`."""

import os
import random
import sys

import pytest

from claims import ROOT, c_range_rows, failure, rows, spark_keeps

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import sample_conditions  # noqa: E402


def c_range(runtime, pushdown=True, **options):
    return runtime.read("c_range", pushdown=pushdown, end=100, num_partitions=3, **options).load()


def random_condition(rng, depth=0):
    """A condition over `id` (sometimes `label`): comparisons, IN lists (empty ones too), NULL
    literals, and AND, OR and NOT of those."""
    from pyspark.sql import functions as F

    id_ = F.col("id")
    value = rng.randrange(-5, 110)
    null = F.lit(None).cast("bigint")
    choice = rng.randrange(10 if depth < 2 else 6)
    if choice == 0:
        return [id_ == value, id_ < value, id_ <= value, id_ > value, id_ >= value][rng.randrange(5)]
    if choice == 1:
        return id_.isin(rng.sample(range(-3, 105), rng.randrange(0, 6)))
    if choice == 2:
        return id_.isin([rng.randrange(100), None])
    if choice == 3:
        return [id_ == null, id_ > null, id_.eqNullSafe(value), id_ != value][rng.randrange(4)]
    if choice == 4:
        return id_.between(value, value + rng.randrange(30))
    if choice == 5:
        return F.col("label").isNotNull() if rng.random() < 0.5 else F.col("label") >= "label 5"
    if choice in (6, 7):
        return random_condition(rng, depth + 1) & random_condition(rng, depth + 1)
    if choice == 8:
        return random_condition(rng, depth + 1) | random_condition(rng, depth + 1)
    return ~random_condition(rng, depth + 1)


@pytest.mark.core
def test_generated_conditions_on_c_range_return_the_rows_spark_computes_itself(runtime):
    rng = random.Random(20240601)
    conditions = [random_condition(rng) for _ in range(30)]
    expected = spark_keeps(runtime.spark, c_range_rows(0, 100), conditions)
    for condition, spark_s in zip(conditions, expected):
        assert rows(c_range(runtime).where(condition)) == spark_s, str(condition)


def test_nulls_and_empty_in_lists_on_c_range(runtime):
    from pyspark.sql import functions as F

    null = F.lit(None).cast("bigint")
    conditions = [
        F.col("id").isin([]),
        F.col("id").isin([1, None]),
        F.col("id") == null,
        F.col("id").eqNullSafe(null),
        ~F.col("id").isin([2, 3]),
        F.col("label").isNull() & (F.col("id") < 10),
    ]
    expected = spark_keeps(runtime.spark, c_range_rows(0, 100), conditions)
    for condition, spark_s in zip(conditions, expected):
        pushed = rows(c_range(runtime).where(condition))
        without = rows(c_range(runtime, pushdown=False).where(condition))
        assert pushed == without == spark_s, str(condition)


def test_the_sample_s_rows_are_spark_s_for_generated_conditions(runtime):
    """The template's sample with `-d pushdowns=...,push_filters` (tests/support/
    sample_conditions.py): its own rows, not c_range's."""

    def read(pushdown):
        return runtime.read("e2e_filters", pushdown=pushdown, end=sample_conditions.END,
                            num_partitions=3).load()

    conditions = sample_conditions.conditions()
    expected = spark_keeps(runtime.spark, sample_conditions.sample_rows(), conditions)
    for condition, spark_s in zip(conditions, expected):
        pushed = rows(read(True).where(condition))
        without = rows(read(False).where(condition))
        assert pushed == without == spark_s, str(condition)


def test_the_sample_s_limit_after_its_accepted_conditions_returns_the_first_rows(runtime):
    df = runtime.read("e2e_filters", end=sample_conditions.END, num_partitions=3).load()

    assert rows(df.where("id >= 10 AND id IN (3, 11, 40)")) == [(11, None), (40, "row 40")]
    assert rows(df.where("id > 30").limit(3)) == [(31, "row 31"), (32, None), (33, "row 33")]


# -- a library that accepts a filter and ignores it (rule 31) --------------------------------------

RULE_31 = (
    "batch 0, row 0: the accepted filter `id >= 15` is not TRUE; return only rows where every "
    "accepted filter is TRUE, or answer 0 for it (rule 31: returned rows satisfy the accepted "
    "filters; see https://sparkds.github.io/spark-datasource-template/reference/rules.html"
    "#rule-31)"
)


def ignored_ids(runtime, **options):
    """The ids that `id >= 15` keeps of the fixture's 20 rows, read in one partition (so that
    the first row that breaks the filter is that of partition 0)."""
    df = runtime.read("ignored_filters", end=20, partitions=1, **options).load()
    return sorted(r.id for r in df.where("id >= 15").collect())


def assert_refused_naming_the_filter_and_the_row(error):
    text = str(error)
    assert "INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE" in text, text
    assert "ignored_filters" in text and RULE_31 in text, text


def test_rows_that_break_an_accepted_filter_never_reach_the_query_by_default(runtime):
    if runtime.accepted_filters_default == "check" and runtime.pushes_filters:
        assert_refused_naming_the_filter_and_the_row(failure(lambda: ignored_ids(runtime)))
    else:
        assert ignored_ids(runtime) == [15, 16, 17, 18, 19]


def test_checked_filters_fail_the_read_naming_the_filter_and_the_row(runtime):
    if not runtime.pushes_filters:
        # Nothing was accepted, so nothing is checked: Spark evaluates the filter.
        assert ignored_ids(runtime, acceptedFilters="check") == [15, 16, 17, 18, 19]
        return
    error = failure(lambda: ignored_ids(runtime, acceptedFilters="check"))

    assert_refused_naming_the_filter_and_the_row(error)


def test_reevaluated_filters_drop_the_rows_that_break_them(runtime):
    assert ignored_ids(runtime, acceptedFilters="reevaluate") == [15, 16, 17, 18, 19]


def test_trusted_filters_give_the_library_s_rows(runtime):
    trusted = ignored_ids(runtime, acceptedFilters="trust")

    assert trusted == (list(range(20)) if runtime.pushes_filters else [15, 16, 17, 18, 19])


def test_the_option_accepted_filters_takes_three_values_in_any_case(runtime):
    text = str(failure(lambda: ignored_ids(runtime, acceptedFilters="maybe")))

    assert "acceptedFilters` must be" in text and "got `maybe`" in text, text
    for value in ("`check`", "`reevaluate`", "`trust`"):
        assert value in text, text
    # The option is the runtime's: c_range, which refuses unknown options, never sees it.
    assert len(c_range(runtime, acceptedFilters="TRUST").where("id > 96").collect()) == 3
