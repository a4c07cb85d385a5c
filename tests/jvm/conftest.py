"""One local Spark session for the JVM plugin's suite, and the libraries it loads.

The session is a plain JVM Spark (pyspark 4.3 only starts it): the plugin's jar in spark.jars,
the libraries' directories in spark.driver.extraLibraryPath, which Spark's launcher puts in the
driver's LD_LIBRARY_PATH, and so in java.library.path. A scratch directory, also in the library
path, lets tests install libraries while the session runs; another is the session's
spark.sql.dataSource.native.paths. Python only drives the tests: no batch crosses it.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from template_projects import build_c_range, generate_and_build  # noqa: E402

WRITER_NAME = "e2e_rw"
WRITER_CAPABILITIES = "batch_read,batch_write,streaming_write,truncate"

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def pytest_configure(config):
    # `-m core`: the tests of the JVM plugin that tests/lines runs on every Spark line.
    config.addinivalue_line("markers", "core: runs on every Spark line (tests/lines)")


@pytest.fixture(scope="session")
def jar() -> str:
    """The plugin's jar: the one tests/jvm/main.rs built, or built here with jvm/build.sh."""
    if os.environ.get("SPARKDS_JVM_JAR"):
        return os.environ["SPARKDS_JVM_JAR"]
    built = subprocess.run(
        ["bash", os.path.join(ROOT, "jvm", "build.sh"), "--profile", "dev"],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return built.stdout.strip()


@pytest.fixture(scope="session")
def c_range_library() -> str:
    if os.environ.get("SPARK_E2E_C_RANGE_LIBRARY"):
        return os.environ["SPARK_E2E_C_RANGE_LIBRARY"]
    return build_c_range()


@pytest.fixture(scope="session")
def writer_library() -> str:
    """The read-write variant of the template that tests/spark also uses (e2e_rw)."""
    if os.environ.get("SPARK_E2E_WRITER_LIBRARY"):
        return os.environ["SPARK_E2E_WRITER_LIBRARY"]
    return generate_and_build(WRITER_NAME, [f"capabilities={WRITER_CAPABILITIES}"])


FILTERS_NAME = "e2e_filters"
FILTERS_PUSHDOWNS = "push_limit,prune_columns,push_filters"


@pytest.fixture(scope="session")
def filters_library() -> str:
    """The template's sample with filter pushdown (`-d pushdowns=...,push_filters`), the same
    variant as tests/spark's: the one SPARK_E2E_FILTERS_LIBRARY names, or built here."""
    if os.environ.get("SPARK_E2E_FILTERS_LIBRARY"):
        return os.environ["SPARK_E2E_FILTERS_LIBRARY"]
    return generate_and_build(FILTERS_NAME, [f"pushdowns={FILTERS_PUSHDOWNS}"])


TYPES_NAME = "jvm_types"


@pytest.fixture(scope="session")
def types_library() -> str:
    """The fixture of every type: generated from the template with its connector replaced by
    fixtures/types/mod.rs, as tests/jvm/main.rs does."""
    if os.environ.get("SPARKDS_JVM_TYPES_LIBRARY"):
        return os.environ["SPARKDS_JVM_TYPES_LIBRARY"]
    return generate_and_build(
        TYPES_NAME,
        ["capabilities=batch_read,batch_write,truncate", "pushdowns=prune_columns"],
        connector=os.path.join(ROOT, "tests", "jvm", "fixtures", "types", "mod.rs"),
    )


@pytest.fixture(scope="session")
def dirs():
    """Directories the session searches that tests fill while it runs: `scratch`, in the
    native library path, and `packages`, the session's spark.sql.dataSource.native.paths."""
    base = tempfile.mkdtemp(prefix="sparkds_jvm_dirs_")
    made = {name: os.path.join(base, name) for name in ("scratch", "packages")}
    for path in made.values():
        os.makedirs(path)
    yield made
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def spark(
    jar, c_range_library, writer_library, types_library, filters_library, dirs, tmp_path_factory
):
    from pyspark.sql import SparkSession

    library_path = os.pathsep.join(
        [
            os.path.dirname(c_range_library),
            os.path.dirname(writer_library),
            os.path.dirname(types_library),
            os.path.dirname(filters_library),
            dirs["scratch"],
        ]
    )
    # ANCHOR: session
    session = (
        SparkSession.builder.master("local[2]")
        .appName("sparkds-jvm-plugin-tests")
        .config("spark.jars", jar)
        .config("spark.driver.extraLibraryPath", library_path)
        .config("spark.executor.extraLibraryPath", library_path)
        .config("spark.sql.dataSource.native.paths", dirs["packages"])
        .config("spark.ui.enabled", "false")
        # Tables of the session catalog go to a scratch directory, not into the checkout.
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.task.maxFailures", "1")
        .config("spark.sql.streaming.forceDeleteTempCheckpointLocation", "true")
        .getOrCreate()
    )
    # ANCHOR_END: session
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
