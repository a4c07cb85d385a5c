"""A change data capture query killed at three points, each time started again from its
checkpoint, while three sessions change the table: between micro-batches, in the middle of one
(its foreachBatch wrote part of its output), and while it commits the end of the previous one
to the slot. In the end the target equals the source, and every change arrived once, in
commit order per key. Through the JVM plugin on a local cluster (two executor processes);
the query runs in a process of its own (`cdc_query.py`), killed with SIGKILL with its JVM and
the cluster's executors. (Local mode adds no path to the cluster's, where the driver, which
holds the offsets and commits them to the slot, is killed at the same points, and the
executors with it; on two cores it doubled the test's minutes, so it is not run.)

"While it commits" is caught with the stream's lock on its slot (see the README): the test holds
it, so the driver waits for it when it next asks for the latest offset; a second session of the
test queues for it behind the driver, so that when the first lets go, the driver plans its
micro-batch, logs its offsets, and waits again, in its commit, behind the second."""

import json
import os
import signal
import subprocess
import sys
import time

from cdc_support import (
    Session,
    hold_lock,
    release,
    waiting_on_lock,
    check_exactly_once,
    create_table,
    run_sessions,
    source_rows,
    stream_options,
    target_rows,
    wait_for_slot,
    wait_until_equal,
)

HERE = os.path.dirname(os.path.abspath(__file__))


