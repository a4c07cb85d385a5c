"""Filter pushdown through the plugin (SupportsPushDownV2Filters and spark_datasource_filters.h):
the bytes that Spark's own predicates become, c_range's accepted predicates gone from the plan
and shown in it, a limit pushed only after every predicate was accepted, predicates on every
type, and the plans of each value of `acceptedFilters`. The rows of generated conditions, NULLs
and empty IN lists, and what rows that break an accepted filter become, on every runtime, are
claimed in tests/claims/test_filters.py."""

import datetime
import math
import os
import re
import struct
import subprocess
import sys
from decimal import Decimal

import pytest
from pyspark.sql import functions as F

from filter_encoding import (
    CONTAINS,
    ENDS_WITH,
    EQ,
    GE,
    GT,
    IN,
    IS_NOT_NULL,
    IS_NULL,
    LT,
    NOT,
    NULL_SAFE_EQ,
    OR,
    STARTS_WITH,
    column,
    i32,
    i64,
    literal,
    predicate,
    predicates_of,
    sized,
    u32,
)
from expected import c_range_rows, rows
from jvm_helpers import ROOT, error_text, executed_plan, native

# -- the bytes of Spark's predicates: a fixture that records what push_filters receives -----------

RECORD_SCHEMA = (
    "b boolean, i8 tinyint, i16 smallint, i32 int, i64 bigint, f32 float, f64 double, "
    "dec decimal(10,2), dec38 decimal(38,6), s string, bin binary, d date, ts timestamp, "
    "ntz timestamp_ntz, st struct<a:int, `b.c`:string>, arr array<int>"
)


@pytest.fixture(scope="module")
def recorder(dirs):
    """tests/jvm/fixtures/record_filters.c, in the session's library path."""
    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "record_filters.c")
    library = os.path.join(dirs["scratch"], "libspark_datasource_record_filters.so")
    subprocess.run(
        ["cc", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-I",
         os.path.join(ROOT, "crates", "spark-datasource"), "-o", library, fixture],
        check=True,
    )
    return library


def recorded(spark, tmp_path, condition):
    """The message that the plugin offered for `condition`, as the fixture recorded it."""
    path = tmp_path / "record.txt"
    df = (
        native(spark, "record_filters", record=str(path)).schema(RECORD_SCHEMA).load()
        .where(condition)
    )
    assert df.collect() == []
    lines = path.read_text().split() if path.exists() else []
    # One offer to the builder's reader, the same again to the reader that plans.
    assert len(set(lines)) <= 1
    return predicates_of(bytes.fromhex(lines[0])) if lines else []


