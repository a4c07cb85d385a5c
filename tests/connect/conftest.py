"""One Spark Connect server for the suite, with the JVM plugin, and the libraries it loads.

The server is pyspark 4.3's own (`SparkConnectServer`, started with pyspark's `spark-submit`,
local mode, on a free port of 127.0.0.1, by tests/support/connect_server.py): the plugin's jar in
spark.jars, the libraries' directories in spark.driver.extraLibraryPath. Its log goes to a scratch directory, and its end
is shown under every failed test. Tests talk to it only as a client does, through
`SparkSession.builder.remote(...)`: no py4j, no SparkContext.
"""

import os
import shutil
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIDGE = os.path.join(ROOT, "python")
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, os.path.join(ROOT, "tests", "jvm"))
# The client imports the bridge from the checkout; the server's Python workers do not see it
# unless a session ships it (tests/connect/test_bridge.py).
sys.path.insert(0, BRIDGE)
# The fixtures of the libraries and the jar, shared with the other Spark suites.
from library_fixtures import (  # noqa: E402,F401
    jar,
    c_range_library,
    writer_library,
)
import connect_server  # noqa: E402


@pytest.fixture(scope="session")
def scratch():
    """The server's scratch directory: `log` (its output), `installed` (in its native library
    path, filled by tests while it runs), `warehouse`, and `packages` for the tests' .sparkpkg."""
    base = tempfile.mkdtemp(prefix="sparkds_connect_")
    made = {name: os.path.join(base, name) for name in ("installed", "warehouse", "packages")}
    for path in made.values():
        os.makedirs(path)
    made["base"] = base
    made["log"] = os.path.join(base, "server.log")
    yield made
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def server(jar, c_range_library, writer_library, scratch):
    """The address of the suite's Spark Connect server, with its token:
    `sc://localhost:<port>/;token=<token>`."""
    library_path = os.pathsep.join(
        [os.path.dirname(c_range_library), os.path.dirname(writer_library), scratch["installed"]]
    )
    with connect_server.running(jar, library_path, scratch) as address:
        yield address


@pytest.fixture(scope="session")
def spark(server):
    """A Connect session that the suite shares."""
    from pyspark.sql import SparkSession

    # ANCHOR: client
    session = SparkSession.builder.remote(server).create()
    # ANCHOR_END: client
    yield session
    session.stop()


@pytest.fixture
def new_session(server):
    """Opens Connect sessions of their own on the suite's server, stopped after the test."""
    from pyspark.sql import SparkSession

    opened = []

    def open_one():
        session = SparkSession.builder.remote(server).create()
        opened.append(session)
        return session

    yield open_one
    for session in opened:
        session.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    connect_server.add_log_to(outcome.get_result())
