#!/usr/bin/env python3
"""Filter pushdown on Spark, through the JVM plugin and through the Python bridge, in one Spark
session: what pushing filters to examples/c_range saves, and what each way of making sure that
the library's rows satisfy the filters it accepted (rule 31) costs.

    python3 jvm/bench_filters.py                       # the plugin on 1e9 rows, the bridge on 2e7
    python3 jvm/bench_filters.py --rows 1e7 --bridge-rows 1e6 --json

Each runtime reads c_range's ids in four ways: without pushdown (Spark filters every row: the
plugin's option pushDownPredicate=false, the bridge's spark.sql.python.filterPushdown.enabled
off), and with pushdown and each value of the option acceptedFilters: `trust` (the library's rows
as they are), `check` (each row the library returns is checked against the accepted filters
where it is read: the JNI library for the plugin, the Python worker for the bridge) and
`reevaluate` (Spark keeps the accepted filters after the scan and evaluates them again; the
plugin then pushes no LIMIT). On pyspark 4.1 to 4.3 the bridge offers no filter to a library
(one query's filtered read plan would serve the next: the book's page on filters), so it is
measured without pushdown only. Three queries, each counting or collecting what it keeps:

- selective: WHERE id BETWEEN x AND x + 999, count and sum (1000 rows come back);
- wide: WHERE id >= rows / 10, count and sum (nine rows in ten come back: the per-row cost);
- limit: WHERE id >= rows / 2 LIMIT 10, collected (what a pushed limit saves).

Each case runs once at a small size first (to load classes, libraries and workers), then
--repeat times, the ways taking turns; the best time of each counts. Every way must give the
same answers.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRIDGE = os.path.join(ROOT, "python")
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, BRIDGE)
from template_projects import build_c_range  # noqa: E402

PYTHON_PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
# The ways of reading, as (name, pushdown, acceptedFilters).
WAYS = [
    ("no pushdown", False, None),
    ("trust", True, "trust"),
    ("check", True, "check"),
    ("reevaluate", True, "reevaluate"),
]
QUERIES = ["selective", "wide", "limit"]


def log(message):
    print(message, file=sys.stderr, flush=True)


# c_range's rows per batch (its option batch_rows), set by --batch-rows.
BATCH_ROWS = 1024


def reader(spark, runtime, rows, pushdown, accepted):
    """The DataFrame of c_range's `rows` rows through `runtime`, read the way given."""
    if runtime == "plugin":
        df = (
            spark.read.format("native")
            .option("source", "c_range")
            .option("pushDownPredicate", "true" if pushdown else "false")
        )
    else:
        # pyspark plans a Python data source's read with the session's setting of the moment.
        spark.conf.set(PYTHON_PUSHDOWN, "true" if pushdown else "false")
        df = spark.read.format("c_range")
    if accepted is not None:
        df = df.option("acceptedFilters", accepted)
    return (
        df.option("end", str(rows)).option("num_partitions", "2")
        .option("batch_rows", str(BATCH_ROWS)).load()
    )