@pytest.mark.parametrize(
    "condition, expected",
    [
        ("b", predicate(EQ, column("b"), literal(1, b"\x01"))),
        ("i8 = 1", predicate(EQ, column("i8"), literal(2, b"\x01"))),
        ("i16 < 300", predicate(LT, column("i16"), literal(3, struct.pack("<h", 300)))),
        ("i32 >= -5", predicate(GE, column("i32"), i32(-5))),
        ("i64 IN (1, 2, 3)", predicate(IN, column("i64"), u32(3), i64(1), i64(2), i64(3))),
        ("i64 <=> 5", predicate(NULL_SAFE_EQ, column("i64"), i64(5))),
        ("i64 != 4", predicate(NOT, predicate(EQ, column("i64"), i64(4)))),
        ("f32 = 1.5", predicate(EQ, column("f32"), literal(6, struct.pack("<f", 1.5)))),
        ("f32 > float('-inf')", predicate(GT, column("f32"), literal(6, struct.pack("<f", -math.inf)))),
        ("f64 = double('NaN')", predicate(EQ, column("f64"), literal(7, struct.pack("<d", math.nan)))),
        (
            "dec = -12.5",
            predicate(EQ, column("dec"), literal(8, (-1250).to_bytes(16, "little", signed=True), b"\x0a\x02")),
        ),
        (
            "dec38 > -99999999999999999999999999999999.999999",
            predicate(
                GT, column("dec38"),
                literal(8, (-(10**38 - 1)).to_bytes(16, "little", signed=True), b"\x26\x06"),
            ),
        ),
        ("s = 'héllo'", predicate(EQ, column("s"), literal(9, sized("héllo".encode())))),
        ("s LIKE 'ab%'", predicate(STARTS_WITH, column("s"), literal(9, sized(b"ab")))),
        ("s LIKE '%ab'", predicate(ENDS_WITH, column("s"), literal(9, sized(b"ab")))),
        ("s LIKE '%ab%'", predicate(CONTAINS, column("s"), literal(9, sized(b"ab")))),
        ("s IS NULL", predicate(IS_NULL, column("s"))),
        ("bin = X'00FF'", predicate(EQ, column("bin"), literal(10, sized(b"\x00\xff")))),
        ("d = DATE'1969-12-31'", predicate(EQ, column("d"), literal(11, struct.pack("<i", -1)))),
        (
            "ts = TIMESTAMP'1970-01-01 00:00:00.000001 UTC'",
            predicate(EQ, column("ts"), literal(12, struct.pack("<q", 1))),
        ),
        (
            "ntz = TIMESTAMP_NTZ'2024-01-01 12:00:00.654321'",
            predicate(EQ, column("ntz"), literal(13, struct.pack("<q", 1704110400654321))),
        ),
        ("st.a = 7", predicate(EQ, column("st", "a"), i32(7))),
        ("st.`b.c` = 'x'", predicate(EQ, column("st", "b.c"), literal(9, sized(b"x")))),
        (
            "i64 = 1 OR i32 = 2",
            predicate(OR, predicate(EQ, column("i64"), i64(1)), predicate(EQ, column("i32"), i32(2))),
        ),
        (
            "NOT (i64 = 1 AND i32 = 2)",
            predicate(
                OR,
                predicate(NOT, predicate(EQ, column("i64"), i64(1))),
                predicate(NOT, predicate(EQ, column("i32"), i32(2))),
            ),
        ),
    ],
)
def test_spark_s_predicates_are_encoded_as_the_header_says(
    spark, recorder, tmp_path, condition, expected
):
    assert expected in recorded(spark, tmp_path, condition)


@pytest.mark.parametrize(
    "condition", ["i64 + 1 = 3", "CAST(i32 AS STRING) = '1'", "size(arr) = 2", "upper(s) = 'A'"]
)
def test_an_expression_the_encoding_cannot_express_is_not_offered(
    spark, recorder, tmp_path, condition
):
    # At most Spark's inferred IS NOT NULL on the column is offered.
    for offered in recorded(spark, tmp_path, condition):
        assert offered[4] == IS_NOT_NULL


# -- c_range --------------------------------------------------------------------------------------


def c_range(spark, end=100, **options):
    return native(spark, "c_range", end=end, num_partitions=3, **options).load()


def spark_itself(spark, condition, end=100):
    """The rows Spark computes itself: the same condition on a DataFrame of c_range's rows
    that no data source reads."""
    local = spark.createDataFrame(c_range_rows(0, end), "id long, label string")
    return rows(local.where(condition))


def filter_nodes(plan):
    """The lines of Spark's Filter operators (not `RuntimeFilters: []`)."""
    return [line for line in plan.splitlines() if re.match(r"^[\s+\-:*()0-9]*Filter ", line)]


@pytest.mark.parametrize(
    "condition, ids, pushed",
    [
        ("id = 42", [42], "PushedFilters: [id = 42]"),
        ("id BETWEEN 10 AND 19", range(10, 20), "PushedFilters: [id >= 10, id <= 19]"),
        ("id IN (1, 5, 7)", [1, 5, 7], "PushedFilters: [id IN (1, 5, 7)]"),
    ],
)
def test_accepted_predicates_are_shown_and_not_evaluated_again(spark, condition, ids, pushed):
    df = c_range(spark).where(condition)

    assert rows(df) == spark_itself(spark, condition) == [r for r in c_range_rows(0, 100) if r[0] in ids]
    plan = executed_plan(df)
    assert pushed in plan
    # Spark no longer filters: the rows are right because the library read only those.
    assert filter_nodes(plan) == []


def test_the_option_push_down_predicate_false_leaves_every_predicate_to_spark(spark):
    condition = "id BETWEEN 10 AND 19"
    df = c_range(spark, pushDownPredicate="false").where(condition)

    assert rows(df) == spark_itself(spark, condition)
    plan = executed_plan(df)
    assert "PushedFilters" not in plan
    assert len(filter_nodes(plan)) == 1
    # The option is the plugin's: it does not reach c_range, which refuses unknown options.
    with pytest.raises(Exception, match="pushDownPredicate` must be `true` or `false`, got `no`"):
        c_range(spark, pushDownPredicate="no").where(condition).collect()


