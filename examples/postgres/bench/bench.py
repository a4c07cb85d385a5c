"""Reads and writes N rows of PostgreSQL through Spark: the example through the JVM plugin and
through the bridge, Spark's own JDBC source, and the server's own ceiling (psql's COPY).

    python3 examples/postgres/bench/bench.py [--rows 10000000] [--profile release]

It starts a server of its own (as the tests do: tests/spark/conftest.py), fills a table of
bigint, numeric(12,2), text, timestamp and a nullable integer, and times, in one local[2]
session, with numPartitions 2 (two tasks, two connections):
- reads: `spark.read...load()` written to Spark's `noop` sink;
- writes: a DataFrame cached in Spark's memory, appended to a new table;
- the ceiling: `COPY (SELECT * FROM t) TO STDOUT (FORMAT binary)` to /dev/null, and `COPY t FROM
  STDIN (FORMAT binary)` from a file, each by psql in one session.
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
    args = parser.parse_args()
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
        run(server, rows, library, jar)
    finally:
        server.stop()


def run(pg, rows, library, jar):
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

        timed("server ceiling, read (psql COPY TO STDOUT)", copy_out, results, rows)
        with open(dump, "wb") as out:
            subprocess.run(psql + ["-c", "COPY bench TO STDOUT (FORMAT binary)"], stdout=out, env=env, check=True)
        pg.psql(f"CREATE TABLE bench_in ({COLUMNS})")

        def copy_in():
            with open(dump, "rb") as data:
                subprocess.run(psql + ["-c", "COPY bench_in FROM STDIN (FORMAT binary)"], stdin=data, env=env, check=True)

        timed("server ceiling, write (psql COPY FROM STDIN)", copy_in, results, rows)

    libraries = tempfile.mkdtemp(prefix="sparkds_pg_bench_")
    shutil.copy(library, libraries)
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

    bridge = register(spark, library).name()
    partitions = dict(dbtable="bench", partitionColumn="id", lowerBound="1", upperBound=str(rows + 1), numPartitions="2")
    readers = {
        "JVM plugin": lambda: spark.read.format("native").option("source", "postgres").options(**pg.options(**partitions)),
        "bridge": lambda: spark.read.format(bridge).options(**pg.options(**partitions)),
        "Spark JDBC": lambda: spark.read.format("jdbc").options(**pg.jdbc_options(fetchsize="10000", **partitions)),
    }
    # Each path once on a few rows first: the JVM's classes, the plugin and the bridge's workers
    # are loaded before any timing; then the best of two runs.
    for reader in readers.values():
        reader().load().limit(10).collect()
    for name, reader in readers.items():
        runs = []
        for _ in range(2):
            timed(f"read, {name}", lambda: reader().load().write.format("noop").mode("overwrite").save(), runs, rows)
        results.append(min(runs, key=lambda r: r[1]))

    data = readers["JVM plugin"]().load().cache()
    assert data.count() == rows
    writers = {
        "JVM plugin": lambda t: data.write.format("native").option("source", "postgres").options(**pg.options(dbtable=t)),
        "bridge": lambda t: data.write.format(bridge).options(**pg.options(dbtable=t)),
        "Spark JDBC": lambda t: data.write.format("jdbc").options(**pg.jdbc_options(dbtable=t, batchsize="10000")),
    }
    warm = data.limit(1000)
    for i, name in enumerate(writers):
        table = f"bench_warm_{i}"
        pg.psql(f"CREATE TABLE {table} ({COLUMNS})")
        {
            "JVM plugin": lambda: warm.write.format("native").option("source", "postgres"),
            "bridge": lambda: warm.write.format(bridge),
            "Spark JDBC": lambda: warm.write.format("jdbc"),
        }[name]().options(**(pg.jdbc_options(dbtable=table) if name == "Spark JDBC" else pg.options(dbtable=table))).mode("append").save()
    for i, (name, writer) in enumerate(writers.items()):
        table = f"bench_out_{i}"
        pg.psql(f"CREATE TABLE {table} ({COLUMNS})")
        timed(f"write, {name}", lambda: writer(table).mode("append").save(), results, rows)
        count = pg.psql(f"SELECT count(*) FROM {table}", args=["-t"]).strip()
        assert int(count) == rows, (name, count)
    spark.stop()
    shutil.rmtree(libraries, ignore_errors=True)

    print(f"\n{rows:,} rows of ({COLUMNS}), numPartitions 2, local[2]\n")
    print("| path | seconds | rows/s |")
    print("|------|--------:|-------:|")
    for what, seconds, rate in results:
        print(f"| {what} | {seconds:.2f} | {rate:,.0f} |")


if __name__ == "__main__":
    main()
