"""Filter pushdown through the bridge (spark_datasource_filters.h): pyspark's filters encoded
in the header's format, c_range's answers, the accepted filters carried to the executors in the
reader's state, and the plans of queries with and without pushdown. The rows of generated
conditions, NULLs and empty IN lists, and what rows that break an accepted filter become, on
every runtime, are claimed in tests/claims/test_filters.py.

pyspark 4.1 and later offer filters to a Python data source only with
spark.sql.python.filterPushdown.enabled; without it (the default) the bridge reads as before."""

import datetime
import re
import struct
from decimal import Decimal

import pytest
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringContains,
    StringEndsWith,
    StringStartsWith,
)
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    NullType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
from filter_encoding import column, literal, message, predicate, sized, u32
from spark_native_bridge import NativeDataSourceError, _filters
from spark_native_bridge._datasource import PUSHES_FILTERS, NativeReader, _Library, _schema_to_bytes
from spark_native_bridge._native import TaskContext, load

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


SCHEMA = StructType(
    [
        StructField("b", BooleanType()),
        StructField("i8", ByteType()),
        StructField("i16", ShortType()),
        StructField("i32", IntegerType()),
        StructField("id", LongType(), False),
        StructField("f32", FloatType()),
        StructField("f64", DoubleType()),
        StructField("dec", DecimalType(10, 2)),
        StructField("dec38", DecimalType(38, 6)),
        StructField("s", StringType()),
        StructField("bin", BinaryType()),
        StructField("d", DateType()),
        StructField("ts", TimestampType()),
        StructField("ntz", TimestampNTZType()),
        StructField("nul", NullType()),
        StructField("st", StructType([StructField("a", IntegerType()), StructField("b.c", StringType())])),
    ]
)

UTC = datetime.timezone.utc


@pytest.mark.parametrize(
    "filter_, expected",
    [
        (EqualTo(("id",), 42), predicate(1, column("id"), literal(5, struct.pack("<q", 42)))),
        (EqualNullSafe(("i32",), -1), predicate(2, column("i32"), literal(4, struct.pack("<i", -1)))),
        (LessThan(("i8",), -128), predicate(3, column("i8"), literal(2, b"\x80"))),
        (LessThanOrEqual(("i16",), 300), predicate(4, column("i16"), literal(3, struct.pack("<h", 300)))),
        (GreaterThan(("b",), False), predicate(5, column("b"), literal(1, b"\x00"))),
        (GreaterThanOrEqual(("f32",), 1.5), predicate(6, column("f32"), literal(6, struct.pack("<f", 1.5)))),
        (EqualTo(("f32",), float("nan")), predicate(1, column("f32"), literal(6, struct.pack("<f", float("nan"))))),
        (EqualTo(("f64",), -0.0), predicate(1, column("f64"), literal(7, struct.pack("<d", -0.0)))),
        (EqualTo(("f64",), float("-inf")), predicate(1, column("f64"), literal(7, struct.pack("<d", float("-inf"))))),
        (
            EqualTo(("dec",), Decimal("-12.5")),
            predicate(1, column("dec"), literal(8, (-1250).to_bytes(16, "little", signed=True), b"\x0a\x02")),
        ),
        (
            EqualTo(("dec38",), Decimal("-" + "9" * 32 + "." + "9" * 6)),
            predicate(
                1, column("dec38"), literal(8, (-(10**38 - 1)).to_bytes(16, "little", signed=True), b"\x26\x06")
            ),
        ),
        (EqualTo(("s",), "héllo"), predicate(1, column("s"), literal(9, sized("héllo".encode())))),
        (EqualTo(("bin",), b"\x00\xff"), predicate(1, column("bin"), literal(10, sized(b"\x00\xff")))),
        (EqualTo(("d",), datetime.date(1969, 12, 31)), predicate(1, column("d"), literal(11, struct.pack("<i", -1)))),
        (
            EqualTo(("ts",), datetime.datetime(1970, 1, 1, 1, 0, 0, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2)))),
            predicate(1, column("ts"), literal(12, struct.pack("<q", -3600 * 10**6 + 1))),
        ),
        (
            EqualTo(("ntz",), datetime.datetime(2024, 1, 1, 12, 0, 0, 654321)),
            predicate(1, column("ntz"), literal(13, struct.pack("<q", 1704110400654321))),
        ),
        (EqualTo(("st", "a"), 7), predicate(1, column("st", "a"), literal(4, struct.pack("<i", 7)))),
        (StringStartsWith(("st", "b.c"), "x"), predicate(13, column("st", "b.c"), literal(9, sized(b"x")))),
        (StringEndsWith(("s",), ""), predicate(14, column("s"), literal(9, sized(b"")))),
        (StringContains(("bin",), b"\x01"), predicate(15, column("bin"), literal(10, sized(b"\x01")))),
        (
            In(("id",), (1, None, 3)),
            predicate(
                7, column("id"), u32(3), literal(5, struct.pack("<q", 1)), literal(5), literal(5, struct.pack("<q", 3))
            ),
        ),
        (In(("id",), ()), predicate(7, column("id"), u32(0))),
        (In(("nul",), (None,)), predicate(7, column("nul"), u32(1), b"\x01\x00\x01")),
        (IsNull(("s",)), predicate(8, column("s"))),
        (IsNotNull(("st", "a")), predicate(9, column("st", "a"))),
        (Not(EqualTo(("id",), 1)), predicate(12, predicate(1, column("id"), literal(5, struct.pack("<q", 1))))),
        (Not(Not(IsNull(("s",)))), predicate(12, predicate(12, predicate(8, column("s"))))),
    ],
)
def test_each_filter_and_type_is_encoded_as_the_header_says(filter_, expected):
    assert _filters.encode(filter_, SCHEMA) == expected


