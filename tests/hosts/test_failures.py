"""Hosts lost under applications, last (pytest runs this module after test_cluster.py): a Worker
host cut off the network (its cable unplugged at the switch) under the change data capture
stream of examples/postgres, which must stay exactly once; then a Worker host killed (every
process of it) in the middle of a write into PostgreSQL, which must leave no partial data."""

import json
import os
import sys
import threading
import time

from cluster import LOSS_CONF
from conftest import REPORT, ROOT

sys.path.insert(0, os.path.join(ROOT, "examples", "postgres", "tests", "spark"))
# The workload, the checks and the table of the example's own CDC tests.
from cdc_support import Session, check_exactly_once, create_table, source_rows, wait_for_slot  # noqa: E402

WRITE_ROWS = 3_000_000


def wait(condition, what, timeout=120, failed=lambda: None, shown=lambda: "", pause=0.2):
    """The first true value of `condition()`, asked every `pause` seconds; fails when `failed()`
    says why, or after `timeout` seconds, with what `shown()` gives."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        why = failed()
        assert not why, why
        value = condition()
        if value:
            return value
        time.sleep(pause)
    raise AssertionError(f"{what}: not within {timeout} s\n{shown()}")


def replayed(out):
    """The table that the stream's change log makes, applied in commit order, as
    cdc_support.source_rows gives the source's rows."""
    import pyarrow.parquet as pq

    log = os.path.join(out, "log")
    if not os.path.isdir(log) or not os.listdir(log):
        return []
    table = {}
    for change in sorted(pq.read_table(log).to_pylist(), key=lambda r: (r["_lsn"], r["_seq"])):
        if change["_op"] == "truncate":
            table.clear()
        elif change["_op"] == "delete":
            table.pop(change["id"], None)
        else:
            table[change["id"]] = change["after"]
    return [
        (str(r["id"]), str(r["version"]), r["note"] or "", "" if r["amount"] is None else f"{r['amount']:.2f}")
        for _, r in sorted(table.items())
    ]


