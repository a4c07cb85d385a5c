"""One Spark Connect server for the suite, with the JVM plugin, and the libraries it loads.

The server is pyspark 4.3's own (`SparkConnectServer`, started with pyspark's `spark-submit`,
local mode, on a free port of 127.0.0.1, by tests/support/connect_server.py): the plugin's jar in
spark.jars, the libraries' directories in spark.driver.extraLibraryPath. Its log goes to a scratch directory, and its end
is shown under every failed test. Tests talk to it only as a client does, through
`SparkSession.builder.remote(...)`: no py4j, no SparkContext.

The server is configured as a cluster's operator configures one: its spark-defaults.conf (in
`SPARK_CONF_DIR`) holds the catalog `pg_cluster` of the postgres example, with a password, which
points at a stand-in for the cluster's database (`cluster_database`); and its environment holds
a PGPASSWORD (`SERVER_PGPASSWORD`). `test_credentials.py` checks that no session sends either
elsewhere.
"""

import os
import secrets
import shutil
import sys
import tempfile
from contextlib import ExitStack

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
    example_library,
    jar,
    c_range_library,
    writer_library,
)
import connect_server  # noqa: E402
from fake_postgres import FakePostgres  # noqa: E402

# The catalog of the server's configuration, its password, and the PGPASSWORD of the server's
# environment: values of this run only, so that a test can look for them.
CLUSTER_CATALOG = "pg_cluster"
CLUSTER_PASSWORD = "cluster-pw-" + secrets.token_hex(8)
SERVER_PGPASSWORD = "server-pgpassword-" + secrets.token_hex(8)


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
def cluster_database():
    """The stand-in for the database of the server's catalog `pg_cluster`."""
    database = FakePostgres()
    yield database
    database.close()


def cluster_configuration(scratch, cluster_database) -> str:
    """A directory with the server's spark-defaults.conf (mode 600, as a file that holds a
    password should be): the catalog `pg_cluster` of the postgres example. The stand-in has no
    TLS and asks for the password in clear text, which the catalog's options allow for it: what
    the tests look at is where the password goes."""
    directory = os.path.join(scratch["base"], "conf")
    os.makedirs(directory)
    prefix = f"spark.sql.catalog.{CLUSTER_CATALOG}"
    lines = [
        f"{prefix} dev.sparkds.spark.NativeCatalog",
        f"{prefix}.url {cluster_database.url()}",
        f"{prefix}.user cluster",
        f"{prefix}.password {CLUSTER_PASSWORD}",
        f"{prefix}.dbtable orders",
        f"{prefix}.sslmode disable",
        f"{prefix}.allowPasswordWithoutTls true",
    ]
    path = os.path.join(directory, "spark-defaults.conf")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write("\n".join(lines) + "\n")
    return directory


@pytest.fixture(scope="session")
def server(jar, c_range_library, writer_library, scratch, cluster_database):
    """The address of the suite's Spark Connect server, with its token:
    `sc://localhost:<port>/;token=<token>`."""
    library_path = os.pathsep.join(
        [os.path.dirname(c_range_library), os.path.dirname(writer_library), scratch["installed"]]
    )
    # The server's process takes its configuration and its PGPASSWORD from the environment it
    # starts with; this process keeps its own.
    started = {
        "SPARK_CONF_DIR": cluster_configuration(scratch, cluster_database),
        "PGPASSWORD": SERVER_PGPASSWORD,
    }
    with ExitStack() as stack:
        with pytest.MonkeyPatch.context() as environment:
            for variable, value in started.items():
                environment.setenv(variable, value)
            address = stack.enter_context(connect_server.running(jar, library_path, scratch))
        yield address


@pytest.fixture(scope="session")
def postgres_library(scratch) -> str:
    """The postgres example, installed in the server's library path as data source
    `postgres`: the one that `cargo test` built (SPARKDS_POSTGRES_LIBRARY), or built here."""
    from jvm_helpers import install

    built = example_library("SPARKDS_POSTGRES_LIBRARY", "postgres_example", "postgres")
    return install(built, scratch["installed"], "postgres")


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