@pytest.mark.parametrize(
    "filter_",
    [
        EqualTo(("price",), 1),  # no such column
        EqualTo(("ID",), 1),  # Spark gives the schema's spelling
        EqualTo(("st",), 1),  # a struct is no literal type
        EqualTo(("st", "a", "x"), 1),  # not a struct
        EqualTo(("i8",), 128),  # does not fit the column's type
        EqualTo(("id",), 2**63),
        EqualTo(("id",), True),  # a boolean is not an integer
        EqualTo(("id",), "1"),
        EqualTo(("f32",), 0.1),  # a float cannot hold it exactly
        EqualTo(("f32",), 1e300),
        EqualTo(("dec",), Decimal("0.001")),  # needs rounding at scale 2
        EqualTo(("dec",), Decimal("123456789")),  # more digits than decimal(10,2)
        EqualTo(("dec",), Decimal("NaN")),
        EqualTo(("d",), datetime.datetime(2024, 1, 1)),
        EqualTo(("ts",), datetime.datetime(2024, 1, 1)),  # no time zone: no instant
        EqualTo(("ntz",), datetime.datetime(2024, 1, 1, tzinfo=UTC)),
        EqualTo(("nul",), 1),
        StringStartsWith(("id",), "1"),
        In(("id",), (1, "2")),
        Not(EqualTo(("price",), 1)),
    ],
)
def test_a_filter_the_encoding_cannot_express_is_left_to_spark(filter_):
    assert _filters.encode(filter_, SCHEMA) is None


def test_a_string_of_another_collation_is_left_to_spark():
    schema = StructType([StructField("s", StringType("UNICODE_CI"))])
    assert _filters.encode(EqualTo(("s",), "a"), schema) is None
    assert _filters.encode(EqualTo(("s",), "a"), StructType([StructField("s", StringType())])) is not None


def test_a_message_counts_its_predicates():
    first, second = predicate(8, column("s")), predicate(16)
    assert _filters.message([first, second]) == message(first, second)
    assert _filters.message([]) == u32(0)


# -- the bridge and c_range, without Spark -------------------------------------------------------
# What `NativeReader.pushFilters` calls on a pyspark that plans each scan apart (PUSHES_FILTERS);
# on pyspark 4.1 to 4.3 the bridge offers no filter (see the tests through Spark below).

C_RANGE_SCHEMA = StructType([StructField("id", LongType(), False), StructField("label", StringType())])


