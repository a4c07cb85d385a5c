"""Applications on the cluster of hosts that kill nothing, sharing it: examples/c_range read on
executors of both Workers from the package that `--files` gave them, filters pushed and checked
(rule 31) on the executors, what RPC encryption hides and costs, a Spark Connect server whose two sessions
each read their own build of one package while examples/postgres is read and written over TLS
verify-full on a host of its own; then, with everything running, what listens where,
what command lines hold, and what the rogue host got."""

import json
import os
import re
import secrets
import subprocess
import sys
import time

import pytest

from conftest import REPORT, ROOT
from postgres_server import PASSWORD

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import connect_server  # noqa: E402

C_RANGE_ROWS = 2_000_000
TIMED_ROWS = 3_000_000
REPEATS = 5
# In every Arrow batch of c_range's labels: what the sniffer looks for on worker-1's cable.
MARKER = "label 1"
# The applications that time a read compile with C2, as a production JVM does: the suite's
# C1-only option (tests/suite/jvm.rs) would time its slower code of the ciphers.
TIMED_CONF = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=4",
              "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=4"}
POSTGRES_ROWS = 1000
WRITTEN_ROWS = 200_000
CONNECT_ROWS = 100_000


def assert_ran(code, log, what):
    assert code == 0, f"{what} failed ({code}):\n" + "\n".join(
        line for line in log.splitlines() if not line.startswith("\t")
    )[-8000:]


def on_both_workers(hosts, log=""):
    """The hosts that a query's tasks ran on (`reflect('java.net.InetAddress', 'getLocalHost')`:
    `worker-1/10.x.y.z`) are both Workers, and nothing else. On failure, what the driver's `log`
    says of tasks and executors: a task lost on one host, or an executor removed."""
    said = [line for line in log.splitlines()
            if re.search(r"Lost task|[Ee]xecutor .*(lost|removed|exited)|Removed executor|exclud"
                         r"|[Ww]orker|Launching executor", line)]
    assert sorted(h.split("/")[0] for h in hosts) == ["worker-1", "worker-2"], (hosts, said[-30:])


def driver_copy(plan, package):
    """The driver's path of `package` in a plan (`[/path/<package>]`)."""
    found = re.search(r"\[(/[^\]]*?" + re.escape(package) + r")\]", plan)
    assert found, f"{package} is not in the plan:\n{plan}"
    return found.group(1)


def only_on_client(cluster, path, now=True):
    """`path` is on no Worker; with `now`, it is on the client host (a driver's copy of the
    session's files goes when the application ends)."""
    if now:
        assert cluster.client.run(["test", "-f", path]).returncode == 0, path
    for worker in cluster.workers:
        assert worker.run(["test", "-e", path]).returncode == 1, f"{worker.name} sees {path}"


def executor_logs(cluster, app_name):
    """The standard error of each executor of the application `app_name`, by Worker."""
    from conftest import application_names

    apps = {name: app for app, name in application_names(cluster.master.log("master")).items()}
    logs = {}
    for worker in cluster.workers:
        for directory, _, files in os.walk(worker.path("work", apps[app_name])):
            if "stderr" in files:
                with open(os.path.join(directory, "stderr"), errors="replace") as f:
                    logs[worker.name] = logs.get(worker.name, "") + f.read()
    return logs


# -- examples/c_range ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def c_range_app(cluster, packages):
    """What the c_range application printed, and what crossed worker-1's cable meanwhile: it
    reads c_range, its filters and the fixture that breaks rule 31 (both packages by --files),
    and times a read, with RPC encryption on."""
    with cluster.network.sniffing("worker-1", MARKER) as sniffed:
        code, seen, log = cluster.submit(
            "read-c-range", "read_c_range.py",
            {"parts": ["read", "filters", "rule31", "timed"], "end": C_RANGE_ROWS,
             "timed_rows": TIMED_ROWS, "repeats": REPEATS},
            [packages["c_range"], packages["ignored_filters"]], conf=TIMED_CONF,
        )
    assert_ran(code, log, "the c_range application")
    return seen, log, sniffed


