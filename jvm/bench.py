#!/usr/bin/env python3
"""Full scans in one Spark session: the JVM plugin against the Python bridge, a pyarrow Python
data source and spark.range, on the same columns.

    python3 jvm/bench.py                    # 2e8 rows, a table
    python3 jvm/bench.py --rows 2e7 --json  # fewer rows, JSON lines
    python3 jvm/bench.py --action aggregate # sums instead of the noop write

By default each case writes its DataFrame to the `noop` format, which turns every value into
Spark's rows and keeps nothing: the time is the scan's plus Spark's row pipeline, which costs
about what spark.range costs. With --action aggregate each case sums its columns (`sum(id)`,
`sum(length(label))`) instead: every value is still read, in the code that Spark generates for
the whole stage, so the time is mostly the source's. Every case runs once at a small size first
(to load its classes and libraries), then --repeat times at --rows; the best time counts. The
libraries are built here: examples/c_range with its Makefile, and the template's sample (generated with
cargo-generate, default capabilities) in release; the plugin's jar with jvm/build.sh.
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from template_projects import build_c_range, generate_and_build  # noqa: E402

SAMPLE = "jvm_bench_sample"
# The same Arrow batch size everywhere: the sample's default.
BATCH_ROWS = 65536


def log(message):
    print(message, file=sys.stderr, flush=True)


def build(args):
    if args.jar:
        jar = args.jar
    else:
        log("building the jar: jvm/build.sh")
        jar = subprocess.run(
            ["bash", os.path.join(ROOT, "jvm", "build.sh")],
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        ).stdout.strip()
    log("building examples/c_range")
    c_range = build_c_range()
    log("generating and building the template's sample (release)")
    return jar, c_range, generate_and_build(SAMPLE, [], release=True)


def pyarrow_source():
    """A Python data source that makes the same batches as c_range with pyarrow: the fastest a
    Python source gets. It cannot prune, so its `columns` option says what to make."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Range(InputPartition):
        def __init__(self, start, end):
            self.start, self.end = start, end

    class Reader(DataSourceReader):
        def __init__(self, options):
            self.end = int(options["end"])
            self.label = options.get("columns", "id,label") == "id,label"

        def partitions(self):
            half = self.end // 2
            return [Range(0, half), Range(half, self.end)]

        def read(self, partition):
            for start in range(partition.start, partition.end, BATCH_ROWS):
                ids = pa.array(range(start, min(start + BATCH_ROWS, partition.end)), pa.int64())
                if not self.label:
                    yield pa.RecordBatch.from_arrays([ids], ["id"])
                    continue
                labels = pc.binary_join_element_wise("label ", pc.cast(ids, pa.string()), "")
                nulls = pc.equal(pc.remainder(ids, 3), 2)
                labels = pc.if_else(nulls, pa.scalar(None, pa.string()), labels)
                yield pa.RecordBatch.from_arrays([ids, labels], ["id", "label"])

    class PyArrowRange(DataSource):
        @classmethod
        def name(cls):
            return "pyarrow_range"

        def schema(self):
            if self.options.get("columns", "id,label") == "id,label":
                return "id long, label string"
            return "id long"

        def reader(self, schema):
            return Reader(self.options)

    return PyArrowRange


def cases(spark, c_range, sample, rows):
    from spark_native_bridge import register

    bridge = register(spark, c_range).name()
    spark.dataSource.register(pyarrow_source())

    def plugin(source, columns):
        def make(n):
            df = (
                spark.read.format("native")
                .option("source", source)
                .option("end", n)
                .option("batch_rows", BATCH_ROWS)
                .load()
            )
            return df.select(*columns)

        return make

    def through_bridge(columns):
        def make(n):
            df = spark.read.format(bridge).option("end", n).option("batch_rows", BATCH_ROWS)
            return df.load().select(*columns)

        return make

    def python(columns):
        def make(n):
            df = spark.read.format("pyarrow_range").option("end", n)
            return df.option("columns", ",".join(columns)).load()

        return make

    def spark_range(columns):
        def make(n):
            df = spark.range(0, n, 1, 2)
            if "label" in columns:
                return df.selectExpr("id", "concat('label ', id) AS label")
            return df

        return make

    # The plugin reads with its own column vectors; `arrow` is Spark's ArrowColumnVector, for
    # comparison (spark.sparkds.columnVectors).
    arrow = {"spark.sparkds.columnVectors": "arrow"}
    for columns in (["id"], ["id", "label"]):
        yield "spark.range", columns, spark_range(columns), {}
        yield "plugin c_range", columns, plugin("c_range", columns), {}
        yield "plugin c_range/arrow", columns, plugin("c_range", columns), arrow
        yield "plugin sample", columns, plugin(SAMPLE, columns), {}
        yield "bridge c_range", columns, through_bridge(columns), {}
        yield "pyarrow source", columns, python(columns), {}


