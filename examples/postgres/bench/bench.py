"""Reads and writes N rows of PostgreSQL through Spark: the example through the JVM plugin (and,
with --bridge, through the bridge), Spark's own JDBC source, and the server's own ceiling
(psql's binary COPY of the same columns), shape by shape.

    python3 examples/postgres/bench/bench.py [--rows 3000000] [--partitions 4] [--repeat 3]
        [--profile release] [--baseline path/to/an/older/libspark_datasource_postgres.so]
        [--only read|write] [--shape count --shape wide ...] [--bridge]

It starts a server of its own (as the tests do: tests/spark/conftest.py), fills a table of
bigint, numeric(12,2), text, timestamp and a nullable integer, and times, in one local[2]
session, reads partitioned on `id` in `--partitions` ranges (as many tasks and connections),
in five shapes:

- count: `df.count()` (Spark asks for no column);
- count + 2 sums: `count(*), sum(id), sum(amount)` (Spark reads `id` and `amount`, and
  aggregates itself: neither the JDBC source of `format("jdbc")` nor the plugin pushes an
  aggregate);
- one column: `name` into Spark's `noop` sink;
- filter 1 %: every column of the rows with `amount < 10` (1 % of them) into `noop`, the filter
  pushed to the server;
- wide: every column into `noop`.

The ceiling of each shape is `COPY (SELECT <the same columns> FROM bench WHERE <the range>
[AND amount < 10]) TO STDOUT (FORMAT binary)` by psql to /dev/null, in one session per partition,
all at once: the server's own time to produce what the plugin decodes (the plugin counts rows
with `SELECT count(*)` where Spark asks for no column, which takes the server less). `Spark
alone` is the shape's action on the rows that the plugin returns for it, cached in Spark's
memory beforehand: Spark's own part of the shape (its job, its work per row), with no source.
`pages` is the same COPY with each session's rows given by a range of the table's pages
(`ctid >= '(first,0)' AND ctid < '(next,0)'`, a TID range scan) instead of a range of `id`: each
session of the ceiling scans the whole table for its range of `id` (there is no index, as on
many a column that a partitioned read of Spark's JDBC source names), where a range of pages has
the server read each page once. `JVM plugin, pages` is the plugin's read partitioned so
(`partitionColumn` `ctid`, `numPartitions` the same), its tasks in the snapshot that the driver
exported when it planned them.
The runs alternate between the paths, each round starting with another, and the best of
`--repeat` is kept. The server logs every statement (`log_statement=all`): the output lists
what each path sent for each shape, which shows what was pushed.

Writes (`--only write`, or both by default): a DataFrame cached in Spark's memory, appended to a
new table, beside psql's `COPY t FROM STDIN (FORMAT binary)` from a file and what a write's
commit adds to it, `INSERT INTO t2 SELECT * FROM t`.

`--baseline` also times another build of the library in the same session, each of its runs
beside the same run of this one, so that two builds compare on the same load.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(EXAMPLE))
sys.path.insert(0, os.path.join(EXAMPLE, "tests", "spark"))

from conftest import JDBC_JAR, Server  # noqa: E402

COLUMNS = "id bigint, amount numeric(12,2), name text, at timestamp, maybe integer"
NAMES = ["id", "amount", "name", "at", "maybe"]
# The filter of the shape `filter 1 %`: amount is (i % 100000) / 100, so 1,000 values in 100,000.
FILTER = "amount < 10"
# The path that times Spark's own part of a shape.
ALONE = "Spark alone"
# The ceiling of sessions that each read a range of the table's pages.
PAGES = "pages"
# The plugin's read partitioned by pages.
PLUGIN_PAGES = "JVM plugin, pages"

# Each shape: the columns that Spark asks the source for, and what a read does with them.
SHAPES = {
    "count": ([], lambda df, F: df.count()),
    "count + 2 sums": (
        ["id", "amount"],
        lambda df, F: df.agg(F.count("*"), F.sum("id"), F.sum("amount")).collect(),
    ),
    "one column": (["name"], lambda df, F: noop(df.select("name"))),
    "filter 1 %": (NAMES, lambda df, F: noop(df.where(F.col("amount") < 10))),
    "wide": (NAMES, lambda df, F: noop(df)),
}


def noop(df):
    df.write.format("noop").mode("overwrite").save()


def timed(action):
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def ranges(column, lower, upper, partitions):
    """The WHERE clauses of Spark's JDBC source for a partitioned read
    (`JDBCRelation.columnPartition`), as the connector plans them too."""
    if partitions == 1 or lower == upper:
        return ["TRUE"]
    stride = upper // partitions - lower // partitions
    partitions = min(partitions, max(upper - lower, 1))
    clauses, current = [], lower
    for i in range(partitions):
        low = f"{column} >= {current}" if i != 0 else None
        current += stride
        high = f"{column} < {current}" if i != partitions - 1 else None
        if high is None:
            clauses.append(low)
        elif low is None:
            clauses.append(f"({high} OR {column} IS NULL)")
        else:
            clauses.append(f"{low} AND {high}")
    return clauses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--partitions", type=int, default=4, help="numPartitions of the reads")
    parser.add_argument("--profile", default="release", help="cargo profile of the library and the jar")
    parser.add_argument("--library", help="a built libspark_datasource_postgres (else built here)")
    parser.add_argument("--jar", help="a built jar of the JVM plugin (else built here)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timing; the best is kept")
    parser.add_argument("--baseline", help="another build of the library, timed beside this one")
    parser.add_argument("--bridge", action="store_true", help="time the bridge (Python workers) too")
    parser.add_argument("--shape", action="append", choices=list(SHAPES), help="time only these shapes")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option of the example's reads and writes (fetchsize=65536, say)")
    parser.add_argument("--only", choices=["read", "write"], help="time only the reads, or the writes")
    args = parser.parse_args()
    # The benchmark's server has no TLS (psql and Spark's JDBC source connect without it too):
    # the connector connects without TLS only when an option says so.
    extra = {"sslmode": "disable"}
    for option in args.option:
        key, equals, value = option.partition("=")
        if not equals or not key:
            parser.error(f"--option {option}: give it as KEY=VALUE, such as fetchsize=65536")
        extra[key] = value

    library = args.library
    if not library:
        profile_dir = "debug" if args.profile == "dev" else args.profile
        build = ["cargo", "build", "--quiet", "--profile", args.profile, "-p", "postgres_example"]
        subprocess.run(build, cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        library = os.path.join(target, profile_dir, "libspark_datasource_postgres.so")
    jar = args.jar or subprocess.run(
        ["bash", os.path.join(ROOT, "jvm", "build.sh"), "--profile", args.profile],
        check=True, stdout=subprocess.PIPE, text=True,
    ).stdout.strip()

    server = Server()
    try:
        server.start([
            "fsync=off", "synchronous_commit=off", "shared_buffers=512MB", "max_wal_size=4GB",
            # Every statement, with the application that sent it: what each path pushed.
            "log_statement=all", "log_line_prefix='%a|'",
        ])
        run(server, args, library, jar, extra)
    finally:
        server.stop()


def rotated(items, by):
    by %= len(items)
    return items[by:] + items[:by]


class Log:
    """The server's log: the statements sent since the last `take`, by application."""

    def __init__(self, server):
        self.path = os.path.join(server.dir, "server.log")
        self.at = os.path.getsize(self.path)

    def take(self):
        with open(self.path, "rb") as f:
            f.seek(self.at)
            text = f.read().decode("utf-8", "replace")
            self.at = f.tell()
        sent = []
        for line in text.splitlines():
            application, _, rest = line.partition("|")
            found = re.search(r"LOG:  (?:statement|execute [^:]*): (.*)", rest)
            if found and "bench" in found.group(1):
                sent.append((application, found.group(1)))
        return sent


