"""The change data capture stream against Spark's own file-stream source, in one run: how fast
each reads the same rows, and how long a row takes from its commit to Spark.

    python3 examples/postgres/bench/cdc.py [--rows 1000000] [--transaction 1000] [--repeat 2]
        [--latency 40] [--profile release] [--library PATH] [--jar PATH] [--baseline OLD.so]

It starts a server of its own with wal_level=logical (as the tests do: tests/spark/conftest.py)
and one local[2] session with the JVM plugin, then:
- throughput: `--rows` rows of (bigint, numeric(12,2), text, timestamp) are inserted into a
  captured table in transactions of `--transaction` rows, after the stream created its slot
  (one slot a run, so that every run reads the same changes). The same rows, read back with the
  example's batch read, are written as Parquet files (4) and as JSON files (4). Each run reads
  them all once, with `trigger(availableNow=True)` to Spark's `noop` sink: the stream from its
  slot, the file streams from their folders; and `pg_recvlogical` drains a slot of its own
  (created with the stream's) with the stream's options of `pgoutput` to /dev/null, up to the
  last insert: the server's replication protocol decoding the same changes (its walsender
  flushes the socket after each message). The runs alternate between the four, each round
  starting with another; each figure is the best of `--repeat`. The server logs each
  statement's duration: the output says how much of the stream's best run went to the driver's
  peek at the slot (planning a micro-batch), the tasks' peeks (reading it, in parts side by
  side: `decodingTasks`), the advance of the copies of the slot that the parts after the first
  read, and the commit's advance of the slot. `--baseline` times the stream of another build of
  the library beside (the source `postgres_before`, on slots of its own).
- latency: both queries run at once (the default trigger: a micro-batch as soon as the last
  one ends) into a foreachBatch that notes when each row arrives, while one row a
  quarter-second is committed to PostgreSQL and one written as a Parquet file (written to a
  hidden name and renamed, as a file stream needs). A change's latency is from its commit time
  (`_commit_time`, the server's clock: the same machine) to its arrival; a file's from its
  rename. Prints the median, the 90th percentile and the maximum of `--latency` rows each.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(EXAMPLE))
sys.path.insert(0, os.path.join(EXAMPLE, "tests", "spark"))

from conftest import USER, Server  # noqa: E402

COLUMNS = "id bigint PRIMARY KEY, amount numeric(12,2), name text, at timestamp"
FILES = 4


def build(args):
    library, jar = args.library, args.jar
    if not library:
        profile_dir = "debug" if args.profile == "dev" else args.profile
        subprocess.run(
            ["cargo", "build", "--quiet", "--profile", args.profile, "-p", "postgres_example"], cwd=ROOT, check=True
        )
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        library = os.path.join(target, profile_dir, "libspark_datasource_postgres.so")
    if not jar:
        jar = subprocess.run(
            ["bash", os.path.join(ROOT, "jvm", "build.sh"), "--profile", args.profile],
            check=True, stdout=subprocess.PIPE, text=True,
        ).stdout.strip()
    return library, jar


def session(library, jar, libraries, baseline=None):
    from pyspark.sql import SparkSession

    shutil.copy(library, os.path.join(libraries, "libspark_datasource_postgres.so"))
    if baseline:
        # The plugin finds a source's library by its name: the baseline is `postgres_before`.
        shutil.copy(baseline, os.path.join(libraries, "libspark_datasource_postgres_before.so"))
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkds-postgres-cdc-bench")
        .config("spark.jars", jar)
        .config("spark.driver.extraLibraryPath", libraries)
        .config("spark.executor.extraLibraryPath", libraries)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("BENCH_DRIVER_MEMORY", "4g"))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def native_options(pg, **more):
    """The connector's options on the benchmark's server, which has no TLS, as when the figures
    of the README were measured: the connector connects without TLS only when an option says
    so."""
    return pg.options(sslmode="disable", **more)


def insert(pg, table, first, rows, transaction):
    """Inserts ids first .. first + rows - 1, `transaction` rows a transaction."""
    statements = []
    for start in range(first, first + rows, transaction):
        end = min(start + transaction, first + rows) - 1
        statements.append(
            f"INSERT INTO {table} SELECT i, (i % 100000) / 100.0, 'name ' || i, "
            f"TIMESTAMP '2024-01-01' + i * INTERVAL '1 second' FROM generate_series({start}, {end}) AS i;"
        )
    subprocess.run(
        pg.psql_argv() + ["-v", "ON_ERROR_STOP=1", "-q", "-X", "-f", "-"],
        input="\n".join(statements), text=True, env=pg.password_env(), check=True, stdout=subprocess.DEVNULL,
    )


CDC = "PostgreSQL change data capture (JVM plugin)"
BEFORE = "PostgreSQL change data capture (JVM plugin, baseline)"
RECVLOGICAL = "pg_recvlogical (pgoutput) to /dev/null"
PARQUET = "Spark file stream (Parquet)"
JSON = "Spark file stream (JSON)"


class Log:
    """The server's log (`log_min_duration_statement=0`): the statements of the stream since
    the last `take`, with their milliseconds, by what they do."""

    KINDS = (
        ("the driver's peek (planning)", "sparkds-stream|", "pg_logical_slot_peek_binary_changes"),
        ("the tasks' peeks (reading, summed over the tasks)", "sparkds-stream-read|",
         "pg_logical_slot_peek_binary_changes"),
        ("the copies' advance (the parts after the first)", "sparkds-stream-read|",
         "pg_replication_slot_advance"),
        ("the commit's advance", "sparkds-stream|", "pg_replication_slot_advance"),
    )

    def __init__(self, server):
        self.path = os.path.join(server.dir, "server.log")
        self.at = os.path.getsize(self.path)

    def take(self):
        import re

        with open(self.path, "rb") as f:
            f.seek(self.at)
            text = f.read().decode("utf-8", "replace")
            self.at = f.tell()
        spent = {kind: 0.0 for kind, _, _ in self.KINDS}
        for line in text.splitlines():
            found = re.search(r"duration: ([0-9.]+) ms", line)
            if not found:
                continue
            for kind, application, marker in self.KINDS:
                if line.startswith(application) and marker in line:
                    spent[kind] += float(found.group(1)) / 1000
                    break
        return spent


def recvlogical(pg, slot, publication, end):
    """pg_recvlogical of `slot` from its start to `end`, the decoded messages to /dev/null."""
    host, port = pg.addresses[0], str(pg.port)
    program = os.path.join(pg.bin, "pg_recvlogical")
    argv = [
        program, "-h", host, "-p", port, "-U", USER, "-d", "sparkds", "--slot", slot, "--start",
        "--endpos", end, "--no-loop", "-f", os.devnull,
        # The options the stream's peeks pass to pgoutput.
        "-o", "proto_version=1", "-o", f"publication_names={publication}", "-o", "binary=true",
    ]
    subprocess.run(argv, env=pg.password_env(), check=True, stdout=subprocess.DEVNULL)


def throughput(spark, pg, scratch, rows, transaction, repeat, baseline=False):
    """Seconds of the best run of each source, reading the same `rows`, and where the stream's
    time went on the server in its best run."""
    pg.psql(f"CREATE TABLE bench ({COLUMNS})")
    pg.psql("CREATE PUBLICATION bench_recv FOR TABLE bench")

    def cdc(run, source="postgres"):
        slot = f"bench_{run}" if source == "postgres" else f"before_{run}"
        return (
            spark.readStream.format("native").option("source", source)
            .options(**native_options(pg, slot=slot, tables="bench")).load()
        )

    def drain(frame, checkpoint):
        query = (
            frame.writeStream.format("noop").option("checkpointLocation", checkpoint)
            .trigger(availableNow=True).start()
        )
        query.awaitTermination()
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        return sum(p["numInputRows"] for p in query.recentProgress)

    # Each run's slots exist before the rows: each reads all of them.
    for run in range(repeat):
        drain(cdc(run), os.path.join(scratch, f"cdc_{run}"))
        if baseline:
            drain(cdc(run, "postgres_before"), os.path.join(scratch, f"before_{run}"))
        pg.psql(f"SELECT pg_create_logical_replication_slot('recv_{run}', 'pgoutput')")
    insert(pg, "bench", 1, rows, transaction)
    end = pg.psql("SELECT pg_current_wal_insert_lsn()", args=["-t", "-A"]).strip()
    table = spark.read.format("native").option("source", "postgres").options(**native_options(pg, dbtable="bench")).load()
    folders = {PARQUET: os.path.join(scratch, "parquet"), JSON: os.path.join(scratch, "json")}
    table.repartition(FILES).write.parquet(folders[PARQUET])
    table.repartition(FILES).write.json(folders[JSON])
    schema = spark.read.parquet(folders[PARQUET]).schema

    log = Log(pg)
    seconds = {CDC: [], RECVLOGICAL: [], PARQUET: [], JSON: []}
    if baseline:
        seconds[BEFORE] = []
    spent = []
    for run in range(repeat):
        for name in rotated(list(seconds), run):
            log.take()
            start = time.perf_counter()
            if name == RECVLOGICAL:
                recvlogical(pg, f"recv_{run}", "bench_recv", end)
                read = rows
            else:
                if name == CDC:
                    frame = cdc(run)
                elif name == BEFORE:
                    frame = cdc(run, "postgres_before")
                elif name == PARQUET:
                    frame = spark.readStream.schema(schema).parquet(folders[PARQUET])
                else:
                    frame = spark.readStream.schema(schema).json(folders[JSON])
                # The stream's checkpoint is the one that created its slot, before the rows.
                checkpoints = {CDC: f"cdc_{run}", BEFORE: f"before_{run}"}
                checkpoint = checkpoints.get(name, f"files_{list(seconds).index(name)}_{run}")
                read = drain(frame, os.path.join(scratch, checkpoint))
            took = time.perf_counter() - start
            if read != rows:
                raise RuntimeError(f"{name} read {read} rows, not {rows}")
            print(f"{name}: {took:.2f} s", file=sys.stderr)
            seconds[name].append(took)
            if name == CDC:
                spent.append((took, log.take()))
    return {name: min(runs) for name, runs in seconds.items()}, min(spent, key=lambda s: s[0])[1]


def rotated(items, by):
    by %= len(items)
    return items[by:] + items[:by]


class Arrivals:
    """What a foreachBatch saw: each row's key, when it was made, and when it arrived."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rows = {}

    def sink(self, made_column):
        from pyspark.sql import functions as F

        def apply(batch, _batch_id):
            rows = batch.select(F.col("id"), made_column.alias("made")).collect()
            now = time.time()
            with self.lock:
                for row in rows:
                    self.rows.setdefault(row["id"], (row["made"], now))

        return apply

    def count(self):
        with self.lock:
            return len(self.rows)


