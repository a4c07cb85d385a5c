"""The hosts that ran a read's tasks, for the apps of this folder (the cluster copies it beside
them)."""

import time

from pyspark.sql import functions as F


def task_hosts(df, want: int = 2, reads: int = 3):
    """The hosts whose executors read `df`'s partitions (`reflect(getLocalHost)`, evaluated in
    the task that reads each one: `worker-1/10.x.y.z`), and how many reads that took. The read is
    repeated, up to `reads` times, while its tasks ran on fewer than `want` hosts: on a loaded
    machine an executor that registers late, or answers a heartbeat late, is offered none of a
    short read's tasks. What the test asks is that each Worker reads the package; a repeated read
    shows that as well, and a Worker that cannot read it still fails every time."""
    executors = executor_hosts(df.sparkSession, want)
    host = F.expr("reflect('java.net.InetAddress', 'getLocalHost')").alias("host")
    for attempt in range(1, reads + 1):
        hosts = sorted(r.host for r in df.select(host).distinct().collect())
        if len(hosts) >= want:
            break
        time.sleep(2)  # what held the other executor back (a pause, a late start) may pass
    if len(hosts) < want:
        # What the Master had given the application: both executors on one Worker is the
        # cluster's placement, not the read's.
        hosts = hosts + [f"(executors on {', '.join(executors) or 'no host'})"]
    return hosts, attempt


def executor_hosts(spark, want: int, timeout: float = 60):
    """The hosts of the application's executors, once they are on `want` hosts (or after
    `timeout` seconds); empty for a Spark Connect client, which cannot list them."""
    try:
        tracker = spark.sparkContext._jsc.sc().statusTracker()
        driver = spark.sparkContext.getConf().get("spark.driver.host")
    except Exception:  # noqa: BLE001 - a Connect session has no SparkContext
        return []
    deadline = time.monotonic() + timeout
    while True:
        hosts = sorted({e.host() for e in tracker.getExecutorInfos() if e.host() != driver})
        if len(hosts) >= want or time.monotonic() > deadline:
            return hosts
        time.sleep(0.5)
