"""The postgres example on Spark 4.3, beside Spark's own JDBC source: one local session with the
JVM plugin's jar and PostgreSQL's JDBC driver in spark.jars, the example's library in the native
library path (for the plugin) and registered through the bridge of python/; and a PostgreSQL
server of the tests' own.

The server is made as the host tests make theirs (tests/library/server.rs): initdb into a scratch
directory as the system user `sparkds-pg` when the tests run as root, a private port on
127.0.0.1, scram-sha-256 for the test role; a watchdog in a session of its own stops it and
removes the directory when this process ends, however it ends.
"""

import glob
import os
import shutil
import socket
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
spark_session.python_workers_import(BRIDGE)

USER = "sparkds"
PASSWORD = "pw-7d1f0c3a-secret"
DATABASE = "sparkds"
SYSTEM_USER = "sparkds-pg"
SUPERUSER_PASSWORD = "superuser-pw"


def _bin_dir() -> str:
    if os.environ.get("PG_BIN"):
        return os.environ["PG_BIN"]
    found = sorted(
        (int(os.path.basename(os.path.dirname(d))), d)
        for d in glob.glob("/usr/lib/postgresql/*/bin")
        if os.path.isfile(os.path.join(d, "initdb")) and os.path.basename(os.path.dirname(d)).isdigit()
    )
    if not found:
        raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql (or set PG_BIN)")
    return found[-1][1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A PostgreSQL server for the tests: `start()`, then `stop()` (the watchdog covers the rest)."""

    def __init__(self):
        self.bin = _bin_dir()
        self.run_as = SYSTEM_USER if os.geteuid() == 0 else None
        if self.run_as and subprocess.run(["id", SYSTEM_USER], capture_output=True).returncode != 0:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
                capture_output=True,
            )
        self.dir = tempfile.mkdtemp(prefix="sparkds-pg-")
        self.port = _free_port()
        stop = self._argv("pg_ctl") + ["-D", os.path.join(self.dir, "data"), "-m", "immediate", "stop"]
        script = "read _ignored; {} > /dev/null 2>&1; rm -rf '{}'".format(" ".join(stop), self.dir)
        self.watchdog = subprocess.Popen(
            ["setsid", "sh", "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _argv(self, program):
        path = os.path.join(self.bin, program)
        return ["runuser", "-u", self.run_as, "--", path] if self.run_as else [path]

    def _run(self, argv, **kwargs):
        done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
        if done.returncode != 0:
            raise RuntimeError(f"{argv} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def start(self, settings=()):
        password_file = os.path.join(self.dir, "superuser-password")
        with open(password_file, "w") as f:
            f.write(SUPERUSER_PASSWORD)
        if self.run_as:
            self._run(["chown", "-R", self.run_as, self.dir])
        self._run(
            self._argv("initdb")
            + ["-D", os.path.join(self.dir, "data"), "-U", "postgres", "-E", "UTF8", "--locale=C"]
            + ["--no-sync", "--auth=scram-sha-256", f"--pwfile={password_file}"]
        )
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 " + " ".join(
            f"-c {s}" for s in settings
        )
        self._run(
            self._argv("pg_ctl")
            + ["-D", os.path.join(self.dir, "data"), "-l", os.path.join(self.dir, "server.log")]
            + ["-w", "-t", "60", "-o", options, "start"]
        )
        self.psql(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'", user="postgres", database="postgres")
        self.psql(f"CREATE DATABASE {DATABASE} OWNER {USER}", user="postgres", database="postgres")
        return self

    def restart(self):
        """Stops the server (`-m fast`: its sessions are ended) and starts it again with the
        same settings."""
        self._run(
            self._argv("pg_ctl")
            + ["-D", os.path.join(self.dir, "data"), "-l", os.path.join(self.dir, "server.log")]
            + ["-m", "fast", "-w", "-t", "60", "restart"]
        )

    def psql(self, sql, user=USER, database=DATABASE, args=()):
        """Runs `sql` with psql over TCP, with the role's password; returns its output."""
        return self._run(
            self.psql_argv(user, database) + ["-v", "ON_ERROR_STOP=1", "-q", "-X", *args, "-c", sql],
            env=self.password_env(user),
        )

    def psql_argv(self, user=USER, database=DATABASE):
        """psql, connected over TCP as `user` (its password in `password_env`)."""
        return ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", user, "-d", database]

    def password_env(self, user=USER):
        return dict(os.environ, PGPASSWORD=SUPERUSER_PASSWORD if user == "postgres" else PASSWORD)

    def stop(self):
        if self.watchdog.poll() is None:
            self.watchdog.stdin.close()
            self.watchdog.wait(timeout=60)

    @property
    def url(self):
        return f"postgresql://127.0.0.1:{self.port}/{DATABASE}"

    @property
    def jdbc_url(self):
        return f"jdbc:postgresql://127.0.0.1:{self.port}/{DATABASE}"

    def options(self, **more):
        return dict(url=self.url, user=USER, password=PASSWORD, **more)

    def jdbc_options(self, **more):
        return dict(url=self.jdbc_url, user=USER, password=PASSWORD, driver="org.postgresql.Driver", **more)


@pytest.fixture(scope="session")
def pg():
    server = Server()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_logical():
    """A server for change data capture: wal_level = logical, and the test role may use
    replication slots."""
    server = Server()
    try:
        server.start(settings=["wal_level=logical"])
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
