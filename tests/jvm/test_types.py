"""Every type of version 1, round-tripped: Spark's rows become Arrow batches that the plugin
gives to the fixture library's write (tests/jvm/fixtures/types), and the same batches come
back through the plugin's zero-copy reads, with both kinds of column vectors.

The other tests leave the column of type null (void) out, with the fixture's option `void`."""

import datetime
import itertools
from decimal import Decimal

import pytest
from pyspark.sql import Row

from jvm_helpers import executed_plan, native

_counter = itertools.count()


def table_name():
    return f"t{next(_counter)}"


VOID = 14  # the index of the column `nul` in the fixture's schema
LIST = 14  # the index of the column `list` once `nul` is left out


def sample_rows(void=True):
    rows = _rows()
    return rows if void else [row[:VOID] + row[VOID + 1:] for row in rows]


def _rows():
    utc = datetime.timezone.utc
    full = (
        True, 1, 2, 3, 4, 1.5, 2.25,
        Decimal("12345678.90"), Decimal("12345678901234567890123456789012.123456"),
        "héllo wörld", b"\x00\x01\xff",
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 1, 1, 12, 0, 0, 123456, tzinfo=utc),
        datetime.datetime(2024, 1, 1, 12, 0, 0, 654321),
        None, [1, None, 3], Row(a=1, b="x"), {"k": 1, "n": None},
    )
    extremes = (
        False, -128, -32768, -(2**31), -(2**63), -0.5, float("inf"),
        Decimal("-0.01"), Decimal("-" + "9" * 32 + "." + "9" * 6),
        "", b"",
        datetime.date(1970, 1, 1),
        datetime.datetime(1960, 6, 1, 0, 0, 0, 1, tzinfo=utc),
        datetime.datetime(2262, 4, 11, 23, 47, 16, 854775),
        None, [], Row(a=None, b=None), {},
    )
    nulls = tuple([None] * len(full))
    more = [
        (i % 2 == 0, i % 100, i, i * 7, i * 1_000_003, i / 4, i / 8,
         Decimal(i) / 100, Decimal(i) * 10**20, f"row {i}", bytes([i % 256]) * (i % 5),
         datetime.date(2000, 1, 1) + datetime.timedelta(days=i),
         datetime.datetime(2020, 1, 1, tzinfo=utc) + datetime.timedelta(seconds=i),
         datetime.datetime(2020, 1, 1) + datetime.timedelta(microseconds=i),
         None, list(range(i % 4)), Row(a=i, b=None if i % 3 else f"b{i}"),
         {f"k{i}": i})
        for i in range(50)
    ]
    return [full, extremes, nulls] + more


def key(row):
    return repr(row.asDict(recursive=True))


def types(spark, table, void=False):
    return native(spark, "jvm_types", table=table, void=str(void).lower())


@pytest.fixture(scope="module")
def schema(spark, types_library):
    """The fixture's schema without the column of type null."""
    return types(spark, "none").load().schema


@pytest.fixture(scope="module")
def void_schema(spark, types_library):
    return types(spark, "none", void=True).load().schema


def write(spark, schema, table, rows, mode="append", void=False, partitions=3):
    df = spark.createDataFrame(rows, schema).repartition(partitions)
    df.write.format("native").option("source", "jvm_types").option("table", table).option(
        "void", str(void).lower()
    ).mode(mode).save()
    return df


@pytest.mark.parametrize("vectors", ["native", "arrow"])
def test_every_type_round_trips(spark, void_schema, vectors):
    table = table_name()
    expected = write(spark, void_schema, table, sample_rows(), void=True)
    spark.conf.set("spark.sparkds.columnVectors", vectors)
    try:
        read = types(spark, table, void=True).load()
        assert read.schema == void_schema
        assert sorted(map(key, read.collect())) == sorted(map(key, expected.collect()))
        assert read.count() == len(sample_rows())
    finally:
        spark.conf.unset("spark.sparkds.columnVectors")


def test_a_batch_whose_arrays_are_all_empty_is_written(spark, schema):
    table = table_name()
    rows = [row for row in sample_rows(void=False) if row[LIST] == []]

    write(spark, schema, table, rows, partitions=1)

    assert types(spark, table).load().count() == len(rows)


def test_the_schema_names_every_type(void_schema):
    assert [f.dataType.simpleString() for f in void_schema.fields] == [
        "boolean", "tinyint", "smallint", "int", "bigint", "float", "double",
        "decimal(10,2)", "decimal(38,6)", "string", "binary", "date", "timestamp",
        "timestamp_ntz", "void", "array<int>", "struct<a:int,b:string>", "map<string,bigint>",
    ]


def test_pruned_reads_mix_flat_and_nested_columns(spark, schema):
    table = table_name()
    expected = write(spark, schema, table, sample_rows(void=False))
    columns = ["map", "s", "list", "dec38", "st"]

    read = types(spark, table).load().select(*columns)

    # Spark asks for the columns in the table's order, and projects them afterwards.
    assert "PrunedColumns: [dec38, s, list, st, map]" in executed_plan(read)
    assert sorted(map(key, read.collect())) == sorted(map(key, expected.select(*columns).collect()))


def test_an_overwrite_replaces_the_table(spark, schema):
    table = table_name()
    write(spark, schema, table, sample_rows(void=False))
    write(spark, schema, table, sample_rows(void=False)[4:6], mode="overwrite")

    assert sorted(r.i64 for r in types(spark, table).load().collect()) == [1_000_003, 2_000_006]


def test_a_type_outside_version_1_is_refused_before_the_library(spark):
    df = spark.sql("SELECT INTERVAL '1' DAY AS i")

    with pytest.raises(Exception) as raised:
        df.write.format("native").option("source", "jvm_types").option("table", "x").mode(
            "append"
        ).save()

    text = str(raised.value)
    assert "[NATIVE_DATA_SOURCE_UNSUPPORTED_TYPE] column `i` has the type INTERVAL DAY" in text
