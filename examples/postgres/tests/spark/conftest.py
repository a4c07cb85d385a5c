"""The postgres example on Spark 4.3, beside Spark's own JDBC source: one local session with the
JVM plugin's jar and PostgreSQL's JDBC driver in spark.jars, the example's library in the native
library path (for the plugin) and registered through the bridge of python/; and a PostgreSQL
server of the tests' own.

The server is made as the host tests make theirs (tests/library/server.rs), by the suite's
helper (tests/support/postgres_server.py): initdb into a scratch directory as the system user
`sparkds-pg` when the tests run as root, a private port on 127.0.0.1, scram-sha-256 for the test
role, and TLS with a certificate made here, as the connector connects by default (sslmode
require, SCRAM with channel binding); a watchdog in a session of its own stops it and removes
the directory when this process ends, however it ends.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.dirname(os.path.dirname(HERE))
ROOT = os.path.dirname(os.path.dirname(EXAMPLE))
BRIDGE = os.path.join(ROOT, "python")
JDBC_JAR = "/usr/share/java/postgresql.jar"

sys.path.insert(0, BRIDGE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
# Shared with the other Spark suites.
from library_fixtures import example_library, jar  # noqa: E402,F401 (pytest fixtures)
import spark_session  # noqa: E402
from postgres_server import Server, USER  # noqa: E402
spark_session.python_workers_import(BRIDGE)


# The settings of a server with TLS, whose certificate and key `tls_files` makes.
TLS_SETTINGS = ["ssl=on", "ssl_cert_file={dir}/server.crt", "ssl_key_file={dir}/server.key"]


def tls_files():
    """A certificate for `localhost`, self-signed, and its key, made with openssl: the files of
    a server with TLS (`Server.start(files=...)`), as (name, bytes, mode)."""
    made = tempfile.mkdtemp(prefix="sparkds-pg-tls-")
    try:
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-days", "2", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost",
             "-keyout", "server.key", "-out", "server.crt"],
            cwd=made, check=True, capture_output=True,
        )
        files = []
        for name, mode in (("server.crt", 0o644), ("server.key", 0o600)):
            with open(os.path.join(made, name), "rb") as f:
                files.append((name, f.read(), mode))
        return files
    finally:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="session")
def pg():
    server = Server()
    try:
        yield server.start(settings=TLS_SETTINGS, files=tls_files())
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_logical():
    """A server for change data capture: wal_level = logical, and the test role may use
    replication slots."""
    server = Server()
    try:
        # Each test's slot, and the temporary copies of the micro-batches decoded in parts.
        server.start(settings=["wal_level=logical", "max_replication_slots=40", *TLS_SETTINGS], files=tls_files())
        server.psql(f"ALTER ROLE {USER} REPLICATION", user="postgres")
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def library() -> str:
    """The example's library: the one `cargo test` built, or built here."""
    return example_library("SPARKDS_POSTGRES_LIBRARY", "postgres_example", "postgres")


@pytest.fixture(scope="session")
def spark(jar, library, tmp_path_factory):
    if not os.path.isfile(JDBC_JAR):
        raise RuntimeError(f"{JDBC_JAR} is missing: apt-get install libpostgresql-jdbc-java")
    # The plugin loads the example's library from the native library path.
    libraries = tempfile.mkdtemp(prefix="sparkds-postgres-tests_lib_")
    shutil.copy(library, libraries)
    session = spark_session.builder(
        "sparkds-postgres-tests",
        str(tmp_path_factory.mktemp("warehouse")),
        jars=[jar, JDBC_JAR],
        library_path=libraries,
        conf={"spark.task.maxFailures": "1", "spark.python.worker.reuse": "true", "spark.sql.session.timeZone": "UTC"},
    )
    with spark_session.started(session) as started:
        yield started
    shutil.rmtree(libraries, ignore_errors=True)


@pytest.fixture(scope="session")
def bridge(spark, library) -> str:
    """The data source name of the example, registered through the bridge."""
    from spark_native_bridge import register

    return register(spark, library).name()