def query(spark, runtime, rows, way, name):
    """Runs query `name`; returns (seconds, answer)."""
    from pyspark.sql import functions as F

    _, pushdown, accepted = way
    df = reader(spark, runtime, rows, pushdown, accepted)
    if name == "selective":
        start_id = rows // 2
        planned = df.where(F.col("id").between(start_id, start_id + 999)).agg(
            F.count("*"), F.sum("id")
        )
    elif name == "wide":
        planned = df.where(F.col("id") >= rows // 10).agg(F.count("*"), F.sum("id"))
    else:
        planned = df.where(F.col("id") >= rows // 2).select("id").limit(10)
    start = time.perf_counter()
    result = planned.collect()
    seconds = time.perf_counter() - start
    if name == "limit":
        ids = [row.id for row in result]
        # Any ten ids that pass: which ones depends on the partition a task finishes first.
        answer = (len(ids), all(i >= rows // 2 for i in ids))
    else:
        answer = (result[0][0], result[0][1])
    return seconds, answer


def expected(rows, name):
    if name == "selective":
        return (1000, sum(range(rows // 2, rows // 2 + 1000)))
    if name == "wide":
        low = rows // 10
        return (rows - low, (rows - 1) * rows // 2 - (low - 1) * low // 2)
    return (10, True)


def ways(runtime):
    """The ways `runtime` reads: all of them, but only `no pushdown` for a bridge that offers
    no filter to the library."""
    from spark_native_bridge._datasource import PUSHES_FILTERS

    if runtime == "bridge" and not PUSHES_FILTERS:
        return WAYS[:1]
    return WAYS


def measure(spark, runtime, rows, repeat):
    """{query: {way: seconds}}, checking every answer. The ways take turns, round after round,
    so that a busy moment of the machine falls on all of them."""
    results = {}
    for name in QUERIES:
        for way in ways(runtime):
            query(spark, runtime, 100_000, way, name)
        runs = {way[0]: [] for way in ways(runtime)}
        for _ in range(repeat):
            for way in ways(runtime):
                runs[way[0]].append(query(spark, runtime, rows, way, name))
        for way, timed in runs.items():
            answers = {answer for _, answer in timed}
            if answers != {expected(rows, name)}:
                sys.exit(f"{runtime}, {name}, {way}: wrong answers {answers}, "
                         f"expected {expected(rows, name)}")
        results[name] = {way: round(min(s for s, _ in timed), 4) for way, timed in runs.items()}
        log(f"{runtime} {name}: {results[name]}")
    return results


def table(runtime, rows, results):
    header = f"{'':12}" + "".join(f"{way[0]:>14}" for way in ways(runtime))
    lines = [f"{runtime}: {rows:,} rows of c_range, local[2], best of the runs, seconds", header]
    for name in QUERIES:
        lines.append(
            f"{name:12}" + "".join(f"{results[name][way[0]]:14.3f}" for way in ways(runtime))
        )
    if ways(runtime) != WAYS:
        import pyspark

        lines.append(f"(the bridge offers no filter to the library on pyspark {pyspark.__version__})")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e9, help="rows read by the plugin")
    parser.add_argument("--bridge-rows", type=float, default=2e7, help="rows read by the bridge")
    parser.add_argument("--repeat", type=int, default=3, help="timed queries per case (best)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    parser.add_argument("--jar", help="the plugin's jar (default: built with jvm/build.sh)")
    parser.add_argument("--batch-rows", type=int, default=1024,
                        help="c_range's rows per batch (default 1024, its own)")
    parser.add_argument("--runtimes", default="plugin,bridge",
                        help="the runtimes measured, of plugin and bridge (default both)")
    args = parser.parse_args()
    global BATCH_ROWS
    BATCH_ROWS = args.batch_rows
    sizes = {"plugin": int(args.rows), "bridge": int(args.bridge_rows)}
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    if not runtimes or any(r not in sizes for r in runtimes):
        parser.error("--runtimes is a comma-separated list of plugin and bridge")
    sizes = {runtime: sizes[runtime] for runtime in runtimes}
    if min(sizes.values()) < 200_000:
        parser.error("--rows and --bridge-rows must be at least 200000: the warm-up reads 100000")

    jar = args.jar or subprocess.run(
        ["bash", os.path.join(ROOT, "jvm", "build.sh")],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout.strip()
    log("building examples/c_range")
    c_range = build_c_range()

    # The bridge's Python workers import it from the checkout.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [BRIDGE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from spark_native_bridge import register

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkds-filter-bench")
        .config("spark.jars", jar)
        .config("spark.driver.extraLibraryPath", os.path.dirname(c_range))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, c_range)
    results = {}
    try:
        for runtime, rows in sizes.items():
            results[runtime] = measure(spark, runtime, rows, args.repeat)
    finally:
        spark.stop()

    if args.json:
        print(json.dumps({"rows": sizes, "batch_rows": BATCH_ROWS, "seconds": results}))
        return
    for runtime, rows in sizes.items():
        print(table(runtime, rows, results[runtime]))
        print()
    print(f"c_range's batches: {BATCH_ROWS} rows")


if __name__ == "__main__":
    main()
