"""One local Spark session for the whole suite, and the native libraries it tests.

Spark starts slowly, so every test shares one session: `local[2]`, two shuffle partitions, no UI,
errors only in the log. The bridge is imported by the Python workers that Spark spawns, which
inherit this process's environment: PYTHONPATH is set before the session starts.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIDGE = os.path.join(ROOT, "python")
C_RANGE = os.path.join(ROOT, "examples", "c_range")

sys.path.insert(0, BRIDGE)
os.environ["PYTHONPATH"] = os.pathsep.join(
    [BRIDGE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def library_file(directory: str, name: str) -> str:
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return os.path.join(directory, f"libspark_datasource_{name}{suffix}")


@pytest.fixture(scope="session")
def c_range_library() -> str:
    """The c_range example: the one that tests/spark/main.rs built, or built here with its
    Makefile (a no-op when it is up to date)."""
    if os.environ.get("SPARK_E2E_C_RANGE_LIBRARY"):
        return os.environ["SPARK_E2E_C_RANGE_LIBRARY"]
    subprocess.run(["make", "-s", "-C", C_RANGE], check=True)
    return library_file(C_RANGE, "c_range")


WRITER_NAME = "e2e_rw"
WRITER_CAPABILITIES = "batch_read,batch_write,streaming_write,truncate"


@pytest.fixture(scope="session")
def writer_library() -> str:
    """A variant of the template with writers: the one that tests/spark/main.rs generated and
    built, or generated with cargo-generate and built here, as tests/spark/main.rs does."""
    if os.environ.get("SPARK_E2E_WRITER_LIBRARY"):
        return os.environ["SPARK_E2E_WRITER_LIBRARY"]
    destination = tempfile.mkdtemp(prefix="spark_e2e_")
    project = os.path.join(destination, WRITER_NAME)
    subprocess.run(
        [
            "cargo",
            "generate",
            "--path",
            os.path.join(ROOT, "template"),
            "--name",
            WRITER_NAME,
            "--silent",
            "-d",
            f"sdk=path:{ROOT}",
            "-d",
            f"capabilities={WRITER_CAPABILITIES}",
            "--destination",
            destination,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    target = os.path.join(ROOT, "target", "generated")
    subprocess.run(
        ["cargo", "build", "--quiet"],
        cwd=project,
        check=True,
        env=dict(os.environ, CARGO_TARGET_DIR=target),
    )
    shutil.rmtree(destination, ignore_errors=True)
    return library_file(os.path.join(target, "debug"), WRITER_NAME)


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("spark-native-bridge-tests")
        .config("spark.ui.enabled", "false")
        # Tables of the session catalog go to a scratch directory, not into the checkout.
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="sparkds_warehouse_"))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def c_range(spark, c_range_library) -> str:
    """The data source name of c_range, registered in the session."""
    from spark_native_bridge import register

    return register(spark, c_range_library).name()


@pytest.fixture(scope="session")
def writer(spark, writer_library) -> str:
    """The data source name of the generated read-write variant, registered in the session."""
    from spark_native_bridge import register

    return register(spark, writer_library).name()
