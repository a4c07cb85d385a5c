"""A Spark cluster on one machine for the end-to-end tests: `local-cluster[2,1,1024]` starts a
master, two workers and two executor JVMs in processes of their own, as a real cluster does.

Nothing reaches the executors from this process but what reaches a real cluster's. The driver's
Python environment has the bridge, as after `pip install` on the driver's node (the Python
workers that the driver's JVM starts to plan reads, streaming sources among them, import it from
there); the executors' PYTHONPATH is replaced by an empty directory, so their Python workers
import the bridge only because the session ships it (`ship_to_executors`), and they find the
native libraries at the driver's paths, in a package of the session, or in their own library
path. A module that needs a configuration of its own starts its cluster (about 15 s) with
`cluster`; the others share one (`plain_cluster`), started once per pytest run, whose driver
runs in a working directory of its own and whose executors have a directory of their own in
their library path (`node_paths`), as two nodes have.
"""

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIDGE = os.path.join(ROOT, "python")

# The driver's node has the bridge; the executors' environment does not (see `cluster`).
sys.path.insert(0, BRIDGE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import spark_session  # noqa: E402
spark_session.python_workers_import(BRIDGE, keep_others=False)

EXECUTORS = 2
START_TIMES: List[str] = []
# What each failure test saw, printed at the end of the run (the book's table comes from it).
OUTCOMES: List[str] = []


def spark_home_with_own_work_dir(directory: str) -> str:
    """A SPARK_HOME made of links to the installed pyspark's files, so that the workers of
    `local-cluster`, which keep each executor's directory in `$SPARK_HOME/work`, write there
    rather than into the installed package."""
    import pyspark

    installed = os.path.dirname(os.path.abspath(pyspark.__file__))
    os.makedirs(directory)
    for entry in os.listdir(installed):
        if entry != "work":
            os.symlink(os.path.join(installed, entry), os.path.join(directory, entry))
    os.makedirs(os.path.join(directory, "work"))
    return directory


def library(variable: str) -> str:
    path = os.environ.get(variable)
    if not path or not os.path.isfile(path):
        pytest.fail(f"{variable} must name a built library (tests/cluster/main.rs sets it)")
    return path


def plugin_jar() -> str:
    """The JVM plugin's jar, which tests/cluster/main.rs names in SPARKDS_JVM_JAR."""
    path = os.environ.get("SPARKDS_JVM_JAR")
    if not path or not os.path.isfile(path):
        pytest.fail("SPARKDS_JVM_JAR must name the plugin's jar (tests/cluster/main.rs sets it)")
    return path


@pytest.fixture(scope="session")
def c_range_library() -> str:
    return library("SPARK_E2E_C_RANGE_LIBRARY")


@pytest.fixture(scope="session")
def writer_library() -> str:
    return library("SPARK_E2E_WRITER_LIBRARY")


@contextmanager
def cluster(
    name: str, conf: Optional[Dict[str, str]] = None, driver_cwd: Optional[str] = None
) -> Iterator:
    """A session on `local-cluster[2,1,1024]` whose two executors have registered, with the
    bridge shipped to them; stopped afterwards. With `driver_cwd`, the driver's JVM starts there
    (the Python workers it starts to plan run there too); the executors run in their own
    directories."""
    from spark_native_bridge import ship_to_executors

    started = time.monotonic()
    scratch = tempfile.mkdtemp(prefix=f"sparkds_cluster_{name}_")
    os.environ["SPARK_HOME"] = spark_home_with_own_work_dir(os.path.join(scratch, "spark_home"))
    # In local-cluster, executors inherit the driver JVM's environment: give them an empty
    # PYTHONPATH of their own, as on a node where the bridge is not installed.
    os.makedirs(os.path.join(scratch, "executor_pythonpath"))
    settings = {
        "spark.executor.memory": "768m",
        # A lost executor is noticed within seconds rather than the default two minutes.
        "spark.network.timeout": "20s",
        "spark.network.timeoutInterval": "10s",
        "spark.executor.heartbeatInterval": "2s",
        "spark.executorEnv.PYTHONPATH": os.path.join(scratch, "executor_pythonpath"),
    }
    settings.update(conf or {})
    builder = spark_session.builder(
        f"spark-native-cluster-{name}",
        os.path.join(scratch, "warehouse"),
        master=f"local-cluster[{EXECUTORS},1,1024]",
        partitions=4,
        conf=settings,
    )
    # pyspark starts the driver's JVM in this process's working directory, which it keeps.
    previous = os.getcwd()
    os.chdir(driver_cwd or previous)
    try:
        spark = builder.getOrCreate()
    finally:
        os.chdir(previous)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        wait_for_executors(spark, EXECUTORS)
        ship_to_executors(spark)
        START_TIMES.append(f"{name}: {time.monotonic() - started:.1f} s")
        yield spark
    finally:
        spark.stop()
        # The executors' work directories (their logs) go too: a failing test prints what it
        # needs from them.
        shutil.rmtree(scratch, ignore_errors=True)


@dataclass(frozen=True)
class NodePaths:
    """What differs between the driver's node and the executors' on `plain_cluster`, although
    all run on this machine."""

    # The working directory of the driver's JVM and of the Python workers it starts: a path
    # under `/proc/self/cwd/` names a file there for the driver only.
    driver_cwd: str
    # First in the executors' library path, empty: a test that fills it empties it again.
    executor_library_path: str


@pytest.fixture(scope="session")
def node_paths(tmp_path_factory) -> NodePaths:
    return NodePaths(
        driver_cwd=str(tmp_path_factory.mktemp("driver_cwd")),
        executor_library_path=str(tmp_path_factory.mktemp("executor_library_path")),
    )


@pytest.fixture(scope="session")
def plain_cluster(node_paths):
    """A cluster of the default configuration (a task tried 4 times, as on any cluster), for
    every module of the pytest run that needs nothing else. A module that kills executors runs
    after the others (tests/cluster/main.rs lists them so): the workers replace what it kills."""
    library_path = [node_paths.executor_library_path, os.environ.get("LD_LIBRARY_PATH", "")]
    conf = {
        "spark.task.maxFailures": "4",
        "spark.executorEnv.LD_LIBRARY_PATH": os.pathsep.join(p for p in library_path if p),
    }
    with cluster("plain", conf, driver_cwd=node_paths.driver_cwd) as session:
        yield session


def work_dir() -> str:
    """Where the workers keep the directory of each executor: `<work>/<app>/<executor>/`."""
    return os.path.join(os.environ["SPARK_HOME"], "work")


def wait_for_executors(spark, count: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while len(executor_ids(spark)) < count:
        assert time.monotonic() < deadline, f"{count} executors did not register in {timeout} s"
        time.sleep(0.2)


def executor_ids(spark) -> List[str]:
    """The IDs of the live executors (not the driver)."""
    store = spark.sparkContext._jsc.sc().statusStore()
    executors = store.executorList(True)
    ids = [executors.apply(i).id() for i in range(executors.size())]
    return [i for i in ids if i != "driver"]


def tasks_per_executor(spark) -> Dict[str, int]:
    """The number of tasks each executor ran so far, dead executors included."""
    store = spark.sparkContext._jsc.sc().statusStore()
    executors = store.executorList(False)
    totals = {}
    for i in range(executors.size()):
        summary = executors.apply(i)
        if summary.id() != "driver":
            totals[summary.id()] = summary.totalTasks()
    return totals


def executor_pids(spark) -> List[int]:
    """The processes of this application's executors: those that name its ID and its driver's
    port (two clusters started in the same second give their applications the same ID, since
    each has a master of its own that numbers them from 0)."""
    app_id = spark.sparkContext.applicationId
    driver_port = spark.sparkContext.getConf().get("spark.driver.port")
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                command = file.read().split(b"\0")
        except OSError:
            continue
        if (
            b"org.apache.spark.executor.CoarseGrainedExecutorBackend" in command
            and any(app_id.encode() in part for part in command)
            and any(
                option == b"--driver-url" and value.endswith(f":{driver_port}".encode())
                for option, value in zip(command, command[1:])
            )
        ):
            pids.append(int(entry))
    return sorted(pids)


class ExecutorKiller:
    """Kills one executor with SIGKILL once the tasks of a job are running and
    `after_seconds` have passed: the test then checks what the query did about it."""

    def __init__(self, spark, after_seconds: float = 1.0, timeout: float = 120) -> None:
        self.spark = spark
        self.after_seconds = after_seconds
        self.timeout = timeout
        self.killed: Optional[int] = None
        # The tasks that were running when the executor was killed.
        self.running_at_kill = 0
        self.error: Optional[str] = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "ExecutorKiller":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._thread.join(self.timeout)

    def _running_tasks(self) -> int:
        tracker = self.spark.sparkContext.statusTracker()
        running = 0
        for stage in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage)
            if info is not None:
                running += info.numActiveTasks
        return running

    def _run(self) -> None:
        deadline = time.monotonic() + self.timeout
        while self._running_tasks() == 0:
            if time.monotonic() > deadline:
                self.error = "no task ran"
                return
            time.sleep(0.05)
        time.sleep(self.after_seconds)
        pids = executor_pids(self.spark)
        if not pids:
            self.error = "no executor process found"
            return
        self.running_at_kill = self._running_tasks()
        os.kill(pids[0], signal.SIGKILL)
        self.killed = pids[0]

    def assert_killed(self, mid_job: bool = False) -> None:
        """An executor was killed; with `mid_job`, while tasks of the job ran (a job that ended
        first proves nothing about recovery: it needs more rows)."""
        assert self.error is None, self.error
        assert self.killed is not None, "no executor was killed"
        if mid_job:
            assert self.running_at_kill > 0, (
                "the job had ended when the executor was killed: give it more rows"
            )


def pytest_terminal_summary(terminalreporter):
    for outcome in OUTCOMES:
        terminalreporter.write_line(outcome)
    if START_TIMES:
        terminalreporter.write_line(
            "cluster start-up (local-cluster[2,1,1024], until both executors registered): "
            + ", ".join(START_TIMES)
        )