class Query:
    """The query's process."""

    def __init__(self, config_path, log_path, pg):
        self.config_path = config_path
        self.log_path = log_path
        self.pg = pg
        self.process = None

    def start(self):
        with open(self.config_path) as f:
            out = json.load(f)["out"]
        started = os.path.join(out, "started")
        if os.path.exists(started):
            os.remove(started)
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "cdc_query.py"), self.config_path],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        self.wait(lambda: os.path.exists(started), "the query to start", timeout=180)

    def kill(self):
        # The whole session: Python, its JVM, and on a local cluster the executors it started.
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)

    def failed(self):
        if self.process.poll() is not None:
            with open(self.log_path) as f:
                # Without the JVM's stack frames: the messages.
                lines = [line for line in f if not line.lstrip().startswith(("at ", "... "))]
            return f"the query's process ended ({self.process.returncode}):\n{''.join(lines)[-6000:]}"
        return None

    def wait(self, condition, what, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if condition():
                return
            why = self.failed()
            if why:
                raise AssertionError(f"while waiting for {what}: {why}")
            time.sleep(0.1)
        sessions = self.pg.psql(
            "SELECT application_name, state, wait_event_type, wait_event, left(query, 80) "
            "FROM pg_stat_activity WHERE datname IS NOT NULL",
            user="postgres",
        )
        raise AssertionError(f"waited {timeout} s for {what}; the server's sessions:\n{sessions}")


def batches(checkpoint, kind):
    """The micro-batch ids in the checkpoint's offset log (`offsets`) or commit log (`commits`)."""
    folder = os.path.join(checkpoint, kind)
    if not os.path.isdir(folder):
        return []
    return sorted(int(name) for name in os.listdir(folder) if name.isdigit())


def kill_while_committing(pg, slot, query, checkpoint):
    def between_batches():
        planned, done = batches(checkpoint, "offsets"), batches(checkpoint, "commits")
        return planned[-1:] == done[-1:]

    # The lock must stop the driver as it asks for the latest offset, between micro-batches.
    # Taken while a task reads (or the driver commits), it stops them instead: then let go,
    # and take it again.
    for _ in range(30):
        first = hold_lock(pg, slot, "cdc-test-first")
        query.wait(
            lambda: waiting_on_lock(pg, "sparkds-stream") or waiting_on_lock(pg, "sparkds-stream-read"),
            "the stream to wait for the slot's lock",
        )
        if waiting_on_lock(pg, "sparkds-stream") and between_batches():
            break
        release(pg, "cdc-test-first", first)
        time.sleep(0.5)
    else:
        raise AssertionError("the lock never caught the driver between micro-batches in 30 tries")
    second = hold_lock(pg, slot, "cdc-test-second")
    query.wait(lambda: waiting_on_lock(pg, "cdc-test-second"), "the second session to queue")
    release(pg, "cdc-test-first", first)

    # The driver planned a micro-batch (its offsets are logged, not yet committed) and waits
    # again: in its commit.
    def committing():
        return not between_batches() and waiting_on_lock(pg, "sparkds-stream")

    query.wait(committing, "the driver to commit the previous micro-batch")
    query.kill()
    release(pg, "cdc-test-second", second)


def test_a_query_killed_at_any_point_gives_every_change_once_after_its_restart(
    pg_logical, jar, library, tmp_path
):
    master = "local-cluster[2,1,1024]"
    table = "cdc_kill_cluster"
    slot = f"slot_{table}"
    create_table(pg_logical, table)
    out, checkpoint = str(tmp_path / "target"), str(tmp_path / "checkpoint")
    hold = str(tmp_path / "hold")
    config = {
        "master": master,
        "jar": jar,
        "library": library,
        # Micro-batches of more than 4 kB of WAL are decoded in two parts, on both executors.
        "options": stream_options(
            pg_logical, slot, table, maxChangesPerTrigger="500", decodingTasks="2", decodingTaskBytes="4096"
        ),
        "table": table,
        "out": out,
        "checkpoint": checkpoint,
        "trigger": 1,
        "hold": hold,
        "stop": str(tmp_path / "stop"),
    }
    config_path = str(tmp_path / "query.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    query = Query(config_path, str(tmp_path / "query.log"), pg_logical)
    # About 40 changes a second, which the query, at up to 500 a micro-batch, outruns.
    sessions = [Session(pg_logical, table, n, pause=0.2, seed=3) for n in range(3)]
    began = time.time()

    def step(what):
        # Shown when the test fails: how far it got, and when.
        print(f"{time.time() - began:5.1f} s: {what}", flush=True)

    try:
        query.start()
        wait_for_slot(pg_logical, slot)
        step("started")
        for session in sessions:
            session.start()

        # 1. Between micro-batches: once one more is in the commit log.
        committed = len(batches(checkpoint, "commits"))
        query.wait(lambda: len(batches(checkpoint, "commits")) > committed, "a micro-batch")
        query.kill()
        step("killed between micro-batches")

        # 2. In the middle of a micro-batch: its change log written, its target not.
        open(hold, "w").close()
        query.start()
        query.wait(lambda: os.path.exists(hold + ".inside"), "a micro-batch to reach the switch")
        query.kill()
        step("killed in a micro-batch")
        os.remove(hold)
        os.remove(hold + ".inside")

        # 3. While the driver commits the previous micro-batch's end to the slot.
        committed = len(batches(checkpoint, "commits"))
        query.start()
        query.wait(lambda: len(batches(checkpoint, "commits")) > committed, "a micro-batch")
        kill_while_committing(pg_logical, slot, query, checkpoint)
        step("killed in a commit")

        # Started again once the sessions stopped, the query catches up.
        for session in sessions:
            session.stop()
        for session in sessions:
            session.join()
        assert not [s.failure for s in sessions if s.failure]
        query.start()
        step("started again")
        wait_until_equal(pg_logical, table, out, query.failed)
        step("caught up")
    finally:
        for session in sessions:
            session.stop()
        if query.process and query.process.poll() is None:
            query.kill()
    changes = check_exactly_once(out)
    assert changes > 100, changes


def test_a_server_restarted_under_the_stream_is_waited_for_and_loses_nothing(pg_logical, jar, library, tmp_path):
    """The server restarts (`pg_ctl restart -m fast`) while the stream is behind: the driver
    and the task that reads wait for it (`reconnectTimeout`, 60 s by default), and the query
    goes on without a change lost or read twice."""
    table = "cdc_restart"
    slot = f"slot_{table}"
    create_table(pg_logical, table)
    out, checkpoint = str(tmp_path / "target"), str(tmp_path / "checkpoint")
    config = {
        "master": "local[2]",
        "jar": jar,
        "library": library,
        "options": stream_options(pg_logical, slot, table, maxChangesPerTrigger="100"),
        "table": table,
        "out": out,
        "checkpoint": checkpoint,
        "trigger": 0.5,
        "stop": str(tmp_path / "stop"),
    }
    config_path = str(tmp_path / "query.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    query = Query(config_path, str(tmp_path / "query.log"), pg_logical)
    try:
        query.start()
        wait_for_slot(pg_logical, slot)
        run_sessions(pg_logical, table, sessions=3, transactions=100, seed=5)
        # 100 changes a micro-batch: the stream is still reading the backlog.
        assert target_rows(out) != source_rows(pg_logical, table)
        pg_logical.restart()
        run_sessions(pg_logical, table, sessions=3, transactions=50, seed=6, first=3)
        wait_until_equal(pg_logical, table, out, query.failed)
    finally:
        if query.process and query.process.poll() is None:
            query.kill()
    assert check_exactly_once(out) > 100
