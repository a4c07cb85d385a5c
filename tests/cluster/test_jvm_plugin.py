"""The JVM plugin on a cluster of separate processes: the executors load the plugin's jar (and
its JNI library from it) and the native libraries from their own library path, run the tasks of
reads and writes spread over both, and a killed executor's tasks run again elsewhere."""

import os
import shutil

import pytest
from conftest import EXECUTORS, OUTCOMES, ExecutorKiller, cluster, tasks_per_executor
from conftest import plugin_jar, wait_for_executors
from pyspark.sql import functions as F

ROWS = 400_000
# Enough rows that the plugin reads for seconds, labels included, on two executors of one core
# (the test takes about 10 s on two cores, the killed executor's tasks included): the executor
# is killed a second after the tasks start, and the test checks that tasks still ran then.
KILLED_ROWS = 40_000_000


@pytest.fixture(scope="module")
def spark(tmp_path_factory, c_range_library, writer_library):
    # The libraries installed on every node, as the specification asks: here one directory in
    # the library path of the driver and of the executors.
    installed = tmp_path_factory.mktemp("installed")
    for library in (c_range_library, writer_library):
        shutil.copy(library, installed / os.path.basename(library))
    conf = {
        "spark.jars": plugin_jar(),
        "spark.driver.extraLibraryPath": str(installed),
        "spark.executor.extraLibraryPath": str(installed),
        "spark.task.maxFailures": "4",
    }
    with cluster("jvm-plugin", conf) as session:
        yield session


@pytest.fixture(autouse=True)
def both_executors(spark):
    wait_for_executors(spark, EXECUTORS)


def native(spark, source):
    return spark.read.format("native").option("source", source)


def once(df):
    row = df.agg(F.count("*"), F.countDistinct("id"), F.sum("id")).collect()[0]
    return tuple(row)


def expected(rows):
    return (rows, rows, rows * (rows - 1) // 2)


def ran_on(spark, action):
    before = tasks_per_executor(spark)
    result = action()
    after = tasks_per_executor(spark)
    return result, [e for e in after if after[e] > before.get(e, 0)]


def test_a_read_through_the_plugin_runs_on_both_executors(spark):
    df = native(spark, "c_range").option("end", ROWS).option("num_partitions", 8).load()

    counts, executors = ran_on(spark, lambda: once(df))

    assert counts == expected(ROWS)
    assert len(executors) == 2, executors


def test_a_write_through_the_plugin_runs_on_both_executors_and_reads_back(spark, tmp_path):
    path = str(tmp_path / "table")
    rows = spark.range(0, ROWS, 1, 8).select(
        "id", F.concat(F.lit("row "), F.col("id").cast("string")).alias("label")
    )

    _, executors = ran_on(
        spark,
        lambda: rows.write.format("native").option("source", "e2e_rw").option("path", path)
        .mode("append").save(),
    )

    assert len(executors) == 2, executors
    assert once(native(spark, "e2e_rw").option("path", path).load()) == expected(ROWS)


def test_a_read_through_the_plugin_survives_a_killed_executor(spark):
    df = native(spark, "c_range").option("end", KILLED_ROWS).option("num_partitions", 8).load()
    # The labels are read too, so that the tasks last.
    query = df.agg(F.count("*"), F.sum("id"), F.sum(F.length("label")))

    with ExecutorKiller(spark, after_seconds=1.0) as killer:
        count, total, _ = query.collect()[0]

    killer.assert_killed(mid_job=True)
    assert (count, total) == (KILLED_ROWS, KILLED_ROWS * (KILLED_ROWS - 1) // 2)
    OUTCOMES.append(
        f"JVM plugin read, executor killed: completed, {count} rows, the sum of ids exact"
    )