def c_range_reader(path, options, accepted_filters="trust"):
    """A reader of c_range; `trust` leaves to Spark exactly what the library did not accept."""
    native = load(path, "c_range")
    with native.source(options) as (source, _):
        arrow_schema = _schema_to_bytes(native.schema(source))
    library = _Library(path=path, sha256=native.sha256, name="c_range")
    return NativeReader(library, options, C_RANGE_SCHEMA, arrow_schema, accepted_filters)


def read_ids(reader):
    native = reader.library.load()
    # The task outlives every stream: a stream calls its is_interrupted until it is released.
    task = TaskContext()
    ids = []
    for partition in reader.partitions():
        for batch in native.read(task, partition.state, partition.data):
            ids += batch.column(0).to_pylist()
    return sorted(ids)


def partition_ranges(reader):
    return [struct.unpack("<qq", p.data) for p in reader.partitions()]


def test_c_range_accepts_comparisons_on_id_and_plans_only_their_ids(c_range_library):
    reader = c_range_reader(c_range_library, {"end": "1000", "num_partitions": "2"})
    filters = [GreaterThanOrEqual(("id",), 10), LessThanOrEqual(("id",), 19), IsNotNull(("label",))]

    left = reader._push_filters(filters)

    # Returned by identity, as pyspark requires; the rest is in the state that reaches `read`.
    assert [id(f) for f in left] == [id(filters[2])]
    assert reader.pushed_filters == tuple(filters[:2])
    assert reader.filter_answers == b"\x01\x01\x00"
    assert partition_ranges(reader) == [(10, 15), (15, 20)]
    assert read_ids(reader) == list(range(10, 20))


def test_an_in_list_reaches_the_executors_in_the_reader_state(c_range_library):
    reader = c_range_reader(c_range_library, {"end": "100"})
    assert list(reader._push_filters([In(("id",), (7, 1, 5, None, 500))])) == []

    # The executor's copy of the reader: what Spark pickles after planning.
    import pickle

    executor = pickle.loads(pickle.dumps(reader))
    assert read_ids(executor) == [1, 5, 7]


def test_an_empty_in_list_and_a_null_comparison_keep_no_row(c_range_library):
    for pushed in ([In(("id",), ())], [EqualTo(("id",), None)], [In(("id",), (None,))]):
        reader = c_range_reader(c_range_library, {"end": "100"})
        assert list(reader._push_filters(pushed)) == []
        assert read_ids(reader) == []


def test_what_c_range_does_not_filter_is_left_to_spark(c_range_library):
    reader = c_range_reader(c_range_library, {"end": "10"})
    filters = [
        EqualTo(("label",), "x"),
        Not(EqualTo(("id",), 3)),
        EqualNullSafe(("id",), 3),
        StringStartsWith(("label",), "label"),
        EqualTo(("id",), "3"),  # not encodable: never offered
    ]

    left = reader._push_filters(filters)

    assert [id(f) for f in left] == [id(f) for f in filters]
    assert reader.pushed_filters == ()
    assert read_ids(reader) == list(range(10))


def test_a_library_without_the_extension_is_offered_nothing(writer_library):
    native = load(writer_library, "e2e_rw")
    assert native.push_filters_function is None
    library = _Library(path=writer_library, sha256=native.sha256, name="e2e_rw")
    reader = NativeReader(library, {}, C_RANGE_SCHEMA, b"", "trust")
    filters = [EqualTo(("id",), 1)]

    assert list(reader._push_filters(filters)) == filters
    assert reader.filter_message is None


def test_answers_that_change_on_replay_fail_the_planning(c_range_library):
    reader = c_range_reader(c_range_library, {"end": "10"})
    reader._push_filters([EqualTo(("id",), 3)])
    reader.filter_answers = b"\x00"  # as if the library had answered otherwise the first time

    with pytest.raises(NativeDataSourceError, match=r"CONFORMANCE: answered \[0\] and then \[1\]"):
        reader.partitions()