def test_a_predicate_the_library_refuses_stays_in_spark(spark):
    condition = "id > 3 AND label = 'label 9'"
    df = c_range(spark).where(condition)

    assert rows(df) == spark_itself(spark, condition) == [(9, "label 9")]
    plan = executed_plan(df)
    assert "PushedFilters: [id > 3]" in plan
    [spark_filter] = filter_nodes(plan)
    assert "label" in spark_filter and "id#" not in spark_filter


def test_a_limit_is_pushed_only_when_every_predicate_was_accepted(spark):
    accepted = c_range(spark).where("id > 90").limit(3)
    refused = c_range(spark).where("id > 90 AND label LIKE '%9%'").limit(3)

    assert "PushedFilters: [id > 90] PushedLimit: 3" in executed_plan(accepted)
    assert rows(accepted) == [(91, "label 91"), (92, None), (93, "label 93")]
    assert "PushedLimit" not in executed_plan(refused)
    assert rows(refused) == [(91, "label 91"), (93, "label 93"), (94, "label 94")]


def test_the_builder_refuses_a_limit_after_a_refused_predicate(spark):
    """The rule in the builder itself, whatever the order Spark would push in."""
    jvm = spark._jvm
    expressions = jvm.org.apache.spark.sql.connector.expressions
    options = jvm.org.apache.spark.sql.util.CaseInsensitiveStringMap(
        jvm.java.util.Map.of("source", "c_range", "end", "100")
    )
    table = jvm.dev.sparkds.spark.DefaultSource().getTable(
        None, spark.sparkContext._gateway.new_array(expressions.Transform, 0),
        options.asCaseSensitiveMap(),
    )

    def predicates(*items):
        array = spark.sparkContext._gateway.new_array(expressions.filter.Predicate, len(items))
        for i, item in enumerate(items):
            array[i] = item

        return array

    def compare(op, name, value):
        children = spark.sparkContext._gateway.new_array(expressions.Expression, 2)
        children[0] = expressions.Expressions.column(name)
        children[1] = expressions.Expressions.literal(value)
        return expressions.filter.Predicate(op, children)

    on_label = compare("=", "label", "x")
    builder = table.newScanBuilder(options)
    left = builder.pushPredicates(predicates(on_label))
    assert [p.toString() for p in left] == ["label = 'x'"]
    assert list(builder.pushedPredicates()) == []
    assert builder.pushLimit(3) is False

    on_id = compare(">", "id", 2**40)  # a bigint literal: a Python int that needs a Java long
    builder = table.newScanBuilder(options)
    assert list(builder.pushPredicates(predicates(on_id))) == []
    assert [p.toString() for p in builder.pushedPredicates()] == [f"id > {2**40}"]
    assert builder.pushLimit(3) is True
    builder.build()


# -- every type: the fixture accepts no predicate, the rows must still be Spark's -----------------


def test_predicates_on_every_type_return_spark_s_rows(spark, types_library):
    from test_types import sample_rows, write

    schema = native(spark, "jvm_types", table="none", void="false").load().schema
    write(spark, schema, "filters", sample_rows(void=False))
    read = native(spark, "jvm_types", table="filters", void="false").load()
    local = spark.createDataFrame(sample_rows(void=False), schema)
    utc = datetime.timezone.utc
    conditions = [
        F.col("f32").isNull(),
        F.col("f64") == float("nan"),
        F.col("f64") > 1.0,
        F.col("f64").eqNullSafe(float("inf")),
        F.col("f32") == -0.5,
        F.col("i8").isin([]),
        F.col("i16").isin([1, None]),
        F.col("i64") < -(2**62),
        F.col("dec") >= Decimal("0.25"),
        F.col("dec38") == Decimal("-" + "9" * 32 + "." + "9" * 6),
        F.col("s").startswith("row 1"),
        F.col("s").contains("ö"),
        F.col("bin") == b"",
        F.col("d") > datetime.date(2000, 1, 20),
        F.col("ts") < datetime.datetime(2020, 1, 1, 0, 0, 10, tzinfo=utc),
        F.col("ntz") <= datetime.datetime(2020, 1, 1, 0, 0, 0, 10),
        F.col("b") & F.col("i32").isNotNull(),
        F.col("st.a") == 3,
        ~(F.col("i32") > 10) | F.col("s").isNull(),
    ]

    def keyed(df):
        return sorted(repr(r.asDict(recursive=True)) for r in df.collect())

    for condition in conditions:
        assert keyed(read.where(condition)) == keyed(local.where(condition)), str(condition)


