"""What the change data capture tests share: a workload of concurrent sessions on a table, the
foreachBatch that applies a stream's micro-batches to a Parquet table, and the checks that the
target equals the source and that every change arrived exactly once, in commit order per key.

The table: `id bigint PRIMARY KEY, version int, note text, amount numeric(10,2)`, REPLICA IDENTITY
FULL. An insert writes a new id at version 1, an update adds 1 to the version, a delete removes
the row (its old row, with its version, in the change), a truncate removes them all. So the
changes of a key, in commit order, are versions 1, 2, 3, ... with no repeat and no gap: a change
read twice or never shows in the change log that the foreachBatch keeps.

The target is versioned by micro-batch: `state/v=<batch id>` is the table after that micro-batch,
made from the last complete version before it and the micro-batch's changes; `log/batch=<id>`
holds the micro-batch's changes. Spark runs a micro-batch again (after a failure) with the same
id and the same offsets, which replaces both: the sink is exactly once.
"""

import os
import random
import subprocess
import threading
import time

COLUMNS = "id bigint PRIMARY KEY, version int NOT NULL, note text, amount numeric(10,2)"


def create_table(pg, table):
    pg.psql(f"CREATE TABLE {table} ({COLUMNS}); ALTER TABLE {table} REPLICA IDENTITY FULL")


def stream_options(pg, slot, table, **more):
    return pg.options(slot=slot, tables=table, **more)


