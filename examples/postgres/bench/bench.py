"""Reads and writes N rows of PostgreSQL through Spark: the example through the JVM plugin and
through the bridge, Spark's own JDBC source, and the server's own ceiling (psql's COPY).

    python3 examples/postgres/bench/bench.py [--rows 10000000] [--profile release] [--repeat 2]
        [--baseline path/to/an/older/libspark_datasource_postgres.so]

It starts a server of its own (as the tests do: tests/spark/conftest.py), fills a table of
bigint, numeric(12,2), text, timestamp and a nullable integer, and times, in one local[2]
session, with numPartitions 2 (two tasks, two connections):
- reads: `spark.read...load()` written to Spark's `noop` sink;
- writes: a DataFrame cached in Spark's memory, appended to a new table;
- the ceiling: `COPY (SELECT * FROM t) TO STDOUT (FORMAT binary)` to /dev/null, and `COPY t FROM
  STDIN (FORMAT binary)` from a file, each by psql in one session; and what a write's commit
  adds to it, `INSERT INTO t2 SELECT * FROM t`.
Each timing is the best of `--repeat` runs (the first run of each path follows a warm-up).
`--baseline` also times another build of the library in the same session, each of its runs
beside the same run of this one, so that two builds compare on the same load.
Prints a Markdown table of seconds and rows per second.
"""

import argparse
import os
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