def test_a_malformed_message_is_the_library_s_error(c_range_library):
    native = load(c_range_library, "c_range")
    with native.source({}) as (source, _):
        with native.exported_schema(native.schema(source)) as schema:
            import ctypes

            with native.handle("create_reader", "close_reader", source, ctypes.byref(schema)) as r:
                with pytest.raises(NativeDataSourceError, match="malformed filters at byte 0"):
                    native.push_filters(r, b"\x05\x00", 5)


# -- through Spark -------------------------------------------------------------------------------


@pytest.fixture()
def pushdown(spark):
    spark.conf.set(PUSHDOWN, "true")
    yield
    spark.conf.unset(PUSHDOWN)


def spark_rows(spark, c_range, condition, end=100, pushdown=True):
    """The rows of c_range where `condition` holds (a SQL string or a Column), with pushdown or
    not, from a DataFrame of its own (pyspark 4.3 keeps a read's planning on its relation)."""
    spark.conf.set(PUSHDOWN, "true" if pushdown else "false")
    df = spark.read.format(c_range).option("end", end).option("num_partitions", 3).load()
    return sorted((r.id, r.label) for r in df.where(condition).collect())


def plan_of(spark, c_range, condition, end=100, accepted_filters=None):
    df = spark.read.format(c_range).option("end", end)
    if accepted_filters is not None:
        df = df.option("acceptedFilters", accepted_filters)
    return df.load().where(condition)._jdf.queryExecution().executedPlan().toString()


def filter_nodes(plan):
    """The lines of Spark's Filter operators in a plan (not `RuntimeFilters: []`)."""
    return [line for line in plan.splitlines() if re.match(r"^[\s+\-:*()0-9]*Filter ", line)]


def expected(condition_rows):
    return sorted((i, None if i % 3 == 2 else f"label {i}") for i in condition_rows)


@pytest.mark.parametrize(
    "condition, ids, left_in_spark",
    [
        ("id = 42", [42], None),
        ("id BETWEEN 10 AND 19", range(10, 20), None),
        ("id IN (1, 5, 7)", [1, 5, 7], None),
        ("id > 3 AND label = 'label 9'", [9], "label"),
        ("id < 5 OR id > 95", [0, 1, 2, 3, 4, 96, 97, 98, 99], "OR"),
    ],
)
def test_queries_return_the_same_rows_with_and_without_pushdown(
    spark, c_range, pushdown, condition, ids, left_in_spark
):
    with_pushdown = spark_rows(spark, c_range, condition)
    without = spark_rows(spark, c_range, condition, pushdown=False)

    assert with_pushdown == without == expected(ids)
    spark.conf.set(PUSHDOWN, "true")
    if not PUSHES_FILTERS:
        # pyspark 4.1 to 4.3: nothing is offered, so Spark evaluates every condition, trusted
        # or not.
        for accepted_filters in ("trust", None):
            [filter_line] = filter_nodes(plan_of(spark, c_range, condition, accepted_filters=accepted_filters))
            assert "id#" in filter_line
        return
    # Trusted, or checked by the workers (the default), the accepted conditions leave Spark's
    # plan: what stays is what c_range refused.
    for accepted_filters in ("trust", None):
        plan = plan_of(spark, c_range, condition, accepted_filters=accepted_filters)
        if left_in_spark is None:
            assert filter_nodes(plan) == []
        else:
            [filter_line] = filter_nodes(plan)
            assert left_in_spark in filter_line
            assert "id#" not in filter_line or left_in_spark == "OR"
    # Reevaluated, Spark evaluates them all again, those c_range accepted too.
    [filter_line] = filter_nodes(plan_of(spark, c_range, condition, accepted_filters="reevaluate"))
    assert "id#" in filter_line


def test_without_the_setting_reads_work_and_spark_filters(spark, c_range):
    spark.conf.unset(PUSHDOWN)
    df = spark.read.format(c_range).option("end", 100).load().where("id = 42")

    assert [r.id for r in df.collect()] == [42]
    assert len(filter_nodes(df._jdf.queryExecution().executedPlan().toString())) == 1


# -- what becomes of the accepted filters (rule 31) ----------------------------------------------


