"""A Spark Connect server for a suite: pyspark's own `SparkConnectServer`, started with its
`spark-submit` in local mode on a free port of 127.0.0.1, with the JVM plugin's jar and a native
library path, and a token that only this process's clients know. Its log goes to a file that a
suite shows under a failed test (`tail`). tests/connect and tests/claims start theirs with it."""

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from typing import Dict, Iterator

# How long the server may take to start, and the lines of its log shown on a failure.
START_TIMEOUT = 180
LOG_TAIL = 120


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> str:
    from pyspark.find_spark_home import _find_spark_home

    return _find_spark_home()


def server_command(jar: str, library_path: str, port: int, warehouse: str):
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
        "--conf", f"spark.sql.warehouse.dir={warehouse}",
        "--conf", "spark.sql.shuffle.partitions=2",
        "--conf", "spark.default.parallelism=2",
        "--conf", "spark.driver.memory=1g",
        "--conf", "spark.task.maxFailures=1",
        "--conf", "spark.sql.streaming.forceDeleteTempCheckpointLocation=true",
        # Warnings and errors only: the log is shown under a failed test.
        "--conf", "spark.log.level=WARN",
    ]
    # ANCHOR_END: server


def wait_until_started(process, log: str, port: int):
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


def tail(log: str, lines: int = LOG_TAIL) -> str:
    """The last `lines` of the server's log, stack frames left out: the messages of the last
    warnings and errors fit in the tail."""
    try:
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line for line in text.splitlines() if not line.startswith("\tat ")]
    return "\n".join(kept[-lines:])


# The log of the last server started in this process, for `add_log_to`.
_last_log = None


def add_log_to(report) -> None:
    """Appends the tail of the server's log to a failed test's report (a suite's
    `pytest_runtest_makereport` hook calls it): the server's side of a failure is there."""
    if report.failed and _last_log:
        report.sections.append(
            (f"Spark Connect server log (last {LOG_TAIL} lines of {_last_log})", tail(_last_log))
        )


def stop(process):
    """Stops the server's process group (spark-submit and its JVM), killing it if it lingers."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def running(jar: str, library_path: str, scratch: Dict[str, str]) -> Iterator[str]:
    """A server that runs while the block does, in `scratch["base"]`, logging to
    `scratch["log"]`, its tables in `scratch["warehouse"]`; yields its address with its token,
    `sc://localhost:<port>/;token=<token>`."""
    global _last_log
    port = free_port()
    _last_log = scratch["log"]
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
    with open(scratch["log"], "wb") as log:
        process = subprocess.Popen(
            server_command(jar, library_path, port, scratch["warehouse"]),
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