def test_the_filter_benchmark_runs_and_its_answers_agree(jar):
    # jvm/bench_filters.py at a small size: every way of reading gives the same answers to each
    # query, through the plugin and the bridge (the script exits non-zero otherwise), and it
    # reports a time for each.
    import json

    output = subprocess.run(
        [sys.executable, os.path.join(ROOT, "jvm", "bench_filters.py"), "--rows", "1e6",
         "--bridge-rows", "2e5", "--repeat", "1", "--json", "--jar", jar],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        timeout=900,
    ).stdout
    report = json.loads(output.strip().splitlines()[-1])
    assert report["rows"] == {"plugin": 1_000_000, "bridge": 200_000}
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from spark_native_bridge._datasource import PUSHES_FILTERS

    every_way = sorted(["no pushdown", "trust", "check", "reevaluate"])
    for runtime in ("plugin", "bridge"):
        pushes = runtime == "plugin" or PUSHES_FILTERS
        for query in ("selective", "wide", "limit"):
            seconds = report["seconds"][runtime][query]
            assert sorted(seconds) == (every_way if pushes else ["no pushdown"])
            assert all(s > 0 for s in seconds.values()), seconds


# -- a library that accepts a filter and ignores it (rule 31) --------------------------------------


@pytest.fixture(scope="module")
def ignoring(dirs):
    """tests/conformance/fixtures/range.c with FAULT_FILTER_BROKEN_ROW, as data source
    `ignored_filters` in the session's library path: it accepts every comparison on `id`, and
    returns every row of [0, end) anyway."""
    from library_fixtures import conformance_fixture

    return conformance_fixture(dirs["scratch"], "ignored_filters", "FAULT_FILTER_BROKEN_ROW")


def ignored(spark, **options):
    # One partition: the first row that breaks the filter is always that of partition 0.
    return native(spark, "ignored_filters", end=20, partitions=1, **options).load()


IGNORED_ERROR = (
    "native data source `ignored_filters`: `read` (partition 0): batch 0, row 0: the accepted "
    "filter `id >= 15` is not TRUE; return only rows where every accepted filter is TRUE, or "
    "answer 0 for it (rule 31: returned rows satisfy the accepted filters; see "
    "https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-31)"
)


def test_checked_rows_keep_the_columns_of_the_accepted_filters(spark, ignoring):
    # `id` is not selected: the read keeps it all the same, so that its rows can be checked.
    df = ignored(spark, acceptedFilters="check").where("id >= 15").select("name")

    with pytest.raises(Exception) as raised:
        df.collect()

    assert IGNORED_ERROR in error_text(raised)
    correct = c_range(spark, acceptedFilters="check").where("id >= 95").select("label")
    assert "PrunedColumns: [label, id] AcceptedFilters: check" in executed_plan(correct)
    assert sorted(r.label for r in correct.collect() if r.label) == [
        "label 96", "label 97", "label 99"
    ]


def test_reevaluated_filters_drop_the_rows_that_break_them(spark, ignoring):
    df = ignored(spark, acceptedFilters="reevaluate").where("id >= 15")

    assert sorted(r.id for r in df.collect()) == [15, 16, 17, 18, 19]
    plan = executed_plan(df)
    assert "PushedFilters: [id >= 15]" in plan and "AcceptedFilters: reevaluate" in plan
    assert len(filter_nodes(plan)) == 1
    # Spark pushes no limit below a filter it evaluates.
    assert "PushedLimit" not in executed_plan(c_range(spark, acceptedFilters="reevaluate")
                                              .where("id > 90").limit(3))


def test_trusted_filters_give_the_library_s_rows(spark, ignoring):
    df = ignored(spark, acceptedFilters="trust").where("id >= 15")

    assert sorted(r.id for r in df.collect()) == list(range(20))
    plan = executed_plan(df)
    assert "AcceptedFilters: trust" in plan and filter_nodes(plan) == []
