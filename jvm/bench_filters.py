#!/usr/bin/env python3
"""Filter pushdown through the JVM plugin: `WHERE id BETWEEN x AND x + 999` over N rows of
examples/c_range, with the filter pushed to the library and without (the plugin's option
`pushDownPredicate=false`, as for Spark's JDBC source), in one Spark session.

    python3 jvm/bench_filters.py                 # 1e9 rows, a table
    python3 jvm/bench_filters.py --rows 1e7 --json

c_range accepts comparisons on `id` (spark_datasource_filters.h): with pushdown it plans and
reads only the 1000 ids that can match; without, it reads every row and Spark drops all but
1000. Each case runs once at a small size first (to load classes and the library), then
--repeat times; the best time counts. The query counts and sums the matching ids, and both
cases must agree.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from template_projects import build_c_range  # noqa: E402


def log(message):
    print(message, file=sys.stderr, flush=True)


def query(spark, rows, pushdown):
    """Counts and sums the 1000 ids from the middle of [0, rows); returns (seconds, result)."""
    from pyspark.sql import functions as F

    start_id = rows // 2
    df = (
        spark.read.format("native")
        .option("source", "c_range")
        .option("end", str(rows))
        .option("pushDownPredicate", "true" if pushdown else "false")
        .load()
        .where(F.col("id").between(start_id, start_id + 999))
    )
    start = time.perf_counter()
    result = df.agg(F.count("*"), F.sum("id")).collect()[0]
    return time.perf_counter() - start, (result[0], result[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e9, help="rows of c_range (default 1e9)")
    parser.add_argument("--repeat", type=int, default=3, help="timed queries per case (best)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    parser.add_argument("--jar", help="the plugin's jar (default: built with jvm/build.sh)")
    args = parser.parse_args()
    rows = int(args.rows)
    if rows < 2000:
        parser.error("--rows must be at least 2000: the query selects 1000 ids from the middle")

    jar = args.jar or subprocess.run(
        ["bash", os.path.join(ROOT, "jvm", "build.sh")],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout.strip()
    log("building examples/c_range")
    c_range = build_c_range()

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkds-filter-bench")
        .config("spark.jars", jar)
        .config("spark.driver.extraLibraryPath", os.path.dirname(c_range))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    results = {}
    try:
        for pushdown in (True, False):
            query(spark, 100_000, pushdown)
            runs = [query(spark, rows, pushdown) for _ in range(args.repeat)]
            seconds = min(s for s, _ in runs)
            answers = {answer for _, answer in runs}
            results[pushdown] = (seconds, answers)
            log(f"pushdown {'on' if pushdown else 'off'}: {seconds:.3f} s")
    finally:
        spark.stop()

    (on, on_answers), (off, off_answers) = results[True], results[False]
    expected = (1000, sum(range(rows // 2, rows // 2 + 1000)))
    if on_answers != {expected} or off_answers != {expected}:
        sys.exit(f"wrong answers: {on_answers} with pushdown, {off_answers} without; {expected}")
    report = {
        "rows": rows,
        "seconds_with_pushdown": round(on, 4),
        "seconds_without_pushdown": round(off, 4),
        "ratio": round(off / on, 1),
    }
    if args.json:
        print(json.dumps(report))
        return
    print(f"{rows:,} rows of c_range, local[2]: WHERE id BETWEEN x AND x + 999, count and sum")
    print(f"{'with pushdown':24} {on:10.3f} s")
    print(f"{'without (pushDownPredicate=false)':24} {off:10.3f} s")
    print(f"{'ratio':24} {off / on:10.1f} x")


if __name__ == "__main__":
    main()
