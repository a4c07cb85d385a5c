"""The hosts of the group and their cluster, shared by its modules (one pytest process runs them,
the modules that kill hosts last): the network of `hosts.py`, the Spark standalone cluster of
`cluster.py`, a PostgreSQL server with TLS on a host of its own, and the data sources' packages,
made with `cargo sparkds package` on the client host.

tests/hosts/main.rs builds what the hosts get and names it in the environment:
SPARK_E2E_C_RANGE_LIBRARY (examples/c_range), SPARKDS_POSTGRES_LIBRARY (examples/postgres),
SPARKDS_HOSTS_MAVEN (the plugin's Maven repository, by jvm/maven.sh), SPARKDS_HOSTS_VERSION (its
version) and SPARKDS_BIN (cargo-sparkds).

What each host saw (its processes, the executors its Workers ran, what the rogue got) and the
times of each step are printed at the end of the run.
"""

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, os.path.join(ROOT, "tests", "jvm"))

import hosts  # noqa: E402
import tls_ca  # noqa: E402
from cluster import Cluster, class_archive  # noqa: E402
from jvm_helpers import install, platform_key  # noqa: E402
from library_fixtures import conformance_fixture  # noqa: E402
from postgres_server import DATABASE, PASSWORD, Server, USER  # noqa: E402

NAMES = ["client", "master", "worker-1", "worker-2", "postgres", "rogue"]
# What the run printed at its end: what each host saw, and how long each step took.
REPORT: List[str] = []
# The programs seen running on each host at the end of each test (a JVM by its class).
SEEN: Dict[str, set] = {}


def timed(step: str, started: float) -> None:
    REPORT.append(f"{step}: {time.monotonic() - started:.1f} s")


def given(variable: str) -> str:
    value = os.environ.get(variable)
    if not value or not os.path.exists(value):
        pytest.fail(f"{variable} must name a built file (tests/hosts/main.rs sets it): {value!r}")
    return value


def _terminate(signum, frame):
    # pytest ends on KeyboardInterrupt with its fixtures' teardown: the hosts go with it.
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _terminate)


@pytest.fixture(scope="session")
def network():
    why = hosts.refused()
    if why:
        pytest.skip(f"SKIPPED: the hosts group needs network and mount namespaces: {why}")
    for removed in hosts.sweep():
        REPORT.append(f"removed what a killed run left: {removed}")
    started = time.monotonic()
    net = hosts.Network(NAMES)
    try:
        archive = class_archive()
        net.up([f"ro:{archive}"] if archive else [])
        timed(f"hosts on {net.subnet} (switch {net.switch})", started)
        yield net
    finally:
        REPORT.extend(what_each_host_saw(net))
        net.down()


@pytest.fixture(autouse=True)
def seen_running(request):
    """After each test, what runs on each host, for the report."""
    yield
    if "network" in request.fixturenames:
        net = request.getfixturevalue("network")
        for host in net.hosts.values():
            SEEN.setdefault(host.name, set()).update(running(host))


@pytest.fixture(scope="session")
def daemons(network):
    """The Master, the Workers, the rogue's Workers and the Maven repository, started (they come
    up while the database starts and the packages are made)."""
    version = os.environ.get("SPARKDS_HOSTS_VERSION")
    if not version:
        pytest.fail("SPARKDS_HOSTS_VERSION must be the plugin's version (tests/hosts/main.rs sets it)")
    made = Cluster(network, secrets.token_hex(32), version)
    made.start_master()
    for worker in made.workers:
        made.start_worker(worker)
    made.start_rogues()
    made.start_repository(given("SPARKDS_HOSTS_MAVEN"))
    return made, time.monotonic()


@pytest.fixture(scope="session")
def cluster(daemons, pg, packages):
    """The cluster, its Workers registered (the rogue's Workers trying all along), with the
    database and the packages ready."""
    made, started = daemons
    made.wait_for_workers()
    timed("Master and two Workers registered", started)
    return made


@pytest.fixture(scope="session")
def tls(network):
    """The CA of the run, in the run's directory (the hosts see none of it but what is copied to
    them): the database's certificate for the name `postgres`, and the CA at /srv/tls/ca.pem on
    every host that connects to it."""
    made = tls_ca.make(os.path.join(network.run_dir, "tls"), ["postgres"])
    for name in ("client", "worker-1", "worker-2"):
        os.makedirs(network[name].path("tls"), exist_ok=True)
        shutil.copy(made["ca.pem"], network[name].path("tls", "ca.pem"))
    return made


@pytest.fixture(scope="session")
def pg(network, tls):
    """PostgreSQL 15 on the postgres host: TLS with the run's CA, scram-sha-256, connections from
    the subnet only over TLS, logical decoding for the change data capture."""
    started = time.monotonic()
    host = network["postgres"]
    server = Server(parent=host.dir, addresses=("127.0.0.1", host.address), host="postgres",
                    port=5432, enter=host.enter())

    def read(name):
        with open(tls[name], "rb") as f:
            return f.read()

    try:
        start_or_show_log(
            server,
            # TCP only: a Unix socket in the server's directory would pass the 107 bytes that a
            # socket's path may have, deep in the run's directory.
            settings=["unix_socket_directories=''", "ssl=on", "ssl_cert_file={dir}/server.crt",
                      "ssl_key_file={dir}/server.key", "wal_level=logical", "log_connections=on",
                      "log_line_prefix='%h '"],
            hba=[f"hostssl {DATABASE} {USER} {network.subnet} scram-sha-256"],
            files=[("server.crt", read("server.crt"), 0o644), ("server.key", read("server.key"), 0o600)],
        )
        server.psql(f"ALTER ROLE {USER} REPLICATION", user="postgres")
        timed("PostgreSQL with TLS on the postgres host", started)
        yield server
    finally:
        server.stop()


