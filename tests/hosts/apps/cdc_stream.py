"""A change data capture query of examples/postgres on the cluster, which tests/hosts submits from
the client host and cuts a Worker off under. `python3 cdc_stream.py CONFIG`: CONFIG is a JSON
file of `url`, `user`, `password_file`, `options` (of the stream: slot, tables, ...), `table`,
`out`, `checkpoint`, `status` and `stop` (a file whose existence stops the query).

No host shares a disk with another: each micro-batch's changes come to the driver
(`toArrow`), which keeps them on its own host as `<out>/log/batch=<id>/part-0.parquet`,
replaced when Spark runs the micro-batch again (the sink is exactly once). While the query runs
it keeps the executors it knows of, live and lost, in `status`; once the query runs it writes
`<out>/started`."""

import json
import os
import shutil
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def applier(table, out):
    import pyarrow.parquet as pq

    def apply(batch, batch_id):
        changes = batch.where(F.col("_table") == f"public.{table}").select(
            "_op", "_lsn", "_seq",
            F.coalesce(F.col(f"{table}.id"), F.col(f"{table}_before.id")).alias("id"),
            F.coalesce(F.col(f"{table}.version"), F.col(f"{table}_before.version")).alias("version"),
            F.col(table).alias("after"),
        ).toArrow()
        if changes.num_rows == 0:
            return
        final = os.path.join(out, "log", f"batch={batch_id}")
        partial = final + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        pq.write_table(changes, os.path.join(partial, "part-0.parquet"))
        shutil.rmtree(final, ignore_errors=True)
        os.rename(partial, final)

    return apply


def executors(spark):
    """Each executor the driver knew of: its host, whether it lives, its tasks, why it went."""
    store = spark.sparkContext._jsc.sc().statusStore()
    listed = store.executorList(False)
    seen = []
    for i in range(listed.size()):
        summary = listed.apply(i)
        if summary.id() == "driver":
            continue
        reason = summary.removeReason()
        seen.append({"id": summary.id(), "host": summary.hostPort().split(":")[0],
                     "active": summary.isActive(), "tasks": summary.totalTasks(),
                     "removed": reason.get() if reason.isDefined() else None})
    return seen


def write_status(spark, path):
    partial = path + ".partial"
    with open(partial, "w") as f:
        json.dump(executors(spark), f)
    os.replace(partial, path)


def main(config_path):
    with open(config_path) as f:
        config = json.load(f)
    with open(config["password_file"]) as f:
        password = f.read().strip()
    spark = SparkSession.builder.getOrCreate()
    query = (
        spark.readStream.format("native").option("source", "postgres")
        .options(url=config["url"], user=config["user"], password=password, **config["options"])
        .load()
        .writeStream.foreachBatch(applier(config["table"], config["out"]))
        .option("checkpointLocation", config["checkpoint"])
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    os.makedirs(config["out"], exist_ok=True)
    open(os.path.join(config["out"], "started"), "w").close()
    while query.isActive and not os.path.exists(config["stop"]):
        write_status(spark, config["status"])
        time.sleep(0.3)
    failed = query.exception()
    query.stop()
    spark.stop()
    if failed is not None:
        print(f"the query failed: {failed}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
