"""A change data capture query in a process of its own, which a test kills and starts again:
`python3 cdc_query.py CONFIG` where CONFIG is a JSON file of `master`, `jar`, `library`,
`options` (of the stream), `table`, `out` (the target), `checkpoint`, `trigger` (seconds), `hold`
(the fault switch of `cdc_support.applier`) and `stop` (a file whose existence stops the query
cleanly). It writes `<out>/started` once the query runs."""

import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The suite's one Spark session helper (tests/support/spark_session.py).
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "tests", "support"))

import spark_session  # noqa: E402

from cdc_support import applier  # noqa: E402


def main(path):
    with open(path) as f:
        config = json.load(f)
    # Scratch beside the config (the test's own directory): the test kills this process, so
    # nothing here can clean up after it, and a system temporary directory would keep a copy of
    # the library for every run.
    scratch = os.path.dirname(os.path.abspath(path))
    libraries = tempfile.mkdtemp(prefix="libraries_", dir=scratch)
    shutil.copy(config["library"], libraries)
    spark = spark_session.builder(
        "sparkds-cdc-query",
        tempfile.mkdtemp(prefix="warehouse_", dir=scratch),
        master=config["master"],
        jars=[config["jar"]],
        library_path=libraries,
        conf={"spark.executor.memory": "1g", "spark.sql.session.timeZone": "UTC"},
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # ANCHOR: query
    query = (
        spark.readStream.format("native")
        .option("source", "postgres")
        .options(**config["options"])  # url, user, password, slot, tables, maxChangesPerTrigger
        .load()
        .writeStream.foreachBatch(applier(config["table"], config["out"], hold=config.get("hold")))
        .option("checkpointLocation", config["checkpoint"])
        .trigger(processingTime=f"{config['trigger']} seconds")
        .start()
    )
    # ANCHOR_END: query
    os.makedirs(config["out"], exist_ok=True)
    open(os.path.join(config["out"], "started"), "w").close()
    while query.isActive and not os.path.exists(config["stop"]):
        time.sleep(0.2)
    if query.exception() is not None:
        print(f"the query failed: {query.exception()}", file=sys.stderr)
        sys.exit(1)
    query.stop()
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
