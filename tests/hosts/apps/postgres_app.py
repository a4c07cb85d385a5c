"""An application that tests/hosts submits from the client host: examples/postgres, from its
package, reads a table of the server on the postgres host and writes c_range's rows into
another, over TLS with `sslmode=verify-full` (the CA at /srv/tls/ca.pem on every host), the
password read from a file that only the driver's user reads. `python3 postgres_app.py CONFIG`:
CONFIG is a JSON file of `parts` (what to run: `read`, `write`, `by_ip`), `url`, `user`,
`password_file`, `table`, `target`, `rows`, `partitions` (of the write), and `by_ip` (the same URL
with the server's address, which its certificate does not name). Prints what it saw as
`RESULT <json>` lines."""

import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def report(**values):
    print("RESULT " + json.dumps(values), flush=True)


def host():
    return F.expr("reflect('java.net.InetAddress', 'getLocalHost')").alias("host")


def connection(config, url=None):
    """The connection's options: the URL names the server as its certificate does, with
    `sslmode=verify-full` and the CA's path on every host; the password comes from a file only
    the driver's user reads (a secret of the cluster's store, mounted as a file), never from a
    command line."""
    # ANCHOR: connection
    with open(config["password_file"]) as f:
        password = f.read().strip()
    # postgresql://postgres:5432/sparkds?sslmode=verify-full&sslrootcert=/srv/tls/ca.pem
    return {"url": url or config["url"], "user": config["user"], "password": password}
    # ANCHOR_END: connection


def postgres(spark, config, url=None, **options):
    reader = spark.read.format("native").option("source", "postgres")
    return reader.options(**connection(config, url), **options)


def read(spark, config):
    df = postgres(spark, config, dbtable=config["table"], partitionColumn="id", lowerBound="0",
                  upperBound="1000", numPartitions="4").load()
    row = df.agg(F.count("*").alias("n"), F.sum("id").alias("total")).first()
    # With a column of the table: a read of no column is one partition (the server counts).
    hosts = sorted({r.host for r in df.select(host(), "id").collect()})
    small = df.where("id < 5")
    rows = sorted((r.id, r.note) for r in small.collect())
    report(read={"count": row.n, "sum": row.total, "hosts": hosts, "rows": rows,
                 "plan": small._jdf.queryExecution().executedPlan().toString()})


def write(spark, config):
    """c_range's rows, from its package, into `target`, through the write commit protocol: each
    task stages its rows, the commit publishes them in one transaction."""
    rows = (
        spark.read.format("native").option("source", "c_range").option("end", config["rows"])
        .option("num_partitions", config["partitions"]).load()
    )
    # ANCHOR: write
    (
        rows.write.format("native").option("source", "postgres")
        .options(**connection(config), dbtable=config["target"])
        .mode("append").save()
    )
    # ANCHOR_END: write
    back = postgres(spark, config, dbtable=config["target"]).load()
    row = back.agg(F.count("*").alias("n"), F.sum("id").alias("total")).first()
    report(write={"count": row.n, "sum": row.total})


def by_ip(spark, config):
    """The server named by its address: its certificate names `postgres` only."""
    try:
        postgres(spark, config, url=config["by_ip"], dbtable=config["table"]).load().count()
        report(by_ip={"error": None})
    except Exception as error:  # noqa: BLE001 - the test reads the message
        report(by_ip={"error": str(error).split("\n\tat ")[0][:3000]})


def main(config_path):
    with open(config_path) as f:
        config = json.load(f)
    spark = SparkSession.builder.getOrCreate()
    for part in config["parts"]:
        {"read": read, "write": write, "by_ip": by_ip}[part](spark, config)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
