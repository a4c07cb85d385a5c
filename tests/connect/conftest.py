"""One Spark Connect server for the suite, with the JVM plugin, and the libraries it loads.

The server is pyspark 4.3's own (`SparkConnectServer`, started with pyspark's `spark-submit`,
local mode, on a free port of 127.0.0.1): the plugin's jar in spark.jars, the libraries'
directories in spark.driver.extraLibraryPath. Its log goes to a scratch directory, and its end
is shown under every failed test. Tests talk to it only as a client does, through
`SparkSession.builder.remote(...)`: no py4j, no SparkContext.
"""

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

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

# How long the server may take to start, and the lines of its log shown on a failure.
START_TIMEOUT = 180
LOG_TAIL = 120

_server_log = None


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


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> str:
    from pyspark.find_spark_home import _find_spark_home

    return _find_spark_home()


def server_command(jar, library_path, port, scratch):
    home = spark_home()
    # ANCHOR: server
    return [
        os.path.join(home, "bin", "spark-submit"),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master", "local[2]",
        "--conf", f"spark.jars={jar}",
        "--conf", f"spark.driver.extraLibraryPath={library_path}",
        "--conf", f"spark.executor.extraLibraryPath={library_path}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.ui.enabled=false",
        "--conf", f"spark.sql.warehouse.dir={scratch['warehouse']}",
        "--conf", "spark.sql.shuffle.partitions=2",
        "--conf", "spark.default.parallelism=2",
        "--conf", "spark.driver.memory=1g",
        "--conf", "spark.task.maxFailures=1",
        "--conf", "spark.sql.streaming.forceDeleteTempCheckpointLocation=true",
        # Warnings and errors only: the log is shown under a failed test.
        "--conf", "spark.log.level=WARN",
    ]
    # ANCHOR_END: server


def wait_until_started(process, log, port):
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited ({process.returncode}):\n"
                               + tail(log))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the Spark Connect server did not start on port {port} in "
                       f"{START_TIMEOUT} s:\n" + tail(log))


def tail(log, lines=LOG_TAIL) -> str:
    try:
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    # Stack frames left out: the messages of the last warnings and errors fit in the tail.
    kept = [line for line in text.splitlines() if not line.startswith("\tat ")]
    return "\n".join(kept[-lines:])


def stop(process):
    """Stops the server's process group (spark-submit and its JVM), killing it if it lingers."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="session")
def server(jar, c_range_library, writer_library, scratch):
    """The address of the suite's Spark Connect server, with its token:
    `sc://localhost:<port>/;token=<token>`."""
    global _server_log
    library_path = os.pathsep.join(
        [os.path.dirname(c_range_library), os.path.dirname(writer_library), scratch["installed"]]
    )
    port = free_port()
    # ANCHOR: token
    # Any user of the machine can connect to 127.0.0.1: the server takes only clients that give
    # this token, which it reads from its environment (no other user can read a process's
    # environment; a command line, every user can).
    token = secrets.token_hex(32)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_HOME=spark_home(),
               SPARK_CONNECT_AUTHENTICATE_TOKEN=token)
    # ANCHOR_END: token
    # A server's workers know only what is installed, or what a session ships.
    env.pop("PYTHONPATH", None)
    _server_log = scratch["log"]
    with open(scratch["log"], "wb") as log:
        process = subprocess.Popen(
            server_command(jar, library_path, port, scratch),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=scratch["base"],
            start_new_session=True,
        )
    try:
        wait_until_started(process, scratch["log"], port)
        # `localhost`: PySpark's client sends a token without TLS to localhost only.
        yield f"sc://localhost:{port}/;token={token}"
    finally:
        stop(process)


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
    report = outcome.get_result()
    if report.failed and _server_log:
        report.sections.append(
            (f"Spark Connect server log (last {LOG_TAIL} lines of {_server_log})", tail(_server_log))
        )