def scan(spark, df, conf, action):
    from pyspark.sql import functions as F

    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        start = time.perf_counter()
        if action == "noop":
            df.write.format("noop").mode("overwrite").save()
        else:
            sums = [F.sum("id")]
            if "label" in df.columns:
                sums.append(F.sum(F.length("label")))
            df.agg(*sums).collect()
        return time.perf_counter() - start
    finally:
        for key in conf:
            spark.conf.unset(key)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=2e8, help="rows per scan (default 2e8)")
    parser.add_argument("--repeat", type=int, default=1, help="timed scans per case (best)")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    parser.add_argument("--jar", help="the plugin's jar (default: built with jvm/build.sh)")
    parser.add_argument("--only", help="run the cases whose name contains this text")
    parser.add_argument(
        "--action",
        choices=["noop", "aggregate"],
        default="noop",
        help="what each scan does with the rows: write them to noop (default), or sum them",
    )
    args = parser.parse_args()
    rows = int(args.rows)

    jar, c_range, sample = build(args)
    bridge = os.path.join(ROOT, "python")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [bridge] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    sys.path.insert(0, bridge)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import SparkSession

    library_path = os.pathsep.join([os.path.dirname(c_range), os.path.dirname(sample)])
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkds-jvm-bench")
        .config("spark.jars", jar)
        .config("spark.driver.extraLibraryPath", library_path)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    results = []
    for name, columns, make, conf in cases(spark, c_range, sample, rows):
        if args.only and args.only not in name:
            continue
        scan(spark, make(100_000), conf, args.action)
        seconds = min(scan(spark, make(rows), conf, args.action) for _ in range(args.repeat))
        result = {
            "case": name,
            "action": args.action,
            "columns": ",".join(columns),
            "rows": rows,
            "seconds": round(seconds, 3),
            "ns_per_row": round(seconds * 1e9 / rows, 2),
        }
        results.append(result)
        log(f"{name:20} {result['columns']:9} {seconds:8.2f} s")
    spark.stop()

    # Ratios within this run: to spark.range (time over its time) and to the bridge (how many
    # times faster than the bridge on the same columns).
    baseline = {r["columns"]: r["seconds"] for r in results if r["case"] == "spark.range"}
    bridge = {r["columns"]: r["seconds"] for r in results if r["case"] == "bridge c_range"}
    for result in results:
        base = baseline.get(result["columns"])
        result["vs_spark_range"] = round(result["seconds"] / base, 2) if base else None
        slow = bridge.get(result["columns"])
        result["faster_than_bridge"] = round(slow / result["seconds"], 2) if slow else None
    if args.json:
        for result in results:
            print(json.dumps(result))
        return
    what = "write to noop" if args.action == "noop" else "sum of each column"
    print(f"{rows:,} rows, local[2], one session; time of a full scan ({what})")
    print(
        f"{'case':20} {'columns':9} {'seconds':>8} {'ns/row':>8} {'x spark.range':>14} "
        f"{'faster than bridge':>19}"
    )

    def ratio(value):
        return "" if value is None else f"{value:.2f}"

    for r in results:
        print(
            f"{r['case']:20} {r['columns']:9} {r['seconds']:8.2f} {r['ns_per_row']:8.2f} "
            f"{ratio(r['vs_spark_range']):>14} {ratio(r['faster_than_bridge']):>19}"
        )


if __name__ == "__main__":
    main()
