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
    `timeout` seconds); empty for a Spark Connect client, which cannot list them. On a loaded
    machine the Master has been seen to give an application's two executors to one Worker, the
    other Worker idle (its log gone with the run that showed it): after a third of the time, one
    of them is replaced, and the Master puts the new one on the Worker with the most free cores.
    The test asks that each Worker reads the package, which needs an executor on each."""
    try:
        context = spark.sparkContext._jsc.sc()
        driver = spark.sparkContext.getConf().get("spark.driver.host")
    except Exception:  # noqa: BLE001 - a Connect session has no SparkContext
        return []
    started = time.monotonic()
    replaced = False
    while True:
        infos = context.statusTracker().getExecutorInfos()
        hosts = sorted({e.host() for e in infos} - {driver})
        waited = time.monotonic() - started
        if len(hosts) >= want or waited > timeout:
            return hosts
        if not replaced and waited > timeout / 3 and hosts:
            scala = spark.sparkContext._jvm.scala.jdk.javaapi.CollectionConverters
            ids = list(scala.asJava(context.getExecutorIds()))
            if len(ids) >= want:
                print(f"executors on {hosts} only: replacing executor {ids[-1]}", flush=True)
                context.killAndReplaceExecutor(ids[-1])
                replaced = True
        time.sleep(0.5)