def start_or_show_log(server, **setup):
    """`server.start(**setup)`, failing with the tail of the server's log."""
    try:
        server.start(**setup)
    except RuntimeError as error:
        try:
            with open(os.path.join(server.dir, "server.log"), errors="replace") as f:
                log = f.read()[-3000:]
        except OSError:
            log = "(no log)"
        raise RuntimeError(f"{error}\nthe server's log:\n{log}") from None


@pytest.fixture(scope="session")
def postgres_connection(network, pg) -> Dict[str, str]:
    """How an application on the client host connects to the database: by the name its
    certificate has, with `sslmode=verify-full` and the CA that every host has at
    /srv/tls/ca.pem, the role's password in a file of the client host that only its owner reads
    (`password_file`); `by_ip`, the same by the server's address, which the certificate lacks."""
    secret_file = network["client"].path("secrets", "postgres-password")
    os.makedirs(os.path.dirname(secret_file), mode=0o700)
    fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(PASSWORD)
    tls = "sslmode=verify-full&sslrootcert=/srv/tls/ca.pem"
    address = network["postgres"].address
    return {
        "url": f"postgresql://postgres:5432/{DATABASE}?{tls}",
        "by_ip": f"postgresql://{address}:5432/{DATABASE}?{tls}",
        "user": USER,
        "password_file": secret_file,
    }


@pytest.fixture(scope="session")
def packages(network, c_range_library) -> Dict[str, str]:
    """The data sources' packages, by `cargo sparkds package` into the client host's
    `packages/`: c_range, postgres, `ignored_filters` (the conformance fixture that breaks rule
    31), and two builds of `hostsrange` (c_range's library with other bytes appended), 1.0.0 and
    2.0.0, for two Connect sessions."""
    started = time.monotonic()
    client = network["client"]
    out = client.path("packages")
    build = os.path.join(network.run_dir, "build")
    os.makedirs(build)
    postgres = os.path.join(build, "libspark_datasource_postgres.so")
    shutil.copy(given("SPARKDS_POSTGRES_LIBRARY"), postgres)
    # Debug information is most of a debug build, and every executor fetches the package.
    subprocess.run(["strip", "--strip-debug", postgres], check=True)
    made = {
        "c_range": package("c_range", "0.1.0", c_range_library, out),
        "postgres": package("postgres", "0.1.0", postgres, out,
                            ["--manifest-path", os.path.join(ROOT, "examples/postgres/Cargo.toml")]),
        "ignored_filters": package(
            "ignored_filters", "0.1.0",
            conformance_fixture(build, "ignored_filters", "FAULT_FILTER_BROKEN_ROW"), out),
    }
    for release in ("1.0.0", "2.0.0"):
        directory = os.path.join(build, release)
        os.makedirs(directory)
        library = install(c_range_library, directory, "hostsrange", extra=f"build {release}".encode())
        made[f"hostsrange-{release}"] = package("hostsrange", release, library, out)
    timed("packages made", started)
    return made


def package(name: str, release: str, library: str, out: str, notices=("--no-notices",)) -> str:
    done = subprocess.run(
        [given("SPARKDS_BIN"), "sparkds", "package", "--name", name, "--version", release,
         "--library", f"{platform_key()}={library}", "--out-dir", out, *notices],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert done.returncode == 0, f"cargo sparkds package {name}:\n{done.stdout}{done.stderr}"
    return os.path.join(out, f"{name}-{release}.sparkpkg")


@pytest.fixture(scope="session")
def c_range_library():
    return given("SPARK_E2E_C_RANGE_LIBRARY")


def what_each_host_saw(net) -> List[str]:
    """For each host: the processes the test started there, the executors its Workers ran (by
    application), and the processes still running."""
    lines = ["what each host saw:"]
    apps = application_names(net["master"].log("master")) if "master" in net.hosts else {}
    for host in net.hosts.values():
        started = ", ".join(p["label"] for p in host.processes) or "-"
        programs = ", ".join(sorted(SEEN.get(host.name, set()))) or "-"
        lines.append(f"  {host.name} ({host.address}): the test started {started}; seen running "
                     f"after the tests: {programs}")
        for work in sorted(d for d in os.listdir(host.dir) if d.startswith("work")):
            for app in sorted(os.listdir(host.path(work))):
                executors = sorted(os.listdir(host.path(work, app)))
                lines.append(f"    {work}/{app} ({apps.get(app, '?')}): executors {', '.join(executors)}")
    return lines


def running(host) -> List[str]:
    """The programs that run on `host` (a JVM by its class, a PostgreSQL process as postgres)."""
    names = set()
    for pid in host.pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        if not argv:
            continue
        name = os.path.basename(argv[0]).split(":")[0]
        if name == "java":
            name = next((a.rsplit(".", 1)[1] for a in argv[1:] if a.startswith("org.apache.spark.")), name)
        names.add(name)
    return sorted(names)


def application_names(master_log: str) -> Dict[str, str]:
    """The name of each application, by its ID, from the Master's `Registered app <name> with
    ID <id>` lines."""
    names = {}
    for line in master_log.splitlines():
        if "Registered app " in line and " with ID " in line:
            name, app = line.split("Registered app ", 1)[1].rsplit(" with ID ", 1)
            names[app.strip()] = name
    return names


def pytest_terminal_summary(terminalreporter):
    for line in REPORT:
        terminalreporter.write_line(line)
    # For tests/hosts/main.rs, which shows it whether the run passes or fails.
    if os.environ.get("SPARKDS_HOSTS_REPORT"):
        with open(os.environ["SPARKDS_HOSTS_REPORT"], "w") as f:
            f.write("".join(f"{line}\n" for line in REPORT))
