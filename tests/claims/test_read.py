"""Batch reads of c_range, on every runtime: the options reach the library, the schema is the
library's with its nullability, a schema given by the query and a pruned read return only their
columns, count(*) reads none, and a library's error reaches the query with its message."""

import pytest

from claims import c_range_rows, failure, rows


@pytest.mark.core
def test_a_batch_read_passes_the_options_to_the_library(runtime):
    df = runtime.read("c_range", end=1000, num_partitions=3, batch_rows=7).load()

    assert rows(df) == c_range_rows(0, 1000)
    if runtime.name != "connect":  # a Connect client has no RDD
        assert df.rdd.getNumPartitions() == 3


def test_without_options_the_library_s_defaults_are_read(runtime):
    assert rows(runtime.read("c_range").load()) == c_range_rows(0, 10)


def test_the_schema_comes_from_the_library_with_its_nullability(runtime):
    schema = runtime.read("c_range").load().schema

    assert [(f.name, f.dataType.simpleString(), f.nullable) for f in schema.fields] == [
        ("id", "bigint", False),
        ("label", "string", True),
    ]


def test_a_schema_given_by_the_query_reads_only_its_columns(runtime):
    df = runtime.read("c_range", end=5).schema("id long not null").load()

    assert [tuple(row) for row in df.collect()] == [(i,) for i in range(5)]


@pytest.mark.core
def test_a_pruned_read_and_a_limit_return_only_what_was_asked(runtime):
    pruned = runtime.read("c_range", end=30).load().select("id")
    assert sorted(row.id for row in pruned.collect()) == list(range(30))

    limited = runtime.read("c_range", end=1000, num_partitions=1).load().select("label").limit(4)
    assert [tuple(row) for row in limited.collect()] == [("label 0",), ("label 1",), (None,),
                                                         ("label 3",)]


def test_count_reads_every_row_and_no_column(runtime):
    assert runtime.read("c_range", end=12345, batch_rows=1000).load().count() == 12345


def test_an_empty_range_reads_no_rows(runtime):
    assert runtime.read("c_range", end=0).load().count() == 0


def test_a_filter_runs_on_the_library_s_rows(runtime):
    df = runtime.read("c_range", end=100).load().where("id % 10 = 3 and label is not null")

    assert rows(df) == [(i, f"label {i}") for i in range(3, 100, 10) if i % 3 != 2]


@pytest.mark.core
@pytest.mark.parametrize(
    "key, value, message",
    [
        ("end", "ten", "option `end` must be a non-negative integer, got `ten`"),
        ("num_partitions", "0", "option `num_partitions` must be a positive integer, got `0`"),
        ("colour", "red", "unknown option `colour`: the options of c_range are `end`"),
    ],
)
def test_a_library_s_error_reaches_the_query_with_its_class_and_message(
    runtime, key, value, message
):
    error = failure(lambda: runtime.read("c_range", **{key: value}).load().collect())

    text = str(error)
    assert "NATIVE_DATA_SOURCE_ERROR" in text, text
    assert message in text, text
    assert "INTERNAL_ERROR" not in text, text