def test_reevaluated_filters_are_pushed_and_left_to_spark_as_well(c_range_library):
    reader = c_range_reader(c_range_library, {"end": "100"}, "reevaluate")
    filters = [GreaterThanOrEqual(("id",), 95), IsNotNull(("label",))]

    left = reader._push_filters(filters)

    # Spark evaluates them all after the scan; c_range still reads only the ids it accepted.
    assert [id(f) for f in left] == [id(f) for f in filters]
    assert reader.pushed_filters == (filters[0],) and reader.checked == ()
    assert read_ids(reader) == list(range(95, 100))


def test_checked_filters_reach_the_executors_copy_of_the_reader(c_range_library):
    import pickle

    reader = c_range_reader(c_range_library, {"end": "100"}, "check")
    filters = [GreaterThanOrEqual(("id",), 95), IsNotNull(("label",))]

    assert [id(f) for f in reader._push_filters(filters)] == [id(filters[1])]

    executor = pickle.loads(pickle.dumps(reader))
    assert executor.checked == (filters[0],)
    ids = [i for p in executor.partitions() for b in executor.read(p)
           for i in b.column(0).to_pylist()]
    assert sorted(ids) == list(range(95, 100))


def test_a_library_that_answers_otherwise_when_replayed_fails_the_plan(tmp_path):
    """Rule 32: the reader that plans is offered what pushFilters offered, and must answer the
    same; tests/conformance/fixtures/range.c with FAULT_UNSTABLE_PUSHDOWN accepts on every other
    offer."""
    from library_fixtures import conformance_fixture

    path = conformance_fixture(str(tmp_path), "unstable", "FAULT_UNSTABLE_PUSHDOWN")
    native = load(path, "unstable")
    options = {"end": "10"}
    with native.source(options) as (source, _):
        arrow_schema = _schema_to_bytes(native.schema(source))
    library = _Library(path=path, sha256=native.sha256, name="unstable")
    schema = StructType([StructField("id", LongType(), False), StructField("name", StringType())])
    reader = NativeReader(library, options, schema, arrow_schema, "check")

    reader._push_filters([GreaterThanOrEqual(("id",), 3)])
    assert len(reader.pushed_filters) == 1
    with pytest.raises(NativeDataSourceError) as refused:
        reader.partitions()
    message = str(refused.value)
    assert "answered [1] and then [0]" in message and "#rule-32" in message, message


# -- why the bridge offers no filter on pyspark 4.1 to 4.3 ---------------------------------------


def test_pyspark_s_reuse_of_a_filtered_read_plan_is_why_the_bridge_pushes_no_filter(spark):
    """The reproduction in the book's page on filters, with a Python data source of its own:
    where pyspark hands one query's filtered read plan to the next scans of the relation, the
    bridge must offer no filter (PUSHES_FILTERS); once a pyspark plans each scan apart, this
    fails, and the bridge may push again."""
    from pyspark.sql.datasource import DataSourceReader

    if not hasattr(DataSourceReader, "pushFilters"):
        pytest.skip("pyspark before 4.1 offers no filter to a Python data source")
    from reused_read_plan import reproduce

    spark.conf.set(PUSHDOWN, "true")
    try:
        answers = reproduce(spark)
    finally:
        spark.conf.unset(PUSHDOWN)

    wrong = [query for query, answer, right in answers if answer != right]
    reused = ["df.count()", "SELECT count(*) FROM ten_view",
              "df.where('id < 2').union(df.where('id > 6')).count()"]
    assert wrong == ([] if PUSHES_FILTERS else reused), answers


def test_register_warns_that_a_library_which_accepts_filters_is_offered_none(
    spark, c_range_library, caplog
):
    from spark_native_bridge import register

    with caplog.at_level("WARNING", logger="spark_native_bridge"):
        register(spark, c_range_library)

    warned = [r.getMessage() for r in caplog.records if r.name == "spark_native_bridge"]
    if PUSHES_FILTERS:
        assert warned == []
    else:
        [message] = warned
        assert message.startswith("c_range accepts filters, but the bridge offers it none"), message
        assert "JVM plugin pushes filters" in message