def status(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return []


def test_the_cdc_stream_is_exactly_once_while_a_worker_host_is_cut_off(cluster, packages, pg, postgres_connection):
    client, worker = cluster.client, cluster.network["worker-2"]
    table, slot = "cdc_hosts", "slot_hosts"
    create_table(pg, table)
    base = client.path("cdc")
    config = {**postgres_connection, "table": table, "out": os.path.join(base, "out"),
              "checkpoint": os.path.join(base, "checkpoint"), "status": os.path.join(base, "status.json"),
              "stop": os.path.join(base, "stop"),
              "options": {"slot": slot, "tables": table, "maxChangesPerTrigger": "300"}}
    process = cluster.submit("cdc", "cdc_stream.py", config, [packages["postgres"]],
                             conf=LOSS_CONF, background=True)
    ended = lambda: process.poll() is not None and f"the query ended:\n{client.log('cdc')[-6000:]}"  # noqa: E731
    sessions = [Session(pg, table, n, seed=45, pause=0.01) for n in range(2)]
    try:
        wait(lambda: os.path.exists(os.path.join(config["out"], "started")), "the query to start", 240, ended)
        wait_for_slot(pg, slot)
        for session in sessions:
            session.start()
        on_worker = lambda: [e for e in status(config["status"]) if e.get("host") == "worker-2"]  # noqa: E731
        wait(lambda: any(e["tasks"] > 0 for e in on_worker()), "a micro-batch's task on worker-2",
             120, ended, lambda: f"executors: {status(config['status'])}\n{client.log('cdc')[-3000:]}")
        cluster.network.cut("worker-2")
        cut = time.monotonic()
        lost = wait(lambda: [e for e in on_worker() if not e["active"]], "worker-2's executor lost", 90, ended)
        noticed = time.monotonic() - cut
        time.sleep(3)  # the stream goes on without it
        cluster.network.plug("worker-2")
        for session in sessions:
            session.stop()
        for session in sessions:
            session.join()
        assert not [s.failure for s in sessions if s.failure]
        expected = source_rows(pg, table)
        wait(lambda: replayed(config["out"]) == expected, "the stream to catch up", 180, ended)
    finally:
        for session in sessions:
            session.stop()
        cluster.network.plug("worker-2")
        open(config["stop"], "w").close()
        try:
            process.wait(timeout=120)
        except Exception:  # noqa: BLE001 - the test fails on what it saw, not on the stop
            os.killpg(process.pid, 9)
    changes = check_exactly_once(config["out"])
    assert process.returncode == 0, client.log("cdc")[-6000:]
    REPORT.append(
        f"CDC with worker-2 cut off: its executor lost after {noticed:.1f} s ({lost[0]['removed']}); "
        f"{changes} changes of {sum(s.committed for s in sessions)} transactions, each once"
    )


def test_a_write_with_a_worker_killed_mid_task_leaves_no_partial_data(cluster, packages, pg, postgres_connection):
    worker = cluster.network["worker-2"]
    target = "killed_write"
    # worker-2's Worker, cut off by the test before, may still be in and out of the Master's
    # books (its heartbeats refused as from an unregistered Worker, its executors killed when
    # it registers again): the host restarts it, as a machine back from an outage would, and
    # the write starts once the Master has registered the new one.
    registrations = lambda: len([r for r in cluster.registered() if worker.name in r])  # noqa: E731
    before = registrations()
    worker.kill_all()
    cluster.start_worker(worker)
    wait(lambda: registrations() > before, "worker-2's Worker registered again", 120,
         shown=lambda: cluster.master.log("master")[-3000:])
    config = {**postgres_connection, "parts": ["write"], "target": target, "rows": WRITE_ROWS,
              "partitions": 8}
    # An executor of two cores fits a Worker (two cores) once, so the write's two executors are
    # one on each host, whatever the Master knew of worker-2, cut off by the test before, when
    # the write was submitted: the driver waits for both before its job (APP_CONF). With
    # executors of one core, both could go to worker-1 and the write never touch worker-2.
    conf = {**LOSS_CONF, "spark.executor.cores": "2", "spark.cores.max": "4"}
    process = cluster.submit("write-killed", "postgres_app.py", config,
                             [packages["postgres"], packages["c_range"]], conf=conf,
                             background=True)
    visible = []
    # The rows that the COPY of a task on worker-2 has sent so far.
    copied = ("SELECT coalesce(max(p.tuples_processed), 0) FROM pg_stat_progress_copy p "
              f"JOIN pg_stat_activity a USING (pid) WHERE a.client_addr = '{worker.address}'")

    def watch():
        # What a reader of the target sees while the write runs: nothing, then every row.
        while process.poll() is None:
            visible.append(rows_in(pg, target))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    ended = lambda: process.poll() is not None and (  # noqa: E731
        f"the write ended first:\n{cluster.client.log('write-killed')[-4000:]}\n"
        f"the Master's last lines:\n{cluster.master.log('master')[-3000:]}")
    # Asked without a pause (each psql takes tens of milliseconds): a task's COPY lasts a few
    # tenths of a second on a warm machine, which a poll every 0.2 s besides psql's own time
    # could miss.
    staged = wait(lambda: int(pg.psql(copied, args=["-t", "-A"]).strip() or 0),
                  "rows of a COPY from worker-2", 240, ended, pause=0)
    worker.kill_all()
    code = process.wait(timeout=300)
    watcher.join(30)
    assert code == 0, cluster.client.log("write-killed")[-6000:]
    counted = pg.psql(f"SELECT count(*), count(DISTINCT id), sum(id) FROM {target}", args=["-t", "-A"])
    assert counted.strip() == f"{WRITE_ROWS}|{WRITE_ROWS}|{WRITE_ROWS * (WRITE_ROWS - 1) // 2}", counted
    assert staging_tables(pg) == 0
    assert set(visible) <= {0, WRITE_ROWS}, sorted(set(visible))
    REPORT.append(
        f"write with worker-2 killed during its COPY ({staged} rows sent): no staging table after; "
        f"readers saw {sorted(set(visible))} rows, never part of them"
    )


def rows_in(pg, table):
    """The rows of `table` that a reader sees, 0 while it does not exist (the commit creates it
    with its rows, in one transaction)."""
    exists = pg.psql(f"SELECT to_regclass('{table}') IS NOT NULL", args=["-t", "-A"]).strip()
    if exists != "t":
        return 0
    return int(pg.psql(f"SELECT count(*) FROM {table}", args=["-t", "-A"]).strip())


def staging_tables(pg):
    return int(pg.psql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'sparkds\\_%'",
                       args=["-t", "-A"]).strip())
