"""The one way the suite's Spark sessions are configured.

Every Spark suite (tests/jvm, tests/spark, tests/cluster, the examples') starts its session from
`builder`: no UI, tables of the session catalog in a scratch directory rather than the checkout,
as many shuffle partitions as cores, a small driver, and temporary checkpoints deleted. What a
suite needs beyond that (the plugin's jar, a native library path, a cluster's timeouts) it adds
with `conf`.
"""

import os
import sys
from contextlib import contextmanager
from typing import Dict, Iterable, Iterator, Optional


def python_workers_import(path: Optional[str], keep_others: bool = True) -> None:
    """Make the Python workers that Spark spawns import from `path` first (the bridge of the
    checkout), and run this interpreter. Workers inherit this process's environment, so this
    is called before a session starts; `keep_others=False` leaves `path` alone on PYTHONPATH."""
    others = os.environ.get("PYTHONPATH", "").split(os.pathsep) if keep_others else []
    first = [path] if path else []
    os.environ["PYTHONPATH"] = os.pathsep.join(first + [p for p in others if p and p != path])
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def builder(
    app: str,
    warehouse: str,
    master: str = "local[2]",
    partitions: int = 2,
    jars: Iterable[str] = (),
    library_path: Optional[str] = None,
    conf: Optional[Dict[str, str]] = None,
):
    """A `SparkSession.Builder` with the suite's settings; `library_path` is the native library
    path of the driver and of the executors (where the plugin finds installed libraries)."""
    from pyspark.sql import SparkSession

    settings = {
        "spark.ui.enabled": "false",
        "spark.sql.warehouse.dir": warehouse,
        "spark.sql.shuffle.partitions": str(partitions),
        "spark.default.parallelism": str(partitions),
        "spark.driver.memory": "1g",
        "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    }
    jars = list(jars)
    if jars:
        settings["spark.jars"] = ",".join(jars)
    if library_path is not None:
        settings["spark.driver.extraLibraryPath"] = library_path
        settings["spark.executor.extraLibraryPath"] = library_path
    settings.update(conf or {})
    session = SparkSession.builder.master(master).appName(app)
    for key, value in settings.items():
        session = session.config(key, value)
    return session


@contextmanager
def started(builder_) -> Iterator:
    """The session of `builder_`, logging errors only, stopped when the block ends."""
    session = builder_.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
