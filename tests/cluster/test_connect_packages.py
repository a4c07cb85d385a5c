"""A Spark Connect server with the JVM plugin on a cluster of separate processes
(`local-cluster[2,1,1024]`): a package that an isolated session adds reaches the executors
through Spark's own distribution of the session's files, and each executor finds the session's
copy of its own, without the driver's.

An executor keeps an isolated session's files in a folder named after the session, under its own
SparkFiles root; the driver keeps its copy under its own, which another host cannot see. Here
every process shares one machine, so the driver's copy is put out of the executors' reach: their
Java is a wrapper (spark.executorEnv.JAVA_HOME) that starts the real one in a mount namespace of
its own, where an empty file system covers the driver's folders of session files
(`<spark.local.dir>/*/userFiles-*`). Where the machine refuses a mount namespace, the module is
skipped and says so; nothing else of a second host (its own library path, its own Python) is
simulated, and none is needed: the package is the only place that has the library."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest
from conftest import ROOT, plugin_jar, spark_home_with_own_work_dir

sys.path.insert(0, os.path.join(ROOT, "tests", "jvm"))
from jvm_helpers import install, make_package, platform_key  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
# The server helpers of the Connect suites: a free port, the wait for it to listen, its log, its end.
import connect_server  # noqa: E402


NAME = "connect_pkg_range"
ROWS = 100_000


def namespace_flags() -> list:
    """unshare's flags for a mount namespace: as root, a mount namespace alone; otherwise in a
    user namespace of its own, where this user is root."""
    return ["--mount"] if os.geteuid() == 0 else ["--map-root-user", "--mount"]


def hiding_java(directory: str, local_dir: str) -> str:
    """A JAVA_HOME whose bin/java runs the real Java in a mount namespace where the driver's
    folders of session files under `local_dir` are empty; skips the module when the machine
    refuses one."""
    probe = tempfile.mkdtemp(prefix="sparkds_mount_probe_")
    try:
        tried = subprocess.run(
            ["unshare", *namespace_flags(), "sh", "-c", f"mount -t tmpfs tmpfs {probe}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    except FileNotFoundError:
        pytest.skip("no `unshare` here: the executors cannot be kept from the driver's files")
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if tried.returncode != 0:
        pytest.skip(f"this machine refuses a mount namespace ({tried.stdout.strip()}): the "
                    f"executors cannot be kept from the driver's files")
    real_java = os.path.realpath(shutil.which("java"))
    home = os.path.join(directory, "executor_java")
    os.makedirs(os.path.join(home, "bin"))
    java = os.path.join(home, "bin", "java")
    hide = (
        f'for d in {local_dir}/*/userFiles-*; do '
        f'if [ -d "$d" ]; then mount -t tmpfs tmpfs "$d" || exit 97; fi; done; exec "$0" "$@"'
    )
    with open(java, "w") as script:
        script.write(
            "#!/bin/sh\n"
            "# An executor's Java, out of reach of the driver's session files (another host's).\n"
            f"exec unshare {' '.join(namespace_flags())} sh -c '{hide}' {real_java} \"$@\"\n"
        )
    os.chmod(java, 0o755)
    return home


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The address of a Connect server on local-cluster with the plugin, whose executors cannot
    see the driver's session files."""
    scratch = str(tmp_path_factory.mktemp("connect_cluster"))
    local_dir = os.path.join(scratch, "driver_local")
    os.makedirs(local_dir)
    home = spark_home_with_own_work_dir(os.path.join(scratch, "spark_home"))
    executor_java = hiding_java(scratch, local_dir)
    port = connect_server.free_port()
    log = os.path.join(scratch, "server.log")
    command = [
        os.path.join(home, "bin", "spark-submit"),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master", "local-cluster[2,1,1024]",
        "--conf", f"spark.jars={plugin_jar()}",
        "--conf", f"spark.local.dir={local_dir}",
        "--conf", f"spark.executorEnv.JAVA_HOME={executor_java}",
        "--conf", "spark.executor.memory=768m",
        "--conf", "spark.driver.memory=1g",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.task.maxFailures=1",
        "--conf", "spark.log.level=WARN",
    ]
    env = dict(os.environ, SPARK_HOME=home, PYSPARK_PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    with open(log, "wb") as output:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, env=env,
            cwd=scratch, start_new_session=True,
        )
    try:
        connect_server.wait_until_started(process, log, port)
        yield f"sc://127.0.0.1:{port}", log
    finally:
        connect_server.stop(process)


@pytest.fixture
def package(tmp_path, c_range_library):
    """A .sparkpkg of c_range as data source NAME, which no library path holds."""
    build = tmp_path / "build"
    build.mkdir()
    library = install(c_range_library, str(build), NAME)
    return make_package(str(tmp_path / f"{NAME}.sparkpkg"), NAME, library, platform_key())


def test_executors_of_an_isolated_session_read_its_package_from_their_own_copy(
    server, package
):
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    address, log = server
    session = SparkSession.builder.remote(address).create()
    try:
        session.addArtifacts(package, file=True)
        df = (
            session.read.format("native").option("source", NAME).option("end", ROWS)
            .option("num_partitions", 8).load()
        )
        try:
            row = df.agg(F.count("*"), F.sum("id")).collect()[0]
        except Exception as error:  # noqa: BLE001 - shown with the server's log
            pytest.fail(f"{str(error).split('JVM stacktrace')[0]}\n{connect_server.tail(log)}")
        plan = df._explain_string(mode="simple")
        driver_copy = re.search(r"\[(/[^\]]+\.sparkpkg)\]", plan).group(1)
        seen = (
            session.range(0, 8, 1, 8)
            .select(F.udf(lambda _: os.path.exists(driver_copy), "boolean")("id").alias("seen"))
            .distinct()
            .collect()
        )
    finally:
        session.stop()

    assert tuple(row) == (ROWS, ROWS * (ROWS - 1) // 2)
    # The driver's copy is there for the driver, and out of every executor's reach.
    assert os.path.isfile(driver_copy), driver_copy
    assert [r.seen for r in seen] == [False]
