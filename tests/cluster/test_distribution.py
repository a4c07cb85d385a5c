"""Reads and writes spread over two executor processes, with the bridge and the libraries
reaching the executors as they reach a real cluster's."""

import glob
import json
import os
import zipfile

import pytest
from conftest import tasks_per_executor, work_dir
from pyspark.sql import functions as F

ROWS = 200_000


@pytest.fixture(scope="module")
def spark(plain_cluster):
    return plain_cluster


def tasks_run_by(spark, action):
    """Runs `action` and returns the number of tasks each executor ran for it."""
    before = tasks_per_executor(spark)
    result = action()
    after = tasks_per_executor(spark)
    return result, {e: after[e] - before.get(e, 0) for e in after}


def exactly_once(df, column="id"):
    """(rows, distinct ids, sum of ids) of `df`: every id of [0, n) once gives (n, n, n(n-1)/2)."""
    row = df.agg(F.count("*"), F.countDistinct(column), F.sum(column)).collect()[0]
    return tuple(row)


def expected(rows):
    return (rows, rows, rows * (rows - 1) // 2)


def test_the_executors_import_the_bridge_that_the_session_shipped(spark):
    files = (
        spark.sparkContext.parallelize(range(8), 8)
        .map(lambda _: __import__("spark_native_bridge").__file__)
        .distinct()
        .collect()
    )
    assert files and all("spark_native_bridge.zip" in f for f in files), files


def test_a_batch_read_runs_its_partitions_on_both_executors(spark, c_range_library):
    from spark_native_bridge import register

    c_range = register(spark, c_range_library).name()
    df = spark.read.format(c_range).option("end", ROWS).option("num_partitions", 8).load()

    counts, ran = tasks_run_by(spark, lambda: exactly_once(df))

    assert counts == expected(ROWS)
    assert len([e for e, n in ran.items() if n > 0]) == 2, f"tasks per executor: {ran}"


def test_a_batch_write_runs_on_both_executors_and_reads_back_once(
    spark, writer_library, tmp_path
):
    from spark_native_bridge import register

    writer = register(spark, writer_library).name()
    path = str(tmp_path / "table")
    rows = spark.range(0, ROWS, 1, 8).select(
        "id", F.concat(F.lit("row "), F.col("id").cast("string")).alias("label")
    )

    _, ran = tasks_run_by(
        spark, lambda: rows.write.format(writer).option("path", path).mode("append").save()
    )

    assert len([e for e, n in ran.items() if n > 0]) == 2, f"tasks per executor: {ran}"
    assert exactly_once(spark.read.format(writer).option("path", path).load()) == expected(ROWS)


def make_package(library, name, directory):
    """A .sparkpkg of `library` for this platform, providing `name`, as the specification lays
    it out."""
    from spark_native_bridge._package import platform_key

    key = platform_key()
    entry = f"{key}/libspark_datasource_{name}.so"
    package = os.path.join(directory, f"{name}-1.0.sparkpkg")
    manifest = {"abiVersion": 1, "dataSources": [name], "libraries": {key: entry}}
    with zipfile.ZipFile(package, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("spark-native-datasource.json", json.dumps(manifest))
        archive.write(library, entry)
    return package


def test_a_package_added_to_the_session_reaches_executors_without_the_library(
    spark, c_range_library, tmp_path
):
    from spark_native_bridge import register_package

    package = make_package(c_range_library, "c_range_shipped", str(tmp_path))
    name = register_package(spark, package).name()
    df = spark.read.format(name).option("end", ROWS).option("num_partitions", 8).load()

    counts, ran = tasks_run_by(spark, lambda: exactly_once(df))

    assert counts == expected(ROWS)
    executors = [e for e, n in ran.items() if n > 0]
    assert len(executors) == 2, f"tasks per executor: {ran}"
    # The executors had the library from nowhere but the package: a package has no driver's path,
    # and their library path does not hold it. Each read it into a private copy, removed once
    # loaded: nothing is left in their directories.
    left = glob.glob(os.path.join(work_dir(), "**", "libspark_datasource_c_range_shipped.so"),
                     recursive=True)
    assert left == [], left


def test_a_package_for_another_platform_is_refused_with_its_platforms(spark, tmp_path):
    from spark_native_bridge import register_package

    package = os.path.join(str(tmp_path), "elsewhere.sparkpkg")
    manifest = {
        "abiVersion": 1,
        "dataSources": ["elsewhere"],
        "libraries": {"osx-aarch64": "osx-aarch64/libspark_datasource_elsewhere.dylib"},
    }
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("spark-native-datasource.json", json.dumps(manifest))
        archive.writestr("osx-aarch64/libspark_datasource_elsewhere.dylib", b"\xcf\xfa\xed\xfe")

    with pytest.raises(ValueError, match="has no library for .* \\(it has: osx-aarch64\\)"):
        register_package(spark, package)
