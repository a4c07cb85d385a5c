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
# The fixtures of the libraries and the jar, shared with the other Spark suites.
from library_fixtures import (  # noqa: E402,F401
    c_range_library,
    writer_library,
    filters_library,
)
import spark_session  # noqa: E402

spark_session.python_workers_import(BRIDGE)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    session = spark_session.builder(
        "spark-native-bridge-tests",
        str(tmp_path_factory.mktemp("warehouse")),
        conf={"spark.python.worker.reuse": "true"},
    )
    with spark_session.started(session) as started:
        yield started


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
