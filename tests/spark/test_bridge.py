"""Parts of the bridge that need no Spark session: names, capability checks, Row batching and
the layout of the ctypes mirrors."""

import ctypes
import os
import subprocess
import sys

import pyarrow as pa
import pytest
from conftest import ROOT
from pyspark.sql import Row
from spark_native_bridge import NativeDataSourceError, _abi, data_source_name, library_file_name
from spark_native_bridge._datasource import (
    _batches,
    _check_write_capabilities,
    _Library,
    _WriteSpec,
)


@pytest.mark.parametrize(
    "path, name",
    [
        ("/x/libspark_datasource_c_range.so", "c_range"),
        ("libspark_datasource_My_Source.dylib", "my_source"),
        ("C:/x/spark_datasource_rust_range.dll", "rust_range"),
    ],
)
def test_the_data_source_name_comes_from_the_library_file(path, name):
    assert data_source_name(path) == name


def test_a_file_without_the_prefix_asks_for_a_name():
    with pytest.raises(ValueError, match="pass name="):
        data_source_name("/x/librange.so")


def test_the_file_name_follows_the_platform():
    assert library_file_name("c_range") in {
        "libspark_datasource_c_range.so",
        "libspark_datasource_c_range.dylib",
        "spark_datasource_c_range.dll",
    }


def spec(mode, streaming=False):
    library = _Library(path="/x/lib.so", sha256="0", name="demo")
    return _WriteSpec(library, {}, b"", "query", mode, streaming)


def test_overwrite_needs_the_truncate_capability():
    with pytest.raises(NativeDataSourceError, match='SPARK_DS_TRUNCATE.*mode\\("overwrite"\\)'):
        _check_write_capabilities(spec(_abi.SPARK_DS_WRITE_TRUNCATE), _abi.SPARK_DS_BATCH_WRITE)

    _check_write_capabilities(
        spec(_abi.SPARK_DS_WRITE_TRUNCATE), _abi.SPARK_DS_BATCH_WRITE | _abi.SPARK_DS_TRUNCATE
    )


def test_a_streaming_write_needs_the_streaming_write_capability():
    with pytest.raises(NativeDataSourceError, match="does not support streaming writes"):
        _check_write_capabilities(spec(_abi.SPARK_DS_WRITE_APPEND, True), _abi.SPARK_DS_BATCH_WRITE)


def test_rows_are_gathered_into_batches_of_the_schema():
    schema = pa.schema([pa.field("id", pa.int64(), False), pa.field("label", pa.string())])
    rows = [Row(id=i, label=None if i % 2 else str(i)) for i in range(3)]

    batches = list(_batches(iter(rows), schema))

    assert [b.schema for b in batches] == [schema]
    assert batches[0].to_pylist() == [
        {"id": 0, "label": "0"},
        {"id": 1, "label": None},
        {"id": 2, "label": "2"},
    ]


MIRRORS = {
    "SparkDsLibrary": _abi.SparkDsLibrary,
    "SparkDsHost": _abi.SparkDsHost,
    "SparkDsCreateInfo": _abi.SparkDsCreateInfo,
    "SparkDsTaskContext": _abi.SparkDsTaskContext,
    "SparkDsWriteInfo": _abi.SparkDsWriteInfo,
    "SparkDsFilterTable": _abi.SparkDsFilterTable,
    "struct ArrowSchema": _abi.ArrowSchema,
    "struct ArrowArray": _abi.ArrowArray,
    "struct ArrowArrayStream": _abi.ArrowArrayStream,
}


def test_the_ctypes_mirrors_have_the_layout_that_the_c_compiler_gives_the_header(tmp_path):
    """Every struct of the size, and every field at the offset, that the C compiler computes from
    spark_datasource.h (and spark_datasource_filters.h) on this platform."""
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "spark_datasource.h"',
             '#include "spark_datasource_filters.h"']
    lines.append("int main(void) {")
    for c_name, mirror in MIRRORS.items():
        lines.append(f'  printf("{c_name}|sizeof|%zu\\n", sizeof({c_name}));')
        for field, _ in mirror._fields_:
            lines.append(f'  printf("{c_name}|{field}|%zu\\n", offsetof({c_name}, {field}));')
    lines.append("  return 0;\n}")
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines))
    program = tmp_path / "layout"
    header = os.path.join(ROOT, "crates", "spark-datasource")
    subprocess.run(["cc", "-std=c11", "-I", header, "-o", str(program), str(source)], check=True)

    output = subprocess.run([str(program)], check=True, capture_output=True, text=True).stdout

    checked = 0
    for line in output.splitlines():
        c_name, field, value = line.split("|")
        mirror = MIRRORS[c_name]
        actual = ctypes.sizeof(mirror) if field == "sizeof" else getattr(mirror, field).offset
        assert actual == int(value), f"{c_name} {field}: ctypes {actual}, C {value}"
        checked += 1
    assert checked == sum(len(m._fields_) + 1 for m in MIRRORS.values())


def test_the_bridge_installs_with_pip_as_one_package(tmp_path):
    """Generated projects, the examples and these tests share one bridge: the package in
    `python/`, which `pip install` installs with its README as the package's description."""
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--disable-pip-version-check", "--target", str(target), os.path.join(ROOT, "python")],
        check=True,
    )
    probe = subprocess.run(
        [sys.executable, "-c", "import spark_native_bridge, sys; "
         "sys.stdout.write(spark_native_bridge.__file__)"],
        env={**os.environ, "PYTHONPATH": str(target)},
        capture_output=True, text=True, check=True,
    )
    assert probe.stdout.startswith(str(target))
    metadata = next(target.glob("spark_native_bridge-*.dist-info")) / "METADATA"
    assert "Name: spark-native-bridge" in metadata.read_text()
