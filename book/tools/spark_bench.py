#!/usr/bin/env python3
"""Spark end to end: a native library through the Python bridge against Python data sources that
make the same rows, and spark.range, in one Spark session.

    python3 book/tools/spark_bench.py --lib target/release/libspark_datasource_x.so
    python3 book/tools/spark_bench.py --lib ... --rows 2e7 --repeat 3 --json
    python3 book/tools/spark_bench.py --lib ... --worker   # the Python worker's side alone

The library is the template's sample (or any source with its columns `id bigint, label string`,
`label` being `row <id>` or null in every third row, and the options `end` and `batch_rows`).
Each case writes its DataFrame to the `noop` format, which reads every row and column and keeps
nothing, so the time is the scan's. Every case runs once on a few rows first (to start its Python
workers and load the library), then --repeat times; the best time counts.

--worker measures, without Spark, what a Python worker does for each partition: the bridge's read
(load, `read`, the import of each batch and its conforming to Spark's schema) against the
pyarrow source's, and says where the bridge's time goes.
"""

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BATCH_ROWS = 65536
PARTITIONS = 2


def log(message):
    print(message, file=sys.stderr, flush=True)


def sample_batches(start, end, label=True):
    """The sample's rows `[start, end)` made with pyarrow, as the pyarrow source makes them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for first in range(start, end, BATCH_ROWS):
        ids = pa.array(range(first, min(first + BATCH_ROWS, end)), pa.int64())
        if not label:
            yield pa.RecordBatch.from_arrays([ids], ["id"])
            continue
        labels = pc.binary_join_element_wise("row ", pc.cast(ids, pa.string()), "")
        labels = pc.if_else(pc.equal(pc.remainder(ids, 3), 2), None, labels)
        yield pa.RecordBatch.from_arrays([ids, labels], ["id", "label"])


def python_sources():
    """Two Python data sources of the sample's rows: one yields pyarrow batches (the fastest a
    Python source gets), the other tuples. Neither can prune: `columns` says what to make."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Rows(InputPartition):
        def __init__(self, start, end):
            super().__init__((start, end))
            self.start, self.end = start, end

    class Reader(DataSourceReader):
        def __init__(self, options, tuples):
            self.end = int(options["end"])
            self.label = options.get("columns", "id,label") == "id,label"
            self.tuples = tuples

        def partitions(self):
            bounds = [self.end * i // PARTITIONS for i in range(PARTITIONS + 1)]
            return [Rows(a, b) for a, b in zip(bounds, bounds[1:])]

        def read(self, partition):
            if not self.tuples:
                yield from sample_batches(partition.start, partition.end, self.label)
            elif self.label:
                for i in range(partition.start, partition.end):
                    yield (i, None if i % 3 == 2 else f"row {i}")
            else:
                for i in range(partition.start, partition.end):
                    yield (i,)

    def source(name, tuples):
        class Source(DataSource):
            @classmethod
            def name(cls):
                return name

            def schema(self):
                if self.options.get("columns", "id,label") == "id,label":
                    return "id long, label string"
                return "id long"

            def reader(self, schema):
                return Reader(self.options, tuples)

        return Source

    return source("pyarrow_rows", False), source("tuple_rows", True)


def cases(spark, library):
    from spark_native_bridge import register

    bridge = register(spark, library).name()
    for source in python_sources():
        spark.dataSource.register(source)

    def through_bridge(columns):
        def make(n):
            df = spark.read.format(bridge).option("end", n).option("batch_rows", BATCH_ROWS)
            return df.load().select(*columns)

        return make

    def python(name, columns):
        def make(n):
            df = spark.read.format(name).option("end", n)
            return df.option("columns", ",".join(columns)).load()

        return make

    def spark_range(columns):
        def make(n):
            df = spark.range(0, n, 1, PARTITIONS)
            if "label" in columns:
                label = "CASE WHEN id % 3 = 2 THEN NULL ELSE concat('row ', id) END AS label"
                return df.selectExpr("id", label)
            return df

        return make

    for columns in (["id", "label"], ["id"]):
        yield "bridge", columns, through_bridge(columns)
        yield "pyarrow source", columns, python("pyarrow_rows", columns)
        yield "tuple source", columns, python("tuple_rows", columns)
        yield "spark.range", columns, spark_range(columns)


def scan(df):
    start = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start


def spark_main(args):
    bridge = os.path.join(ROOT, "python")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [bridge] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    sys.path.insert(0, bridge)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    rows = int(args.rows)
    spark = (
        SparkSession.builder.master(f"local[{PARTITIONS}]")
        .appName("sparkds-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    results = []
    for name, columns, make in cases(spark, os.path.abspath(args.lib)):
        if args.only and args.only not in name:
            continue
        # The tuple source is slow: a tenth of the rows, its time scaled.
        n = rows // 10 if name == "tuple source" else rows
        scan(make(10_000))
        seconds = min(scan(make(n)) for _ in range(args.repeat)) * rows / n
        results.append(
            {
                "case": name,
                "columns": ",".join(columns),
                "rows": rows,
                "measured_rows": n,
                "seconds": round(seconds, 3),
                "rows_per_second": round(rows / seconds),
            }
        )
        log(f"{name:15} {','.join(columns):9} {seconds:8.2f} s")
    spark.stop()
    for result in results:
        base = [
            r["seconds"]
            for r in results
            if r["case"] == "pyarrow source" and r["columns"] == result["columns"]
        ]
        result["x_pyarrow_source"] = round(base[0] / result["seconds"], 2) if base else None
    if args.json:
        for result in results:
            print(json.dumps(result))
        return
    print(f"{rows:,} rows, local[{PARTITIONS}], one session; a full scan (write to noop)")
    print(f"{'case':15} {'columns':9} {'seconds':>8} {'rows/s':>12} {'x pyarrow source':>17}")
    for r in results:
        ratio = "" if r["x_pyarrow_source"] is None else f"{r['x_pyarrow_source']:.2f}"
        print(
            f"{r['case']:15} {r['columns']:9} {r['seconds']:8.2f} {r['rows_per_second']:12,} "
            f"{ratio:>17}"
        )


def worker_main(args):
    """What a Python worker does for a partition, timed without Spark."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from spark_native_bridge import _datasource

    rows = int(args.rows)
    path = os.path.abspath(args.lib)
    name = os.path.basename(path).split("spark_datasource_", 1)[1].split(".")[0]
    schema = StructType(
        [StructField("id", LongType(), False), StructField("label", StringType(), True)]
    )
    import hashlib

    with open(path, "rb") as f:
        sha256 = hashlib.sha256(f.read()).hexdigest()
    library = _datasource._Library(path, sha256, name)
    native = library.load()
    from contextlib import ExitStack

    options = {"end": str(rows), "batch_rows": str(BATCH_ROWS), "num_partitions": "1"}
    with ExitStack() as handles:
        source, _ = handles.enter_context(native.source(options))
        arrow_schema = _datasource._to_arrow_schema(schema)
        exported = handles.enter_context(native.exported_schema(arrow_schema))
        import ctypes

        reader = handles.enter_context(
            native.handle("create_reader", "close_reader", source, ctypes.byref(exported))
        )
        parts = native.collect("partitions", reader)
        state = native.collect_one("serialize_reader", reader)
    partition = _datasource.NativePartition(0, state, parts[0])

    def timed(label, make):
        best = None
        for _ in range(args.repeat):
            start = time.perf_counter()
            count = sum(batch.num_rows for batch in make())
            seconds = time.perf_counter() - start
            best = seconds if best is None else min(best, seconds)
        assert count == rows, (label, count)
        print(f"{label:40} {best:7.3f} s  {rows / best / 1e6:8.1f} M rows/s")
        return best

    print(f"{rows:,} rows of id,label in batches of {BATCH_ROWS}, one partition, no Spark")
    bridge = timed("bridge: _read (what the worker runs)", lambda: _datasource._read(
        library, options, schema, partition))
    stream = timed("bridge: the stream alone", lambda: stream_batches(native, partition))
    pyarrow = timed("pyarrow source: read", lambda: sample_batches(0, rows))
    print(f"bridge over pyarrow source: {pyarrow / bridge:.2f}x the rate")
    # What the bridge's Python adds to the stream: the generator and the conforming of each
    # batch to Spark's schema (a comparison of schemas when nothing differs).
    per_batch = (bridge - stream) / (rows / BATCH_ROWS) * 1e6
    if per_batch > 0:
        print(f"the bridge's Python around the stream: {per_batch:.1f} us a batch")
    else:
        print("the bridge's Python around the stream: within the noise of the measure")


def stream_batches(native, partition):
    from spark_native_bridge._native import TaskContext

    task = TaskContext()
    reader = native.read(task, partition.state, partition.data)
    try:
        while True:
            try:
                yield reader.read_next_batch()
            except StopIteration:
                return
    finally:
        reader.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="the library: the template's sample")
    parser.add_argument("--rows", type=float, default=2e7, help="rows per scan (2e7)")
    parser.add_argument("--repeat", type=int, default=2, help="timed scans per case (best of)")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    parser.add_argument("--only", help="run the cases whose name contains this text")
    parser.add_argument("--worker", action="store_true", help="the worker's side, no Spark")
    args = parser.parse_args()
    if args.worker:
        worker_main(args)
    else:
        spark_main(args)


if __name__ == "__main__":
    main()
