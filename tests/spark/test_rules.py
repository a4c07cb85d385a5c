"""The rules of the interface that the bridge checks, each broken by one fault of the conformance
fixture (tests/conformance/fixtures/range.c) and found where the bridge runs it: loading, the
source, the reader's calls, the reads, the writes. The rules chapter's table of what the bridge
checks cites this file: a rule that is not here, the bridge does not check.

The bridge is driven without Spark, through the classes Spark calls (a data source, its reader
and writer), each fault under a data source name of its own (a process loads one build per
name)."""

import subprocess

import pyarrow as pa
import pytest
from pyspark.sql.datasource import GreaterThanOrEqual
from pyspark.sql.types import LongType, StructField, StructType
from spark_native_bridge import _native
from spark_native_bridge._datasource import NativeDataSource, _Library


def data_source(path: str, name: str):
    """The bridge's data source of the library at `path`, with the options of a small read."""
    native = _native.load(path, name)
    library = _Library(path=path, sha256=native.sha256, name=name)
    return type("Source", (NativeDataSource,), {"_library": library})({"end": "8"})


def read_and_write(path: str, name: str) -> None:
    """A read of every partition with a filter pushed and checked, then a write of one batch by
    two tasks, committed: what the bridge does for a query, in order."""
    source = data_source(path, name)
    reader = source.reader(source.schema())
    reader.accepted_filters = "check"
    # What pushFilters calls where the bridge offers filters (not on pyspark 4.1 to 4.3, which
    # reuse a filtered read plan: spark_native_bridge._datasource.PUSHES_FILTERS).
    reader._push_filters([GreaterThanOrEqual(("id",), 4)])
    for partition in reader.partitions():
        for _ in reader.read(partition):
            pass
    schema = StructType([StructField("id", LongType(), False)])
    writer = source.writer(schema, False)
    arrow_schema = pa.schema([pa.field("id", pa.int64(), False)])
    batch = pa.RecordBatch.from_arrays([pa.array([1, 2], pa.int64())], schema=arrow_schema)
    writer.commit([writer.write(iter([batch])), writer.write(iter([batch]))])


CASES = [
    ("SMALL_TABLE", 2, "failed in `spark_ds_init`: the table's size is 160 bytes"),
    ("ABI_VERSION", 3, "the table has abi_version 2, but this bridge supports version 1 only"),
    ("MISSING_WRITE", 4, "failed in `create`: declares SPARK_DS_BATCH_WRITE but `write` is NULL"),
    ("LATE_SINK", 10, "failed in `serialize_reader`: called add 0 times: it must call it once"),
    ("NULL_ROW", 16, "non-zero null count, cannot be imported as RecordBatch"),
    ("SHORT_COLUMN", 16, "CONFORMANCE: batch 0 is not valid Arrow: Number of rows in column 1 "
                         "did not match batch: 3 vs 4"),
    ("NULL_IN_NOT_NULL", 17, "failed in `read`: returned 1 nulls in column `id`, which is not "
                             "nullable"),
    ("NULL_HANDLE", 21, "failed in `create_reader`: INVALID_NATIVE_DATA_SOURCE_LIBRARY."
                        "CONFORMANCE: returned 0 but a NULL handle"),
    ("FILTER_SINK_TWICE", 30, "CONFORMANCE: called accepted 2 times: it must call it once"),
    ("FILTER_WRONG_COUNT", 30, "CONFORMANCE: answered [0, 0] for 1 predicates"),
    ("FILTER_ANSWER_TWO", 30, "CONFORMANCE: answered [2] for 1 predicates"),
    ("FILTER_BROKEN_ROW", 31, "CONFORMANCE: batch 0, row 0: the accepted filter `id >= 4` is "
                              "not TRUE"),
]


@pytest.mark.parametrize("fault, rule, message", CASES, ids=[c[0] for c in CASES])
def test_the_bridge_finds_the_broken_rule(fault, rule, message, tmp_path):
    from library_fixtures import conformance_fixture

    name = f"rules_{fault.lower()}"
    path = conformance_fixture(str(tmp_path), name, f"FAULT_{fault}")

    with pytest.raises(Exception) as raised:
        read_and_write(path, name)

    assert message in str(raised.value), f"rule {rule}: {raised.value}"


def test_a_library_without_spark_ds_init_is_refused(tmp_path):
    """Rule 1, the symbol: a shared library that does not export spark_ds_init."""
    source = tmp_path / "no_init.c"
    source.write_text("int not_a_data_source(void) { return 0; }\n")
    library = tmp_path / "libspark_datasource_rules_no_init.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)

    with pytest.raises(Exception) as raised:
        _native.load(str(library), "rules_no_init")

    assert "does not export spark_ds_init: it is not a native data source library" in str(
        raised.value
    )


def test_the_good_fixture_reads_and_writes(tmp_path):
    """The same path with the fixture built as is: every failure above is its fault's."""
    from library_fixtures import conformance_fixture

    read_and_write(conformance_fixture(str(tmp_path), "rules_good"), "rules_good")