def run(pg, args, library, jar, extra):
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    rows, partitions, repeat = args.rows, args.partitions, args.repeat
    shapes = {name: SHAPES[name] for name in (args.shape or SHAPES)}
    pg.psql(f"CREATE TABLE bench ({COLUMNS})")
    pg.psql(
        "INSERT INTO bench SELECT i, (i % 100000) / 100.0, 'name ' || i, "
        "TIMESTAMP '2024-01-01' + i * INTERVAL '1 second', CASE WHEN i % 3 = 0 THEN NULL ELSE i END "
        f"FROM generate_series(1, {rows}) AS i"
    )
    pg.psql("VACUUM ANALYZE bench")
    env = pg.password_env()
    psql = pg.psql_argv() + ["-X", "-q"]
    reads, writes = {}, {}  # (shape or write path) -> {path: [seconds]}
    sent = {}  # (shape, path) -> statements

    clauses = ranges("id", 1, rows + 1, partitions)
    pages = int(pg.psql("SELECT pg_relation_size('bench') / current_setting('block_size')::int", args=["-At"]))
    page_clauses = ranges("ctid", 0, pages + 1, partitions)
    # `ctid >= 0`: a range of pages compares with a tid, `(page,0)`.
    page_clauses = [re.sub(r"ctid (>=|<) (\d+)", r"ctid \1 '(\2,0)'", c).replace(" OR ctid IS NULL", "") for c in page_clauses]

    def ceiling(select, where, clauses=clauses):
        """psql's binary COPY of the expressions `select`, one session per partition, all at
        once."""
        with open(os.devnull, "wb") as null:
            running = [
                subprocess.Popen(
                    psql + ["-c", f"COPY (SELECT {select} FROM bench WHERE {c}{where}) TO STDOUT (FORMAT binary)"],
                    stdout=null, env=env,
                )
                for c in clauses
            ]
            for process in running:
                assert process.wait() == 0, process.args

    libraries = tempfile.mkdtemp(prefix="sparkds_pg_bench_")
    shutil.copy(library, os.path.join(libraries, "libspark_datasource_postgres.so"))
    # The plugin finds a source's library by its name: the baseline is `postgres_before`.
    builds = {"": ("postgres", library)}
    if args.baseline:
        before = os.path.join(libraries, "libspark_datasource_postgres_before.so")
        shutil.copy(args.baseline, before)
        builds[" (baseline)"] = ("postgres_before", before)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkds-postgres-bench")
        .config("spark.jars", f"{jar},{JDBC_JAR}")
        .config("spark.driver.extraLibraryPath", libraries)
        .config("spark.executor.extraLibraryPath", libraries)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("BENCH_DRIVER_MEMORY", "6g"))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    readers, writers = {}, {}
    for suffix, (source, path) in builds.items():
        readers[f"JVM plugin{suffix}"] = lambda s=source: spark.read.format("native").option("source", s)
        writers[f"JVM plugin{suffix}"] = lambda d, s=source: d.write.format("native").option("source", s)
        if args.bridge:
            from spark_native_bridge import register

            bridge = register(spark, path).name()
            readers[f"bridge{suffix}"] = lambda b=bridge: spark.read.format(b)
            writers[f"bridge{suffix}"] = lambda d, b=bridge: d.write.format(b)
    # The plugin partitioned by the table's pages, in one snapshot (`partitionColumn` `ctid`).
    readers[PLUGIN_PAGES] = lambda: spark.read.format("native").option("source", "postgres")
    readers["Spark JDBC"] = lambda: spark.read.format("jdbc")
    writers["Spark JDBC"] = lambda d: d.write.format("jdbc")
    partitioning = dict(
        dbtable="bench", partitionColumn="id", lowerBound="1", upperBound=str(rows + 1),
        numPartitions=str(partitions),
    )

    def options(name, **more):
        return pg.jdbc_options(**more) if name == "Spark JDBC" else pg.options(**extra, **more)

    def load(name):
        fetch = dict(fetchsize="10000") if name == "Spark JDBC" else {}
        parts = partitioning
        if name == PLUGIN_PAGES:
            parts = dict(dbtable="bench", partitionColumn="ctid", numPartitions=str(partitions))
        return readers[name]().options(**options(name, **parts, **fetch)).load()

    # Each path once on a few rows first: the JVM's classes, the plugin (and the bridge's
    # workers) are loaded before any timing. The runs alternate between the paths, so that a
    # change of the machine's load falls on all of them, each round starting with another.
    for name in readers:
        load(name).limit(10).collect()
    log = Log(pg)
    paths = ["ceiling", PAGES] + list(readers)
    # The ceiling selects what the plugin selects for the same columns (a `timestamp` read as an
    # instant is converted by the server, but in UTC): its statement, on one row.
    selects = {}
    for shape, (columns, _) in shapes.items():
        log.take()
        load("JVM plugin").select(*columns).limit(1).collect()
        found = [re.search(r"COPY \(SELECT (.*?) FROM bench", s) for _, s in log.take()]
        selects[shape] = next((f.group(1) for f in found if f), ", ".join(columns))
    # Spark's own part of each shape: the same action on the rows that the plugin returns for
    # it, cached in Spark's memory, with no source to read.
    cached = {}
    if args.only != "write":
        for shape, (columns, _) in shapes.items():
            rows_in = load("JVM plugin")
            if shape == "filter 1 %":
                rows_in = rows_in.where(F.col("amount") < 10)
            cached[shape] = rows_in.select(*columns).cache()
            cached[shape].count()
        paths.append(ALONE)
        for round_index in range(repeat):
            for shape, (columns, action) in shapes.items():
                where = f" AND {FILTER}" if shape == "filter 1 %" else ""
                for name in rotated(paths, round_index):
                    log.take()
                    if name == "ceiling":
                        seconds = timed(lambda: ceiling(selects[shape], where))
                    elif name == PAGES:
                        seconds = timed(lambda: ceiling(selects[shape], where, page_clauses))
                    elif name == ALONE:
                        seconds = timed(lambda: action(cached[shape], F))
                    else:
                        seconds = timed(lambda: action(load(name), F))
                    sent.setdefault((shape, name), sorted({s for _, s in log.take()}))
                    reads.setdefault(shape, {}).setdefault(name, []).append(seconds)
                    print(f"{shape}, {name}: {seconds:.2f} s", file=sys.stderr)
        for frame in cached.values():
            frame.unpersist()
        # Every path read every row, or the rows of the filter.
        expected = {"count": rows, "filter 1 %": sum(1 for i in range(1, rows + 1) if i % 100000 < 1000)}
        for name in readers:
            assert load(name).count() == expected["count"], name
            assert load(name).where(F.col("amount") < 10).count() == expected["filter 1 %"], name

    if args.only != "read":
        write_paths(pg, spark, load, writers, options, repeat, rows, writes, psql, env)
    spark.stop()
    shutil.rmtree(libraries, ignore_errors=True)

    sessions = len(clauses)
    print(f"\n{rows:,} rows of ({COLUMNS}), numPartitions {partitions}, local[2], best of {repeat}")
    if reads:
        print(f"the ceiling: psql's COPY ... TO STDOUT (FORMAT binary) of the same columns, "
              f"{sessions} sessions at once (one per partition)\n")
        plugins = [n for n in readers if n != "Spark JDBC"]
        head = ["shape", "ceiling s", f"{PAGES} s", *[f"{n} s" for n in readers], f"{ALONE} s"]
        head += [f"{n} x JDBC" for n in plugins] + [f"{n} / ceiling" for n in plugins]
        # The most that any source gains over JDBC while the server does the same work.
        head += ["JDBC / ceiling", f"{PLUGIN_PAGES} / {PAGES}"]
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join(["------"] + ["------:"] * (len(head) - 1)) + "|")
        for shape, times in reads.items():
            best = {name: min(runs) for name, runs in times.items()}
            cells = [shape] + [f"{best[n]:.2f}" for n in ["ceiling", PAGES, *readers, ALONE]]
            cells += [f"{best['Spark JDBC'] / best[n]:.2f}" for n in plugins]
            cells += [f"{best[n] / best['ceiling']:.2f}" for n in plugins]
            cells += [f"{best['Spark JDBC'] / best['ceiling']:.2f}"]
            # The read by pages against the server's own COPY of the same pages.
            cells += [f"{best[PLUGIN_PAGES] / best[PAGES]:.2f}"]
            print("| " + " | ".join(cells) + " |")
        print("\nThe ceiling's COPY selects, per shape (as the plugin does):\n")
        for shape, select in selects.items():
            print(f"- {shape}: `SELECT {select} FROM bench`")
        print("\nWhat each path sent, per shape (the first run; a statement of each partition):\n")
        for (shape, name), statements in sent.items():
            if name in ("ceiling", PAGES, ALONE):
                continue
            shown = [s for s in statements if re.search(r"\bid\b[^,]*<|IS NULL", s) or "WHERE" not in s]
            for statement in (shown or statements)[:2]:
                print(f"- {shape}, {name}: `{statement}`")
    if writes:
        print("\n| write | seconds | rows/s |")
        print("|-------|--------:|-------:|")
        for name, runs in writes.items():
            print(f"| {name} | {min(runs):.2f} | {rows / min(runs):,.0f} |")


