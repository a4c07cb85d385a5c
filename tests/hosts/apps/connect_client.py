"""A Spark Connect client on the client host, of the server that `deploy/connect.sh` started
there: two sessions, each adding its own build of the package `hostsrange` (1.0.0 and 2.0.0),
read `hostsrange` on the cluster, first one after the other, then at the same time.
`python3 connect_client.py CONFIG`: CONFIG is a JSON file of `address` (no token: the client
reads it from SPARK_CONNECT_AUTHENTICATE_TOKEN), `packages` (one per session), `rows`, and
`release`, a file the test makes once it has looked at the executors' copies of the sessions'
files, which go when the sessions end. Prints what each session read, and what the first reads
of the cluster's secret, as a `RESULT <json>` line."""

import json
import os
import sys
import threading
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from task_hosts import task_hosts


def read(session, rows):
    df = (
        session.read.format("native").option("source", "hostsrange").option("end", rows)
        .option("num_partitions", 8).load()
    )
    row = df.agg(F.count("*").alias("n"), F.sum("id").alias("total")).first()
    hosts, reads = task_hosts(df)
    return {
        "count": row.n,
        "sum": row.total,
        "hosts": hosts,
        "reads": reads,
        "plan": df._explain_string(mode="simple"),
    }


def what_a_session_reads_of_the_secret(session):
    """Where a client might read the cluster's secret: the session's configuration, `SET`, and
    the environment of the executors, where a Python UDF runs. Of what the UDF read, only its
    SHA-256 goes in the output."""

    def executor_secret(_):
        import hashlib
        import os

        return hashlib.sha256(os.environ.get("_SPARK_AUTH_SECRET", "").encode()).hexdigest()

    read = F.udf(executor_secret, "string")
    return {
        "conf": session.conf.get("spark.authenticate.secret", None),
        "set": [r.value for r in session.sql("SET spark.authenticate.secret").collect()],
        "udf_sha256": sorted({r.h for r in session.range(0, 4, 1, 4).select(read("id").alias("h")).collect()}),
    }


def main(config_path):
    with open(config_path) as f:
        config = json.load(f)
    # ANCHOR: sessions
    sessions = [SparkSession.builder.remote(config["address"]).create() for _ in config["packages"]]
    for session, package in zip(sessions, config["packages"]):
        session.addArtifacts(package, file=True)
    # ANCHOR_END: sessions
    seen = {"alone": [], "together": [None] * len(sessions)}
    try:
        # Spark 4.3 looks the format up with ServiceLoader, which several sessions' first
        # lookups at once can fail (tests/connect/test_sessions.py): the first reads run alone.
        for session in sessions:
            seen["alone"].append(read(session, config["rows"]))

        def together(i):
            try:
                seen["together"][i] = read(sessions[i], config["rows"])
            except Exception as error:  # noqa: BLE001 - reported
                seen["together"][i] = {"error": str(error).split("JVM stacktrace")[0][:3000]}

        threads = [threading.Thread(target=together, args=(i,)) for i in range(len(sessions))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        secret = what_a_session_reads_of_the_secret(sessions[0])
        print("RESULT " + json.dumps({"sessions": seen, "secret": secret}), flush=True)
        deadline = time.monotonic() + 120
        while not os.path.exists(config["release"]) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        for session in sessions:
            session.stop()


if __name__ == "__main__":
    main(sys.argv[1])
