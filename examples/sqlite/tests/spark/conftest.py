"""The sqlite example on Spark 4.3: one local session with the JVM plugin's jar, the example's
library in the native library path (for the plugin) and registered through the bridge of
python/."""

import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.dirname(os.path.dirname(HERE))
ROOT = os.path.dirname(os.path.dirname(EXAMPLE))
BRIDGE = os.path.join(ROOT, "python")

sys.path.insert(0, BRIDGE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from library_fixtures import example_library, jar  # noqa: E402,F401 (pytest fixtures)
import spark_session  # noqa: E402

spark_session.python_workers_import(BRIDGE)


@pytest.fixture(scope="session")
def library() -> str:
    """The example's library: the one `cargo test` built, or built here."""
    return example_library("SPARKDS_SQLITE_LIBRARY", "sqlite_example", "sqlite")


@pytest.fixture(scope="session")
def spark(jar, library, tmp_path_factory):
    # The plugin loads the example's library from the native library path.
    libraries = tempfile.mkdtemp(prefix="sparkds-sqlite-tests_lib_")
    shutil.copy(library, libraries)
    session = spark_session.builder(
        "sparkds-sqlite-tests",
        str(tmp_path_factory.mktemp("warehouse")),
        jars=[jar],
        library_path=libraries,
        conf={"spark.task.maxFailures": "1", "spark.python.worker.reuse": "true"},
    )
    with spark_session.started(session) as started:
        yield started
    shutil.rmtree(libraries, ignore_errors=True)


@pytest.fixture(scope="session")
def bridge(spark, library) -> str:
    """The data source name of the example, registered through the bridge."""
    from spark_native_bridge import register

    return register(spark, library).name()