def write_paths(pg, spark, load, writers, options, repeat, rows, results, psql, env):
    with tempfile.TemporaryDirectory() as scratch:
        dump = os.path.join(scratch, "bench.copy")
        with open(dump, "wb") as out:
            subprocess.run(psql + ["-c", "COPY bench TO STDOUT (FORMAT binary)"], stdout=out, env=env, check=True)

        def copy_in():
            with open(dump, "rb") as data:
                subprocess.run(psql + ["-c", "COPY bench_in FROM STDIN (FORMAT binary)"], stdin=data, env=env, check=True)

        name = "server ceiling, write (psql COPY FROM STDIN)"
        for _ in range(repeat):
            pg.psql(f"DROP TABLE IF EXISTS bench_in; CREATE TABLE bench_in ({COLUMNS})")
            results.setdefault(name, []).append(timed(copy_in))
        # What a write's commit adds to the COPY of its tasks: the staged rows inserted into
        # the target, in one statement.
        name = "server, a write's commit (INSERT ... SELECT of the staged rows)"
        for _ in range(repeat):
            pg.psql(f"DROP TABLE IF EXISTS bench_published; CREATE TABLE bench_published ({COLUMNS})")
            results.setdefault(name, []).append(timed(lambda: pg.psql("INSERT INTO bench_published SELECT * FROM bench_in")))
        pg.psql("DROP TABLE bench_published")

    data = load("JVM plugin").cache()
    assert data.count() == rows
    warm = data.limit(1000)
    for i, name in enumerate(writers):
        table = f"bench_warm_{i}"
        pg.psql(f"CREATE TABLE {table} ({COLUMNS})")
        writers[name](warm).options(**options(name, dbtable=table)).mode("append").save()
    for run_index in range(repeat):
        for i, name in rotated(list(enumerate(writers)), run_index):
            table = f"bench_out_{run_index}_{i}"
            pg.psql(f"CREATE TABLE {table} ({COLUMNS})")
            more = dict(batchsize="10000") if name == "Spark JDBC" else {}
            save = lambda: writers[name](data).options(**options(name, dbtable=table, **more)).mode("append").save()
            seconds = timed(save)
            results.setdefault(f"write, {name}", []).append(seconds)
            print(f"write, {name}: {seconds:.2f} s", file=sys.stderr)
            count = pg.psql(f"SELECT count(*) FROM {table}", args=["-t"]).strip()
            assert int(count) == rows, (name, count)
            pg.psql(f"DROP TABLE {table}")


if __name__ == "__main__":
    main()