def latency(spark, pg, scratch, events):
    """The seconds from commit (or rename) to arrival, each row's, of each source."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    pg.psql("CREATE TABLE ticks (id bigint PRIMARY KEY)")
    folder = os.path.join(scratch, "ticks")
    os.makedirs(folder)
    changes, files = Arrivals(), Arrivals()
    cdc = (
        spark.readStream.format("native").option("source", "postgres")
        .options(**native_options(pg, slot="ticks", tables="ticks")).load()
        .where("_op = 'insert'")
        .select(F.col("ticks.id").alias("id"), F.col("_commit_time"))
        .writeStream.foreachBatch(changes.sink(F.unix_micros("_commit_time") / 1e6))
        .option("checkpointLocation", os.path.join(scratch, "ticks_cdc")).start()
    )
    stream = (
        spark.readStream.schema("id long, made double").parquet(folder)
        .writeStream.foreachBatch(files.sink(F.col("made")))
        .option("checkpointLocation", os.path.join(scratch, "ticks_files")).start()
    )
    psql = subprocess.Popen(
        pg.psql_argv() + ["-v", "ON_ERROR_STOP=1", "-q", "-X", "-f", "-"],
        stdin=subprocess.PIPE, text=True, env=pg.password_env(), stdout=subprocess.DEVNULL,
    )
    try:
        # The stream's slot exists once its first micro-batch ran.
        deadline = time.time() + 120
        while not pg.psql("SELECT 1 FROM pg_replication_slots WHERE slot_name = 'ticks'", args=["-t", "-A"]).strip():
            if time.time() > deadline or cdc.exception() is not None:
                raise RuntimeError(f"the stream did not start: {cdc.exception()}")
            time.sleep(0.2)
        time.sleep(2)
        for n in range(1, events + 1):
            psql.stdin.write(f"INSERT INTO ticks VALUES ({n});\n")
            psql.stdin.flush()
            # A hidden name, which the file stream skips, then the rename: the file is whole
            # when it appears. Its time is the rename's, to the microseconds of writing it.
            hidden = os.path.join(folder, f".{n}.parquet")
            pq.write_table(pa.table({"id": pa.array([n], pa.int64()), "made": pa.array([time.time()])}), hidden)
            os.rename(hidden, os.path.join(folder, f"{n}.parquet"))
            time.sleep(0.25)
        deadline = time.time() + 120
        while changes.count() < events or files.count() < events:
            for query in (cdc, stream):
                if query.exception() is not None:
                    raise RuntimeError(f"a query failed: {query.exception()}")
            if time.time() > deadline:
                raise RuntimeError(f"{changes.count()} changes and {files.count()} files of {events} arrived")
            time.sleep(0.2)
    finally:
        psql.stdin.close()
        psql.wait()
        cdc.stop()
        stream.stop()
    return {
        CDC: [a - m for m, a in changes.rows.values()],
        PARQUET: [a - m for m, a in files.rows.values()],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--transaction", type=int, default=1000, help="rows a transaction")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each read; the best is kept")
    parser.add_argument("--latency", type=int, default=40, help="rows timed from commit to arrival")
    parser.add_argument("--profile", default="release", help="cargo profile of the library and the jar")
    parser.add_argument("--library", help="a built libspark_datasource_postgres (else built here)")
    parser.add_argument("--jar", help="a built jar of the JVM plugin (else built here)")
    parser.add_argument("--baseline", help="another build of the library, whose stream is timed beside")
    args = parser.parse_args()
    if args.rows < 1 or args.transaction < 1 or args.repeat < 1 or args.latency < 1:
        parser.error("--rows, --transaction, --repeat and --latency must be at least 1")
    library, jar = build(args)

    server = Server()
    scratch = tempfile.mkdtemp(prefix="sparkds_cdc_bench_")
    libraries = tempfile.mkdtemp(prefix="sparkds_cdc_bench_lib_")
    try:
        server.start([
            "wal_level=logical", "fsync=off", "synchronous_commit=off", "max_wal_size=4GB",
            # A slot a run and source, and the temporary copies of a micro-batch's parts.
            "max_replication_slots=40",
            # Each statement's duration, with the application that sent it: where the stream's
            # time goes on the server.
            "log_min_duration_statement=0", "log_line_prefix='%a|'",
        ])
        server.psql(f"ALTER ROLE {USER} REPLICATION", user="postgres")
        spark = session(library, jar, libraries, args.baseline)
        try:
            best, spent = throughput(
                spark, server, scratch, args.rows, args.transaction, args.repeat, bool(args.baseline)
            )
            waits = latency(spark, server, scratch, args.latency)
        finally:
            spark.stop()
    finally:
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(libraries, ignore_errors=True)

    print(f"\nThroughput: {args.rows:,} inserted rows of ({COLUMNS}), {args.transaction} a transaction;")
    print(f"the same rows in {FILES} Parquet files and {FILES} JSON files. trigger(availableNow=True) to noop,")
    print(f"local[2], best of {args.repeat}; pg_recvlogical from the slot's start to the last insert.\n")
    print("| source | seconds | rows/s | the stream's rate, x this |")
    print("|--------|--------:|-------:|--------------------------:|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds:.2f} | {args.rows / seconds:,.0f} | {seconds / best[CDC]:.2f} |")
    print("\nThe stream's best run on the server (seconds of its statements):\n")
    print("| statement | seconds |")
    print("|-----------|--------:|")
    for kind, seconds in spent.items():
        print(f"| {kind} | {seconds:.2f} |")
    print(f"\nLatency: {args.latency} rows, one a quarter-second, both queries at once, the default trigger.\n")
    print("| source | median ms | 90th percentile ms | max ms |")
    print("|--------|----------:|-------------------:|-------:|")
    for name, seconds in waits.items():
        ordered = sorted(seconds)
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(
            f"| {name} | {statistics.median(ordered) * 1000:.0f} | {p90 * 1000:.0f} | {ordered[-1] * 1000:.0f} |"
        )


if __name__ == "__main__":
    main()
