"""One local Spark session for the whole suite, and the native libraries it tests.

Spark starts slowly, so every test shares one session: `local[2]`, two shuffle partitions, no UI,
errors only in the log. The bridge is imported by the Python workers that Spark spawns, which
inherit this process's environment: PYTHONPATH is set before the session starts.
"""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIDGE = os.path.join(ROOT, "python")

sys.path.insert(0, BRIDGE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from template_projects import build_c_range, generate_and_build  # noqa: E402

os.environ["PYTHONPATH"] = os.pathsep.join(
    [BRIDGE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def pytest_configure(config):
    # `-m core`: the tests of the bridge that tests/lines runs on every Spark line.
    config.addinivalue_line("markers", "core: runs on every Spark line (tests/lines)")


@pytest.fixture(scope="session")
def c_range_library() -> str:
    """The c_range example: the one that tests/spark/main.rs built, or built here with its
    Makefile (a no-op when it is up to date)."""
    if os.environ.get("SPARK_E2E_C_RANGE_LIBRARY"):
        return os.environ["SPARK_E2E_C_RANGE_LIBRARY"]
    return build_c_range()


WRITER_NAME = "e2e_rw"
WRITER_CAPABILITIES = "batch_read,batch_write,streaming_write,truncate"


@pytest.fixture(scope="session")
def writer_library() -> str:
    """A variant of the template with writers: the one that tests/spark/main.rs generated and
    built, or generated with cargo-generate and built here, as tests/spark/main.rs does."""
    if os.environ.get("SPARK_E2E_WRITER_LIBRARY"):
        return os.environ["SPARK_E2E_WRITER_LIBRARY"]
    return generate_and_build(WRITER_NAME, [f"capabilities={WRITER_CAPABILITIES}"])


FILTERS_NAME = "e2e_filters"
FILTERS_PUSHDOWNS = "push_limit,prune_columns,push_filters"


@pytest.fixture(scope="session")
def filters_library() -> str:
    """The template's sample with filter pushdown (`-d pushdowns=...,push_filters`): the one
    SPARK_E2E_FILTERS_LIBRARY names, or generated with cargo-generate and built here."""
    if os.environ.get("SPARK_E2E_FILTERS_LIBRARY"):
        return os.environ["SPARK_E2E_FILTERS_LIBRARY"]
    return generate_and_build(FILTERS_NAME, [f"pushdowns={FILTERS_PUSHDOWNS}"])


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("spark-native-bridge-tests")
        .config("spark.ui.enabled", "false")
        # Tables of the session catalog go to a scratch directory, not into the checkout.
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
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
def refused_resume(spark):
    """None where the bridge resumes a stream from its checkpoint (pyspark 4.2 and later).
    pyspark before 4.2 does not pass the start offset to latestOffset, and the bridge refuses
    to guess it: then a check that a restart (a function) fails with the bridge's message."""
    if tuple(int(part) for part in spark.version.split(".")[:2]) >= (4, 2):
        return None

    def check(restart):
        with pytest.raises(Exception) as raised:
            restart()
        text = str(raised.value)
        assert "cannot resume a stream from its checkpoint" in text, text
        assert "use Spark 4.2 or later" in text

    return check


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


@pytest.fixture(scope="session")
def filters_source(spark, filters_library) -> str:
    """The data source name of the sample with filter pushdown, registered in the session."""
    from spark_native_bridge import register

    return register(spark, filters_library).name()
