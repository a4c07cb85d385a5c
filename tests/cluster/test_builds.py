"""An executor whose library path holds another build of the library: it refuses it, as the
specification says, with NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND, rather than run partitions that
the driver planned with another build."""

import os
import re
import shutil
import subprocess

import pytest
from conftest import ROOT

# c_range under a name of its own: the processes of the shared cluster keep the libraries that
# earlier modules loaded, one build per data source name, and would reuse that build of
# c_range (the same as the driver's) rather than look for one.
LIBRARY = "libspark_datasource_c_range_builds.so"


@pytest.fixture(scope="module")
def spark(plain_cluster):
    return plain_cluster


@pytest.fixture(scope="module")
def builds(node_paths, c_range_library):
    """The driver's build in `lib/` of the driver's working directory: `/proc/self/cwd/lib/...`
    is then one path that holds it for the driver only, as the same path would on two nodes of
    a cluster. Another build of the same source (compiled without optimisation, so its checksum
    differs) in the executors' library path. Both removed afterwards, for the modules that share
    the cluster."""
    driver_lib = os.path.join(node_paths.driver_cwd, "lib")
    os.makedirs(driver_lib)
    driver_build = os.path.join(driver_lib, LIBRARY)
    shutil.copy(c_range_library, driver_build)
    executor_build = os.path.join(node_paths.executor_library_path, LIBRARY)
    subprocess.run(
        [
            "cc", "-std=c11", "-O0", "-fPIC", "-shared", "-fvisibility=hidden",
            "-I", os.path.join(ROOT, "crates", "spark-datasource"),
            "-o", executor_build,
            os.path.join(ROOT, "examples", "c_range", "c_range.c"),
        ],
        check=True,
    )
    try:
        yield driver_build, executor_build
    finally:
        shutil.rmtree(driver_lib)
        os.remove(executor_build)


def test_an_executor_refuses_another_build_of_the_library(
    spark, builds, node_paths, monkeypatch
):
    from spark_native_bridge import register

    driver_build, executor_build = builds
    # This process resolves `/proc/self/cwd` as the driver's JVM and its Python workers do.
    monkeypatch.chdir(node_paths.driver_cwd)
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
    shutil.copy(driver_build, executor_build)
    assert spark.read.format(name).option("end", 1000).load().count() == 1000