def wait_for_slot(pg, slot, timeout=120):
    """Waits until the query that started created its slot: changes before it are not its."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = pg.psql(f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{slot}'", args=["-t", "-A"])
        if found.strip() == "1":
            return
        time.sleep(0.2)
    raise AssertionError(f"the query did not create its slot {slot} in {timeout} s")


class Session(threading.Thread):
    """One session that runs random transactions on `table` with psql, on ids of its own: inserts,
    updates and deletes, one to four a transaction, and now and then a truncate."""

    def __init__(self, pg, table, number, transactions=None, seed=0, pause=0.0, truncates=True):
        super().__init__(daemon=True)
        self.pg, self.table, self.number = pg, table, number
        self.transactions = transactions
        self.random = random.Random(seed * 1000 + number)
        self.pause = pause
        self.truncates = truncates
        self.stopping = threading.Event()
        self.failure = None
        self.committed = 0

    def stop(self):
        self.stopping.set()

    def statements(self, live, next_id):
        if self.truncates and self.random.random() < 0.01:
            live.clear()
            return [f"TRUNCATE {self.table}"], next_id
        statements = []
        for _ in range(self.random.randint(1, 4)):
            choice = self.random.random()
            if choice < 0.45 or not live:
                statements.append(
                    f"INSERT INTO {self.table} VALUES ({next_id}, 1, 'n{next_id}', "
                    f"{self.random.randint(0, 99999) / 100})"
                )
                live.append(next_id)
                next_id += 1
            elif choice < 0.85:
                key = self.random.choice(live)
                statements.append(
                    f"UPDATE {self.table} SET version = version + 1, note = 'u{self.random.randint(0, 999)}', "
                    f"amount = {self.random.randint(0, 99999) / 100} WHERE id = {key}"
                )
            else:
                key = live.pop(self.random.randrange(len(live)))
                statements.append(f"DELETE FROM {self.table} WHERE id = {key}")
        return statements, next_id

    def run(self):
        password = self.pg.password_env()
        psql = subprocess.Popen(
            self.pg.psql_argv() + ["-v", "ON_ERROR_STOP=1", "-q", "-X", "-f", "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=password,
        )
        try:
            live, next_id = [], self.number * 10_000_000 + 1
            done = 0
            while not self.stopping.is_set() and (self.transactions is None or done < self.transactions):
                statements, next_id = self.statements(live, next_id)
                psql.stdin.write("BEGIN;\n" + ";\n".join(statements) + ";\nCOMMIT;\n")
                psql.stdin.flush()
                done += 1
                if self.pause:
                    time.sleep(self.pause)
            psql.stdin.close()
            if psql.wait(timeout=300) != 0:
                self.failure = psql.stderr.read()
            self.committed = done
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.failure = repr(e)
            psql.kill()


def run_sessions(pg, table, sessions=4, transactions=150, seed=0, first=0):
    """Runs `sessions` concurrent sessions of `transactions` transactions each, to their end,
    numbered from `first` (a session's number picks its ids)."""
    workers = [Session(pg, table, n, transactions=transactions, seed=seed) for n in range(first, first + sessions)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    failures = [w.failure for w in workers if w.failure]
    assert not failures, failures


def applier(table, out, hold=None):
    """The foreachBatch function that applies the changes of `table` to the Parquet table in
    `out`. With `hold` (a path), a micro-batch that finds that file writes its change log, says
    so in `<hold>.inside`, and waits there: a test kills the query in the middle of it."""
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    def apply(batch, batch_id):
        spark = batch.sparkSession
        changes = batch.where(F.col("_table") == f"public.{table}").select(
            "_op",
            "_lsn",
            "_seq",
            F.coalesce(F.col(f"{table}.id"), F.col(f"{table}_before.id")).alias("id"),
            F.coalesce(F.col(f"{table}.version"), F.col(f"{table}_before.version")).alias("version"),
            F.col(table).alias("after"),
        ).cache()
        # The micro-batch's changes, replaced when Spark runs the micro-batch again.
        changes.drop("after").write.mode("overwrite").parquet(os.path.join(out, "log", f"batch={batch_id}"))
        if hold and os.path.exists(hold):
            open(hold + ".inside", "w").close()
            time.sleep(3600)
        previous = last_version(out, before=batch_id)
        after_type = changes.schema["after"].dataType
        base = spark.read.parquet(previous) if previous else spark.createDataFrame([], after_type)
        truncated = changes.where("_op = 'truncate'").agg(F.max(F.struct("_lsn", "_seq")).alias("at")).first()["at"]
        if truncated is not None:
            base = base.limit(0)
            lsn, seq = truncated["_lsn"], truncated["_seq"]
            changes = changes.where((F.col("_lsn") > lsn) | ((F.col("_lsn") == lsn) & (F.col("_seq") > seq)))
        last = (
            changes.where("_op != 'truncate'")
            .withColumn("n", F.row_number().over(Window.partitionBy("id").orderBy(F.desc("_lsn"), F.desc("_seq"))))
            .where("n = 1")
        )
        kept = base.join(last.select("id"), "id", "left_anti")
        state = kept.unionByName(last.where("_op != 'delete'").select("after.*"))
        state.write.mode("overwrite").parquet(os.path.join(out, "state", f"v={batch_id}"))
        changes.unpersist()

    return apply


def last_version(out, before=None):
    """The directory of the last complete version of the target (before `before`), or None."""
    root = os.path.join(out, "state")
    if not os.path.isdir(root):
        return None
    versions = []
    for name in os.listdir(root):
        number = int(name.split("=", 1)[1])
        if (before is None or number < before) and os.path.exists(os.path.join(root, name, "_SUCCESS")):
            versions.append(number)
    return os.path.join(root, f"v={max(versions)}") if versions else None


def source_rows(pg, table):
    text = pg.psql(f"SELECT id, version, note, amount FROM {table} ORDER BY id", args=["-t", "-A", "-F", ","])
    return [tuple(line.split(",")) for line in text.splitlines() if line]


def target_rows(out):
    """The rows of the target's last complete version (read with pyarrow: no Spark job)."""
    import pyarrow.parquet as pq

    path = last_version(out)
    if path is None:
        return []
    rows = pq.read_table(path).to_pylist()
    rows.sort(key=lambda r: r["id"])
    return [
        (str(r["id"]), str(r["version"]), r["note"] or "", "" if r["amount"] is None else f"{r['amount']:.2f}")
        for r in rows
    ]


def wait_until_equal(pg, table, out, failed=lambda: None, timeout=300):
    """Waits until the target equals the source (the stream caught up); `failed` says why the
    query stopped, if it did."""
    deadline = time.time() + timeout
    expected = source_rows(pg, table)
    while time.time() < deadline:
        why = failed()
        if why:
            raise AssertionError(f"the stream failed: {why}")
        if target_rows(out) == expected:
            return
        time.sleep(0.5)
    raise AssertionError(f"the target did not reach the source's {len(expected)} rows in {timeout} s")


def check_exactly_once(out):
    """Every change once, in commit order per key: per key, versions 1, 2, 3, ... each once,
    from its insert to its delete. Returns the number of changes."""
    import pyarrow.parquet as pq

    log = pq.read_table(os.path.join(out, "log")).to_pylist()
    positions = [(r["_lsn"], r["_seq"]) for r in log]
    assert len(positions) == len(set(positions)), "a change arrived twice"
    by_key = {}
    for row in sorted(log, key=lambda r: (r["_lsn"], r["_seq"])):
        if row["_op"] != "truncate":
            by_key.setdefault(row["id"], []).append((row["_op"], row["version"]))
    for key, changes in by_key.items():
        ops = [op for op, _ in changes]
        versions = [v for _, v in changes]
        assert ops[0] == "insert" and "insert" not in ops[1:], (key, changes)
        assert "delete" not in ops[:-1], (key, changes)
        if ops[-1] == "delete":
            # The delete carries the version of the row it removed.
            expected = list(range(1, len(versions))) + [len(versions) - 1]
        else:
            expected = list(range(1, len(versions) + 1))
        assert versions == expected, (key, changes)
    return len(log)


def waiting_on_lock(pg, application):
    """Whether a session of `application` waits for an advisory lock."""
    found = pg.psql(
        "SELECT count(*) FROM pg_stat_activity "
        f"WHERE application_name = '{application}' AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
        args=["-t", "-A"],
    )
    return found.strip() != "0"


def hold_lock(pg, slot, application):
    """A session that takes the stream's lock on `slot` (or queues for it) and keeps it."""
    lock = f"pg_advisory_lock(hashtext('sparkds replication slot'), hashtext('{slot}'))"
    return subprocess.Popen(
        pg.psql_argv() + ["-q", "-X", "-c", f"SELECT {lock}; SELECT pg_sleep(600)"],
        env=dict(pg.password_env(), PGAPPNAME=application),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def release(pg, application, process):
    pg.psql(
        f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{application}'",
        user="postgres",
    )
    process.wait(timeout=60)


def holding_lock(pg, application):
    """Whether the session of `application` holds an advisory lock (granted, not queued)."""
    found = pg.psql(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) "
        f"WHERE a.application_name = '{application}' AND l.locktype = 'advisory' AND l.granted",
        args=["-t", "-A"],
    )
    return found.strip() != "0"