def test_c_range_is_read_on_both_workers_from_the_package_spark_gave_them(c_range_app, cluster, packages):
    seen, log, _ = c_range_app
    read = seen["read"]
    assert (read["count"], read["sum"]) == (C_RANGE_ROWS, C_RANGE_ROWS * (C_RANGE_ROWS - 1) // 2)
    master = [line for line in cluster.master.log("master").splitlines()
              if re.search(r"[Ww]orker|[Ee]xecutor|app-", line)]
    on_both_workers(read["hosts"], log + "\n" + "\n".join(master))
    # The plugin came by Ivy from the client's Maven repository (`--repositories`: repo-1).
    assert re.search(r"found dev\.sparkds#spark-native-datasource-4\.3_2\.13;\S+ in repo-1", log), log[:3000]
    assert "GET /dev/sparkds/spark-native-datasource-4.3_2.13/" in cluster.client.log("maven-repository")
    # The package is the client's (`--files` named it there); each executor read its own copy.
    only_on_client(cluster, packages["c_range"])
    only_on_client(cluster, driver_copy(read["plan"], "c_range-0.1.0.sparkpkg"), now=False)


def test_filters_are_pushed_and_rule_31_is_checked_on_the_executors(c_range_app, cluster):
    seen, _, _ = c_range_app
    rows = [tuple(r) for r in seen["filters"]["rows"]]
    assert rows == [(i, None if i % 3 == 2 else f"label {i}") for i in range(91, 100)]
    plan = seen["filters"]["plan"]
    assert "PushedFilters: [id > 90]" in plan and "AcceptedFilters: check" in plan, plan
    error = seen["rule31"].get("error") or ""
    assert "INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE" in error, seen["rule31"]
    assert "rule 31" in error and "`id >= 15`" in error, error
    # An executor refused the row, on a Worker host.
    refused = {w: log for w, log in executor_logs(cluster, "read-c-range").items() if "rule 31" in log}
    assert refused, "no executor's log tells of rule 31"


def test_rpc_encryption_hides_the_rows_on_the_wire_and_its_cost_on_a_read(c_range_app, cluster, packages):
    on_seen, _, on_wire = c_range_app
    with cluster.network.sniffing("worker-1", MARKER) as off_wire:
        code, off_seen, log = cluster.submit(
            "read-c-range-plain", "read_c_range.py",
            {"parts": ["timed"], "timed_rows": TIMED_ROWS, "repeats": REPEATS},
            [packages["c_range"]], conf={**TIMED_CONF, "spark.network.crypto.enabled": "false"},
        )
    assert_ran(code, log, "the c_range application without RPC encryption")
    on, off = on_seen["timed"], off_seen["timed"]
    assert (on["crypto"], off["crypto"]) == ("true", "false")
    # Encrypted, no frame of worker-1's holds a label in clear; without, the rows cross in clear.
    assert on_wire["frames"] > 1000 and on_wire["marked"] == 0, on_wire
    assert off_wire["marked"] > 0, off_wire
    figure = (
        f"RPC encryption on a read of {TIMED_ROWS:,} rows of c_range ({on['bytes'] / 1e6:.0f} MB "
        f"to the driver from 2 executors on 2 hosts, {REPEATS} times each): fastest "
        f"{on['least']:.2f} s encrypted, {off['least']:.2f} s in clear "
        f"({(on['least'] / off['least'] - 1) * 100:+.0f} %); median {on['median']:.2f} s against "
        f"{off['median']:.2f} s ({(on['median'] / off['median'] - 1) * 100:+.0f} %); every time "
        f"{', '.join(f'{t:.2f}' for t in on['seconds'])} s against "
        f"{', '.join(f'{t:.2f}' for t in off['seconds'])} s"
    )
    REPORT.append(figure)
    print(figure)


# -- Spark Connect ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def connect(cluster, postgres_submitted):
    """The token of the Connect server on the client host, running while the module does."""
    token = secrets.token_hex(32)
    process = cluster.start_connect(token)
    try:
        yield token
    finally:
        connect_server.stop(process)


@pytest.fixture(scope="module")
def connect_sessions(connect, cluster, packages):
    """What the Connect client printed, with what the hosts had while its sessions lived: the
    copies of the sessions' packages on each Worker, and for each driver's copy named in a plan,
    whether the client host and each Worker have it."""
    client = cluster.client
    builds = [packages["hostsrange-1.0.0"], packages["hostsrange-2.0.0"]]
    release = client.path("apps", "connect-release")
    config_path = cluster.write_config("connect-client", {
        "address": "sc://localhost:15002", "packages": builds, "rows": CONNECT_ROWS,
        "release": release})
    env = cluster.env(client, SPARK_CONNECT_AUTHENTICATE_TOKEN=connect)
    app = cluster.app_path("connect_client.py")
    process = client.start("connect-client", [sys.executable, app, config_path], env)
    try:
        seen = wait_for_result(process, client, "connect-client")
        copies = {w.name: session_copies(w) for w in cluster.workers}
        plans = [r.get("plan", "") for reads in seen["sessions"].values() for r in reads]
        paths = {p for plan in plans for p in re.findall(r"\[(/[^\]]*?hostsrange-[\d.]+\.sparkpkg)\]", plan)}
        where = {path: [h.name for h in [client, *cluster.workers] if h.run(["test", "-e", path]).returncode == 0]
                 for path in paths}
    finally:
        open(release, "w").close()
        process.wait(timeout=120)
    return seen, copies, where, builds


def test_two_connect_sessions_each_read_their_own_build_on_executors_of_both_workers(connect_sessions):
    seen, copies, where, builds = connect_sessions
    expected = (CONNECT_ROWS, CONNECT_ROWS * (CONNECT_ROWS - 1) // 2)
    for round_ in ("alone", "together"):
        for build, read in zip(builds, seen["sessions"][round_]):
            assert "error" not in read, read
            assert (read["count"], read["sum"]) == expected, read
            on_both_workers(read["hosts"])
            # The server's copy of the session's package, and not the other's, is in its plan:
            # on the client host alone, while the session lived.
            copy = driver_copy(read["plan"], os.path.basename(build))
            assert where[copy] == ["client"], (copy, where[copy])
            other = [os.path.basename(b) for b in builds if b != build][0]
            assert other not in read["plan"], read["plan"]
    # Each executor has both builds, each in the folder of its session, as Spark gave them.
    for worker, found in copies.items():
        assert sorted(found) == sorted(os.path.basename(b) for b in builds), (worker, found)
        assert len(set(found.values())) == 2, (worker, found)


def test_a_connect_session_does_not_read_the_cluster_secret_in_its_configuration(connect_sessions):
    secret = connect_sessions[0]["secret"]
    assert secret["conf"] is None and secret["set"] == ["*********(redacted)"], secret


def test_but_a_python_udf_of_any_session_reads_it_in_its_executor_s_environment(connect_sessions, cluster):
    """Standalone's one secret reaches every executor in its environment (the Worker puts it
    there), where the code of any application runs: the book says so, and what to do about it.
    This test fails the day that changes, so that the book changes with it."""
    import hashlib

    secret = connect_sessions[0]["secret"]
    assert secret["udf_sha256"] == [hashlib.sha256(cluster.secret.encode()).hexdigest()], secret


def wait_for_result(process, host, label, timeout=300):
    from cluster import printed

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = printed(host.log(label))
        if seen:
            return seen
        assert process.poll() is None, f"{label} ended:\n{host.log(label)[-6000:]}"
        time.sleep(0.3)
    raise AssertionError(f"{label} printed nothing in {timeout} s:\n{host.log(label)[-6000:]}")


def session_copies(worker):
    """The copies of `hostsrange` packages in the work directory of the Connect server's executor
    on `worker`: {file name: the folder that holds it}."""
    found = {}
    for directory, _, files in os.walk(worker.path("work")):
        for name in files:
            if name.startswith("hostsrange-") and name.endswith(".sparkpkg"):
                assert name not in found, f"two copies of {name} on {worker.name}"
                found[name] = os.path.basename(directory)
    return found


# -- examples/postgres --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres_submitted(cluster, packages, pg, postgres_connection):
    """The postgres application, started: it reads `items` (made here) and writes c_range's rows
    into `written`. The Connect server starts while it runs (each application has one core of
    each Worker, and the Workers two)."""
    pg.psql("CREATE TABLE items (id int PRIMARY KEY, note text); "
            f"INSERT INTO items SELECT i, 'note ' || i FROM generate_series(0, {POSTGRES_ROWS - 1}) AS i")
    config = {**postgres_connection, "parts": ["read", "write", "by_ip"], "table": "items",
              "target": "written", "rows": WRITTEN_ROWS, "partitions": 4}
    return cluster.submit("postgres", "postgres_app.py", config,
                          [packages["postgres"], packages["c_range"]], background=True)


@pytest.fixture(scope="module")
def postgres_app(cluster, postgres_submitted):
    """What the postgres application printed."""
    from cluster import printed

    code = postgres_submitted.wait(timeout=600)
    log = cluster.client.log("postgres")
    assert_ran(code, log, "the postgres application")
    return printed(log)


def test_postgres_is_read_and_written_on_both_workers_over_tls_verify_full(postgres_app, cluster, pg):
    read, write = postgres_app["read"], postgres_app["write"]
    assert (read["count"], read["sum"]) == (POSTGRES_ROWS, POSTGRES_ROWS * (POSTGRES_ROWS - 1) // 2)
    on_both_workers(read["hosts"])
    assert [tuple(r) for r in read["rows"]] == [(i, f"note {i}") for i in range(5)]
    assert re.search(r"PushedFilters: \[[^\]]*\bid < 5\]", read["plan"]), read["plan"]
    assert (write["count"], write["sum"]) == (WRITTEN_ROWS, WRITTEN_ROWS * (WRITTEN_ROWS - 1) // 2)
    # The commit published the rows in one transaction and dropped every staging table.
    staging = pg.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sparkds\\_%'", args=["-t", "-A"])
    assert staging.strip() == "0", staging
    # Every host's connections were TLS (pg_hba.conf takes no other from the subnet), from the
    # driver's host and both Workers.
    log = server_log(pg)
    hosts_connected = set()
    for line in log.splitlines():
        if "connection authorized: user=sparkds" in line and not line.startswith("127.0.0.1"):
            assert "SSL enabled" in line, line
            hosts_connected.add(line.split()[0])
    expected = {cluster.network[h].address for h in ("client", "worker-1", "worker-2")}
    assert hosts_connected == expected, (hosts_connected, expected)


def test_postgres_named_by_an_address_its_certificate_lacks_is_refused(postgres_app):
    error = postgres_app["by_ip"]["error"] or ""
    assert "certificate" in error.lower(), postgres_app["by_ip"]


def server_log(pg) -> str:
    with open(os.path.join(pg.dir, "server.log"), errors="replace") as f:
        return f.read()


# -- with everything running: ports, command lines, the rogue ----------------------------------


def test_every_port_listens_on_its_host_s_address_or_loopback_only(connect, cluster):
    for host in cluster.network.hosts.values():
        for local in host.listening():
            address = local.rsplit(":", 1)[0]
            assert address in (host.address, "127.0.0.1"), f"{host.name} listens on {local}"
    # The Connect server, on the loopback address of its host.
    assert "127.0.0.1:15002" in cluster.client.listening()


def secrets_of_the_run(cluster, token):
    return {"the cluster's secret": cluster.secret, "the database password": PASSWORD,
            "the Connect token": token}


def test_no_command_line_on_any_host_holds_a_secret(connect, cluster):
    for host in cluster.network.hosts.values():
        for pid, command, _ in processes(host):
            for what, value in secrets_of_the_run(cluster, connect).items():
                assert value.encode() not in command, f"{what} in the command line of {pid} on {host.name}"


def web_pages(cluster):
    """What the rogue host reads of the web interfaces: the Master's and each Worker's JSON, and
    the standard output and error of every executor the Workers ran, by URL."""
    urls = ["http://master:8080/json/"] + [f"http://{w.name}:8081/json/" for w in cluster.workers]
    for worker in cluster.workers:
        for app in os.listdir(worker.path("work")):
            for executor in os.listdir(worker.path("work", app)):
                for kind in ("stdout", "stderr"):
                    urls.append(f"http://{worker.name}:8081/logPage/?appId={app}&executorId={executor}"
                                f"&logType={kind}&offset=0&byteLength=10000000")
    fetch = ("import json, sys, urllib.request\n"
             "urls = json.load(sys.stdin)\n"
             "print(json.dumps({u: urllib.request.urlopen(u, timeout=30).read().decode('utf-8', 'replace')"
             " for u in urls}))")
    done = subprocess.run(cluster.rogue.enter() + [sys.executable, "-c", fetch], input=json.dumps(urls),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    pages = json.loads(done.stdout)
    assert any("Spark Executor Command" in page for page in pages.values()), "no executor's log read"
    return pages


def processes(host):
    """(pid, command line, environment) of each process of `host`."""
    for pid in host.pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        yield pid, command, environ


def test_the_rogue_worker_is_refused_and_gets_no_executor_no_task_no_option(connect, cluster):
    rogue = cluster.rogue
    registered = cluster.registered()
    assert registered and not any("rogue" in r or rogue.address in r for r in registered), registered
    # The Master refused the one without authentication at its first message.
    master_log = cluster.master.log("master")
    assert f"from /{rogue.address}:" in master_log and "Expected SaslMessage" in master_log
    for label in ("rogue-worker-plain", "rogue-worker-guess"):
        log = rogue.log(label)
        assert "Failed to connect to master master:7077" in log, log[-3000:]
        assert "Successfully registered with master" not in log, log[-3000:]
    # No executor ever started on the rogue host, and nothing of the run reached its processes.
    for work in ("work-plain", "work-guess"):
        assert os.listdir(rogue.path(work)) == [], os.listdir(rogue.path(work))
    running = list(processes(rogue))
    assert running
    for pid, command, environ in running:
        assert b"CoarseGrainedExecutorBackend" not in command, command
        for what, value in secrets_of_the_run(cluster, connect).items():
            assert value.encode() not in command + environ, f"{what} reached process {pid} of the rogue"
    # Nor by reading what the Master's and Workers' web interfaces show to whoever reaches them:
    # the applications, and every executor's output.
    for url, page in web_pages(cluster).items():
        for what, value in secrets_of_the_run(cluster, connect).items():
            assert value not in page, f"{what} on {url}, which the rogue host reads"
    # Nor through the Master's REST server, which is off.
    tried = rogue.run([sys.executable, "-c", "import socket; socket.create_connection(('master', 6066), 5)"])
    assert "ConnectionRefusedError" in tried.stderr, tried.stderr
    REPORT.append(
        f"the rogue host ({rogue.address}): {master_log.count(f'from /{rogue.address}:')} refusals "
        f"in the Master's log, its Workers' logs say `Failed to connect to master` "
        f"{sum(rogue.log(l).count('Failed to connect to master') for l in ('rogue-worker-plain', 'rogue-worker-guess'))} "
        f"times, no executor, no process of the run's secrets"
    )
