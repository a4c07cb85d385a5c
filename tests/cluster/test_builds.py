"""An executor whose library path holds another build of the library: it refuses it, as the
specification says, with NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND, rather than run partitions that
the driver planned with another build."""

import os
import re
import shutil
import subprocess

import pytest
from conftest import ROOT, cluster

LIBRARY = "libspark_datasource_c_range.so"


@pytest.fixture(scope="module")
def builds(tmp_path_factory, c_range_library):
    """The driver's build in one directory, and another build of the same source (compiled
    without optimisation, so its checksum differs) in another."""
    driver_dir = tmp_path_factory.mktemp("driver_lib")
    executor_dir = tmp_path_factory.mktemp("executor_lib")
    shutil.copy(c_range_library, driver_dir / LIBRARY)
    subprocess.run(
        [
            "cc", "-std=c11", "-O0", "-fPIC", "-shared", "-fvisibility=hidden",
            "-I", os.path.join(ROOT, "crates", "spark-datasource"),
            "-o", str(executor_dir / LIBRARY),
            os.path.join(ROOT, "examples", "c_range", "c_range.c"),
        ],
        check=True,
    )
    return driver_dir, executor_dir


@pytest.fixture(scope="module")
def spark(builds, tmp_path_factory):
    driver_dir, executor_dir = builds
    # The driver's processes (its JVM and the Python workers it starts to plan) run in
    # `driver_cwd`, the executors in their own directories: `/proc/self/cwd/...` is then one
    # path that holds the driver's build for the driver only, as the same path would on two
    # nodes of a cluster. The executors' library path holds another build.
    driver_cwd = tmp_path_factory.mktemp("driver_cwd")
    (driver_cwd / "lib").mkdir()
    shutil.copy(driver_dir / LIBRARY, driver_cwd / "lib" / LIBRARY)
    previous = os.getcwd()
    os.chdir(driver_cwd)
    try:
        conf = {"spark.executorEnv.LD_LIBRARY_PATH": str(executor_dir)}
        with cluster("builds", conf) as session:
            yield session
    finally:
        os.chdir(previous)


def test_an_executor_refuses_another_build_of_the_library(spark, builds, tmp_path):
    from spark_native_bridge import register

    driver_dir, executor_dir = builds
    name = register(spark, f"/proc/self/cwd/lib/{LIBRARY}").name()

    with pytest.raises(Exception) as failure:
        spark.read.format(name).option("end", 1000).load().count()

    message = str(failure.value)
    assert "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND" in message, message
    assert "install the same build on every node" in message, message
    # What failed is the read of a partition, which runs in the executors' tasks: the driver
    # planned the read with its build.
    assert re.search(r"in _read\b", message), message

    # Once the executors' library path holds the driver's build, the same query runs.
    shutil.copy(driver_dir / LIBRARY, executor_dir / LIBRARY)
    assert spark.read.format(name).option("end", 1000).load().count() == 1000
