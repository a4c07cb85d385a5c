"""An application that tests/hosts submits from the client host (`deploy/submit.sh`): reads of
examples/c_range and of a library that breaks rule 31, from the packages that `--files` gave
the session. `python3 read_c_range.py CONFIG`: CONFIG is a JSON file of `parts` (what to run:
`read`, `filters`, `rule31`, `timed`), `end`, `timed_rows` and `repeats`. It prints what it saw
as `RESULT <json>` lines, which the test reads from its log."""

import json
import statistics
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from task_hosts import task_hosts


def native(spark, source, **options):
    reader = spark.read.format("native").option("source", source)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def report(**values):
    print("RESULT " + json.dumps(values), flush=True)


def plan(df):
    return df._jdf.queryExecution().executedPlan().toString()


def read(spark, end):
    df = native(spark, "c_range", end=end, num_partitions=8)
    row = df.agg(F.count("*").alias("n"), F.sum("id").alias("total")).first()
    hosts, reads = task_hosts(df)
    report(read={"count": row.n, "sum": row.total, "hosts": hosts, "reads": reads, "plan": plan(df)})


def filters(spark):
    df = native(spark, "c_range", end=100, num_partitions=4).where("id > 90")
    rows = sorted((r.id, r.label) for r in df.collect())
    report(filters={"rows": rows, "plan": plan(df)})


def rule31(spark):
    """The fixture accepts `id >= 15` and returns every row: each executor checks the rows it
    reads against the filters the library accepted (acceptedFilters=check, the default)."""
    df = native(spark, "ignored_filters", end=20, partitions=1).where("id >= 15")
    try:
        rows = sorted(r.id for r in df.collect())
        report(rule31={"rows": rows})
    except Exception as error:  # noqa: BLE001 - the test reads the message
        report(rule31={"error": str(error).split("\n\tat ")[0][:4000]})


def timed(spark, rows, repeats):
    """The same read `repeats` times, every row's two columns brought to the driver: what the
    executors send crosses the network, through RPC encryption when it is on."""
    df = native(spark, "c_range", end=rows, num_partitions=8)
    df.toArrow()  # warm: the library loaded, the JVMs' code compiled
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        table = df.toArrow()
        times.append(time.perf_counter() - started)
    assert table.num_rows == rows, table.num_rows
    report(timed={"seconds": times, "median": statistics.median(times), "least": min(times),
                  "bytes": table.nbytes,
                  "crypto": spark.conf.get("spark.network.crypto.enabled")})


def main(config_path):
    with open(config_path) as f:
        config = json.load(f)
    spark = SparkSession.builder.getOrCreate()
    parts = config["parts"]
    if "read" in parts:
        read(spark, config["end"])
    if "filters" in parts:
        filters(spark)
    if "rule31" in parts:
        rule31(spark)
    if "timed" in parts:
        timed(spark, config["timed_rows"], config["repeats"])
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