def timed(what, action, results, rows):
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    results.append((what, seconds, rows / seconds))
    print(f"{what}: {seconds:.2f} s", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--profile", default="release", help="cargo profile of the library and the jar")
    parser.add_argument("--library", help="a built libspark_datasource_postgres (else built here)")
    parser.add_argument("--jar", help="a built jar of the JVM plugin (else built here)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each timing; the best is kept")
    parser.add_argument("--baseline", help="another build of the library, timed beside this one")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option of the example's reads and writes (fetchsize=65536, say)")
    parser.add_argument("--only", choices=["read", "write"], help="time only the reads, or the writes")
    args = parser.parse_args()
    # The benchmark's server has no TLS, as when the figures of the README were measured (psql
    # and Spark's JDBC source connect without it too): the connector connects without TLS only
    # when an option says so.
    extra = {"sslmode": "disable"}
    for option in args.option:
        key, equals, value = option.partition("=")
        if not equals or not key:
            parser.error(f"--option {option}: give it as KEY=VALUE, such as fetchsize=65536")
        extra[key] = value
    rows = args.rows

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
        server.start(["fsync=off", "synchronous_commit=off", "shared_buffers=512MB", "max_wal_size=4GB"])
        run(server, rows, library, jar, args.repeat, args.baseline, extra, args.only)
    finally:
        server.stop()


def rotated(items, by):
    by %= len(items)
    return items[by:] + items[:by]


def run(pg, rows, library, jar, repeat, baseline, extra, only):
    import shutil

    from pyspark.sql import SparkSession

    pg.psql(f"CREATE TABLE bench ({COLUMNS})")
    pg.psql(
        "INSERT INTO bench SELECT i, (i % 100000) / 100.0, 'name ' || i, "
        "TIMESTAMP '2024-01-01' + i * INTERVAL '1 second', CASE WHEN i % 3 = 0 THEN NULL ELSE i END "
        f"FROM generate_series(1, {rows}) AS i"
    )
    pg.psql("VACUUM ANALYZE bench")
    results = []
    env = dict(os.environ, PGPASSWORD="pw-7d1f0c3a-secret")
    psql = ["psql", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "sparkds", "-d", "sparkds", "-X", "-q"]
    with tempfile.TemporaryDirectory() as scratch:
        dump = os.path.join(scratch, "bench.copy")

        def copy_out():
            with open(os.devnull, "wb") as null:
                subprocess.run(psql + ["-c", "COPY (SELECT * FROM bench) TO STDOUT (FORMAT binary)"], stdout=null, env=env, check=True)

        runs = []
        for _ in range(repeat):
            timed("server ceiling, read (psql COPY TO STDOUT)", copy_out, runs, rows)
        results.append(min(runs, key=lambda r: r[1]))
        with open(dump, "wb") as out:
            subprocess.run(psql + ["-c", "COPY bench TO STDOUT (FORMAT binary)"], stdout=out, env=env, check=True)

        def copy_in():
            with open(dump, "rb") as data:
                subprocess.run(psql + ["-c", "COPY bench_in FROM STDIN (FORMAT binary)"], stdin=data, env=env, check=True)

        runs = []
        for _ in range(repeat):
            pg.psql(f"DROP TABLE IF EXISTS bench_in; CREATE TABLE bench_in ({COLUMNS})")
            timed("server ceiling, write (psql COPY FROM STDIN)", copy_in, runs, rows)
        results.append(min(runs, key=lambda r: r[1]))
        # What a write's commit adds to the COPY of its tasks: the staged rows inserted into
        # the target, in one statement.
        runs = []
        for _ in range(repeat):
            pg.psql(f"DROP TABLE IF EXISTS bench_published; CREATE TABLE bench_published ({COLUMNS})")
            publish = lambda: pg.psql("INSERT INTO bench_published SELECT * FROM bench_in")
            timed("server, a write's commit (INSERT ... SELECT of the staged rows)", publish, runs, rows)
        results.append(min(runs, key=lambda r: r[1]))
        pg.psql("DROP TABLE bench_published")

    libraries = tempfile.mkdtemp(prefix="sparkds_pg_bench_")
    shutil.copy(library, libraries)
    # The plugin finds a source's library by its name: the baseline is `postgres_before`.
    builds = {"": ("postgres", library)}
    if baseline:
        before = os.path.join(libraries, "libspark_datasource_postgres_before.so")
        shutil.copy(baseline, before)
        builds[" (baseline)"] = ("postgres_before", before)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkds-postgres-bench")
        .config("spark.jars", f"{jar},{JDBC_JAR}")
        .config("spark.driver.extraLibraryPath", libraries)
        .config("spark.executor.extraLibraryPath", libraries)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", os.environ.get("BENCH_DRIVER_MEMORY", "6g"))
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    from spark_native_bridge import register

    partitions = dict(dbtable="bench", partitionColumn="id", lowerBound="1", upperBound=str(rows + 1), numPartitions="2")
    readers, writers = {}, {}
    for suffix, (source, path) in builds.items():
        bridge = register(spark, path).name()
        readers[f"JVM plugin{suffix}"] = lambda s=source: spark.read.format("native").option("source", s)
        readers[f"bridge{suffix}"] = lambda b=bridge: spark.read.format(b)
        writers[f"JVM plugin{suffix}"] = lambda d, s=source: d.write.format("native").option("source", s)
        writers[f"bridge{suffix}"] = lambda d, b=bridge: d.write.format(b)
    readers["Spark JDBC"] = lambda: spark.read.format("jdbc")
    writers["Spark JDBC"] = lambda d: d.write.format("jdbc")

    def options(name, **more):
        return pg.jdbc_options(**more) if name == "Spark JDBC" else pg.options(**extra, **more)

    def load(name):
        fetch = dict(fetchsize="10000") if name == "Spark JDBC" else {}
        return readers[name]().options(**options(name, **partitions, **fetch)).load()

    # Each path once on a few rows first: the JVM's classes, the plugin and the bridge's workers
    # are loaded before any timing. The runs alternate between the paths, so that a change of
    # the machine's load falls on all of them, each round starting with another path: the
    # server still works after a write (a checkpoint, autovacuum), on the next one.
    for name in readers:
        load(name).limit(10).collect()
    if only != "write":
        reads = {name: [] for name in readers}
        for run_index in range(repeat):
            for name in rotated(list(readers), run_index):
                timed(f"read, {name}", lambda: load(name).write.format("noop").mode("overwrite").save(), reads[name], rows)
        results.extend(min(runs, key=lambda r: r[1]) for runs in reads.values())

    if only != "read":
        data = load("JVM plugin").cache()
        assert data.count() == rows
        warm = data.limit(1000)
        for i, name in enumerate(writers):
            table = f"bench_warm_{i}"
            pg.psql(f"CREATE TABLE {table} ({COLUMNS})")
            writers[name](warm).options(**options(name, dbtable=table)).mode("append").save()
        writes = {name: [] for name in writers}
        for run_index in range(repeat):
            for i, name in rotated(list(enumerate(writers)), run_index):
                table = f"bench_out_{run_index}_{i}"
                pg.psql(f"CREATE TABLE {table} ({COLUMNS})")
                more = dict(batchsize="10000") if name == "Spark JDBC" else {}
                save = lambda: writers[name](data).options(**options(name, dbtable=table, **more)).mode("append").save()
                timed(f"write, {name}", save, writes[name], rows)
                count = pg.psql(f"SELECT count(*) FROM {table}", args=["-t"]).strip()
                assert int(count) == rows, (name, count)
                pg.psql(f"DROP TABLE {table}")
        results.extend(min(runs, key=lambda r: r[1]) for runs in writes.values())
    spark.stop()
    shutil.rmtree(libraries, ignore_errors=True)

    print(f"\n{rows:,} rows of ({COLUMNS}), numPartitions 2, local[2]\n")
    print("| path | seconds | rows/s |")
    print("|------|--------:|-------:|")
    for what, seconds, rate in results:
        print(f"| {what} | {seconds:.2f} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
