"""The runtimes that every claim runs on (`runtime`, one parameter per runtime), and the sessions
behind them.

SPARKDS_CLAIMS_RUNTIMES chooses them (`plugin,bridge,connect` when unset). The plugin and the
bridge share one classic session: the plugin's jar in spark.jars, the libraries' directories in
its native library path, the bridge on the Python workers' path. Connect runs in a pytest process
of its own (tests/claims/main.rs starts two): once a process has made a Connect session, pyspark's
functions build Connect's columns, which a classic session cannot use. Its server is pyspark's,
with the same jar and library path (tests/support/connect_server.py).
"""

import os
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIDGE = os.path.join(ROOT, "python")
sys.path.insert(0, BRIDGE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
# The fixtures of the libraries and the jar, shared with the other Spark suites.
from library_fixtures import (  # noqa: E402,F401
    conformance_fixture,
    jar,
    c_range_library,
    writer_library,
    filters_library,
)
import connect_server  # noqa: E402
import spark_session  # noqa: E402
from runtimes import PYTHON_PUSHDOWN, Bridge, Connect, Plugin  # noqa: E402

# The Python workers that the classic session spawns import the bridge from the checkout.
spark_session.python_workers_import(BRIDGE)

ALL_RUNTIMES = ("plugin", "bridge", "connect")


def chosen_runtimes():
    names = [n.strip() for n in os.environ.get("SPARKDS_CLAIMS_RUNTIMES", "").split(",") if n.strip()]
    unknown = sorted(set(names) - set(ALL_RUNTIMES))
    if unknown:
        raise pytest.UsageError(
            f"SPARKDS_CLAIMS_RUNTIMES names {', '.join(unknown)}: the runtimes are "
            f"{', '.join(ALL_RUNTIMES)}"
        )
    if "connect" in names and len(names) > 1:
        raise pytest.UsageError(
            "SPARKDS_CLAIMS_RUNTIMES: `connect` runs in a pytest process of its own (a Connect "
            "session changes pyspark's functions for the whole process)"
        )
    return names or ["plugin", "bridge"]


def pyspark_line():
    import pyspark

    return tuple(int(part) for part in pyspark.__version__.split(".")[:2])


def pytest_configure(config):
    # `-m core`: the claims that tests/lines runs on every Spark line.
    config.addinivalue_line("markers", "core: runs on every Spark line (tests/lines)")


def pytest_generate_tests(metafunc):
    if "runtime" in metafunc.fixturenames:
        metafunc.parametrize("runtime", chosen_runtimes(), indirect=True, scope="session")


@pytest.fixture(scope="session")
def fixtures_dir():
    """A directory in every session's native library path for libraries that tests build while
    the session runs (the conformance fixture's fault switches)."""
    made = tempfile.mkdtemp(prefix="sparkds_claims_")
    yield made
    shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="session")
def libraries(c_range_library, writer_library, filters_library, fixtures_dir):
    """Every data source the claims read or write, by name, and its library: the examples', and
    tests/conformance/fixtures/range.c built with the switch that each claim needs."""
    return {
        "c_range": c_range_library,
        "e2e_rw": writer_library,
        "e2e_filters": filters_library,
        # It accepts every comparison on `id`, and returns every row of [0, end) anyway.
        "ignored_filters": conformance_fixture(
            fixtures_dir, "ignored_filters", "FAULT_FILTER_BROKEN_ROW"
        ),
        # It records each call of the driver's write protocol (tests/support/recorded_writes.py).
        "recorded_writes": conformance_fixture(fixtures_dir, "recorded_writes", "RECORD_WRITES"),
    }


def library_path(libraries):
    return os.pathsep.join(sorted({os.path.dirname(path) for path in libraries.values()}))


@pytest.fixture(scope="session")
def classic_spark(jar, libraries, tmp_path_factory):
    session = spark_session.builder(
        "sparkds-claims",
        str(tmp_path_factory.mktemp("warehouse")),
        jars=[jar],
        library_path=library_path(libraries),
        conf={
            "spark.task.maxFailures": "1",
            "spark.python.worker.reuse": "true",
            PYTHON_PUSHDOWN: "true",
        },
    )
    with spark_session.started(session) as started:
        yield started


@pytest.fixture(scope="session")
def connect_spark(jar, libraries):
    from pyspark.sql import SparkSession

    base = tempfile.mkdtemp(prefix="sparkds_claims_connect_")
    scratch = {"base": base, "log": os.path.join(base, "server.log"),
               "warehouse": os.path.join(base, "warehouse")}
    os.makedirs(scratch["warehouse"])
    try:
        with connect_server.running(jar, library_path(libraries), scratch) as address:
            session = SparkSession.builder.remote(address).create()
            yield session
            session.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def runtime(request, libraries):
    """The runtime of this parameter, on its session."""
    name = request.param
    if name == "connect":
        return Connect(request.getfixturevalue("connect_spark"), libraries)
    spark = request.getfixturevalue("classic_spark")
    if name == "plugin":
        return Plugin(spark, libraries)
    if pyspark_line() < (4, 0):
        pytest.skip("the bridge needs pyspark 4.0 or later (the Python Data Source API)")
    # pyspark before 4.2 does not pass a stream's start offset to latestOffset, and the bridge
    # refuses to guess it.
    return Bridge(spark, libraries, resumes_streams=pyspark_line() >= (4, 2))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    connect_server.add_log_to(outcome.get_result())
