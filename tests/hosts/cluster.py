"""A Spark standalone cluster on the hosts of `hosts.py`, installed as its administrator installs
one, from the files of `deploy/` (which the book's chapter "Deploying to a cluster" shows):

- `master`: Spark's own Master (`deploy/master.sh`);
- `worker-1`, `worker-2`: a Worker each (`deploy/worker.sh`);
- `client`: the driver's host (`deploy/submit.sh`, `deploy/connect.sh`), which also serves the
  Maven repository of the plugin over HTTP, as an organisation's mirror would;
- `postgres`: a PostgreSQL server with TLS (conftest.py);
- `rogue`: Workers of someone who reaches the network and not the secret.

Every legitimate host has the cluster's secret in its properties file `conf/cluster.conf` (mode
0600, `deploy/cluster.conf`), which each Spark process reads with `--properties-file`; the
rogue has none, or a guess. (A properties file rather than `SPARK_CONF_DIR`: a directory of
configuration on the class path would keep the JVMs from the suite's class archive.) What the test adds to make a lost
host quick to notice (timeouts) goes in the daemons' `SPARK_*_OPTS` and the applications'
`--conf`, apart from the listings.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Dict, List, Optional

from hosts import Host, Network

HERE = os.path.dirname(os.path.abspath(__file__))
DEPLOY = os.path.join(HERE, "deploy")
HTTP_PORT = 8000
CONNECT_PORT = 15002
# The first line of the Master's log for a Worker it took in: `Registering worker <host>:<port>`.
REGISTERED = "Registering worker "


def spark_home() -> str:
    from pyspark.find_spark_home import _find_spark_home

    return _find_spark_home()


def java_tool_options() -> str:
    """The suite's JVM options (tests/suite/jvm.rs) without its temporary directory, which no
    host sees: each host's /tmp is its own."""
    options = os.environ.get("JAVA_TOOL_OPTIONS", "").split()
    return " ".join(o for o in options if not o.startswith("-Djava.io.tmpdir="))


def class_archive() -> Optional[str]:
    """The class archive that the suite's JVM options name, which every host keeps visible."""
    for option in os.environ.get("JAVA_TOOL_OPTIONS", "").split():
        if option.startswith("-XX:SharedArchiveFile="):
            path = option.split("=", 1)[1]
            return path if os.path.isfile(path) else None
    return None


class Cluster:
    """The hosts, with what each runs, and the settings an application on the client gets."""

    def __init__(self, network: Network, secret: str, plugin_version: str):
        self.network = network
        self.secret = secret
        self.plugin_version = plugin_version
        self.master = network["master"]
        self.workers = [network["worker-1"], network["worker-2"]]
        self.client = network["client"]
        self.rogue = network["rogue"]

    # -- installing ---------------------------------------------------------------------------

    def install(self, host: Host, conf: str, name: str = "cluster.conf") -> None:
        """Spark's files of `host`: the scripts of deploy/ in `bin/`, `conf` as its properties
        file `conf/<name>` (mode 0600), a home and a work directory."""
        os.makedirs(host.path("bin"), exist_ok=True)
        for script in os.listdir(DEPLOY):
            if script.endswith(".sh"):
                shutil.copy(os.path.join(DEPLOY, script), host.path("bin", script))
        for directory in ("conf", "home", "work"):
            os.makedirs(host.path(directory), exist_ok=True)
        fd = os.open(host.path("conf", name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(conf)

    def secured_conf(self, secret: Optional[str] = None) -> str:
        """deploy/cluster.conf with `secret` (the cluster's by default)."""
        with open(os.path.join(DEPLOY, "cluster.conf")) as f:
            return f.read().replace("@SECRET@", secret or self.secret)

    def env(self, host: Host, conf: str = "cluster.conf", **more: str) -> Dict[str, str]:
        """The environment of a Spark process of `host`: nothing of this process's but PATH's
        system directories, this Python and the JVM options of the suite."""
        python_bin = os.path.dirname(sys.executable)
        env = {
            "PATH": f"{python_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": host.path("home"),
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "SPARK_HOME": spark_home(),
            # ANCHOR: host_env
            # What every Spark process of a host listens on and calls itself, and the properties
            # file with the secret (the scripts of deploy/ read them).
            "SPARK_LOCAL_IP": host.address,
            "SPARK_LOCAL_HOSTNAME": host.name,
            "SPARK_PROPERTIES": host.path("conf", conf),
            "SPARK_WORKER_DIR": host.path("work"),
            # ANCHOR_END: host_env
            "PYSPARK_PYTHON": sys.executable,
            "PYSPARK_DRIVER_PYTHON": sys.executable,
        }
        if java_tool_options():
            env["JAVA_TOOL_OPTIONS"] = java_tool_options()
        if os.environ.get("JAVA_HOME"):
            env["JAVA_HOME"] = os.environ["JAVA_HOME"]
        env.update(more)
        return env

    # -- starting -----------------------------------------------------------------------------

    def start_master(self) -> None:
        self.install(self.master, self.secured_conf())
        self.master.start("master", ["sh", "bin/master.sh"], self.env(self.master, **DAEMON))

    def start_worker(self, worker: Host) -> None:
        self.install(worker, self.secured_conf())
        worker.start("worker", ["sh", "bin/worker.sh"], self.env(worker, **DAEMON))

    def start_rogues(self) -> None:
        """Two Workers on the rogue host: one without authentication, one that guesses."""
        self.install(self.rogue, "", name="plain.conf")
        self.install(self.rogue, self.secured_conf("0" * 64), name="guess.conf")
        for label, port in (("plain", "8081"), ("guess", "8082")):
            env = self.env(self.rogue, conf=f"{label}.conf", SPARK_WORKER_WEBUI_PORT=port, **DAEMON,
                           SPARK_WORKER_DIR=self.rogue.path(f"work-{label}"))
            os.makedirs(env["SPARK_WORKER_DIR"], exist_ok=True)
            self.rogue.start(f"rogue-worker-{label}", ["sh", "bin/worker.sh"], env)

    def start_repository(self, maven: str) -> None:
        """The client host, with its properties file, serves a copy of the Maven repository
        `maven` over HTTP."""
        self.install(self.client, self.secured_conf())
        served = self.client.path("maven")
        shutil.copytree(maven, served)
        argv = [sys.executable, "-m", "http.server", "--bind", self.client.address,
                "--directory", served, str(HTTP_PORT)]
        self.client.start("maven-repository", argv, self.env(self.client))

    def wait_for_workers(self, timeout: float = 120) -> None:
        """Until the Master has registered both Workers."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            registered = self.registered()
            if all(any(w.address in r or w.name in r for r in registered) for w in self.workers):
                return
            for host, label in [(self.master, "master")] + [(w, "worker") for w in self.workers]:
                process = next(p["process"] for p in host.processes if p["label"] == label)
                if process.poll() is not None:
                    raise RuntimeError(f"the {label} of {host.name} exited:\n{host.log(label)[-4000:]}")
            time.sleep(0.3)
        raise RuntimeError(f"the Workers did not register in {timeout} s:\n{self.master.log('master')[-4000:]}")

    def registered(self) -> List[str]:
        """The lines of the Master's log that register a Worker."""
        return [line for line in self.master.log("master").splitlines() if REGISTERED in line]

    # -- applications -------------------------------------------------------------------------

    def submit_env(self, packages: List[str], **more: str) -> Dict[str, str]:
        return self.env(
            self.client,
            PLUGIN_VERSION=self.plugin_version,
            MAVEN_REPOSITORY=f"http://client:{HTTP_PORT}/",
            IVY_DIR=self.client.path("ivy"),
            PACKAGES=",".join(packages),
            **more,
        )

    def start_connect(self, token: str, timeout: float = 180):
        """The Connect server on the client host (`deploy/connect.sh`), its token in its
        environment; returns its process once it listens."""
        argv = ["sh", "bin/connect.sh"]
        for key, value in {**APP_CONF, "spark.app.name": "connect-server"}.items():
            argv += ["--conf", f"{key}={value}"]
        env = self.submit_env([], SPARK_CONNECT_AUTHENTICATE_TOKEN=token)
        process = self.client.start("connect-server", argv, env)
        deadline = time.monotonic() + timeout
        while f"127.0.0.1:{CONNECT_PORT}" not in self.client.listening():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the Connect server did not start:\n{self.client.log('connect-server')[-6000:]}")
            time.sleep(0.3)
        return process

    def write_config(self, label: str, config: Dict) -> str:
        """`config` in the client host's `apps/<label>.json`, for an app of apps/ to read."""
        path = self.client.path("apps", f"{label}.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(config, f)
        return path

    def app_path(self, app: str) -> str:
        """apps/<app> copied to the client host (the checkout is out of its reach)."""
        target = self.client.path("apps", app)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        for name in (app, "task_hosts.py"):  # the module the apps share, beside them
            shutil.copy(os.path.join(HERE, "apps", name), self.client.path("apps", name))
        return target

    def submit(self, label: str, app: str, config: Dict, packages: List[str],
               conf: Optional[Dict[str, str]] = None, background: bool = False):
        """Submits apps/<app> from the client host, with `config` in a JSON file that it reads;
        returns the process (in the background), or (exit code, what it printed as `RESULT`
        lines, its log)."""
        config_path = self.write_config(label, config)
        argv = ["sh", "bin/submit.sh"]
        for key, value in {**APP_CONF, "spark.app.name": label, **(conf or {})}.items():
            argv += ["--conf", f"{key}={value}"]
        argv += [self.app_path(app), config_path]
        process = self.client.start(label, argv, self.submit_env(packages))
        if background:
            return process
        code = process.wait(timeout=600)
        return code, printed(self.client.log(label)), self.client.log(label)


# The daemons' settings of the test, apart from the listings: a lost Worker is noticed in 10 s
# rather than 60 (its heartbeat every 2.5 s), and a small heap. With 60 s, a Worker cut off under
# the CDC stream stays on the Master's books with its executor's cores after it is plugged back,
# and the next application's executors all go to the other Worker.
DAEMON = {
    "SPARK_MASTER_OPTS": "-Dspark.worker.timeout=10",
    "SPARK_WORKER_OPTS": "-Dspark.worker.timeout=10",
    "SPARK_DAEMON_MEMORY": "384m",
}

# What every application of the test asks of the cluster: an executor of one core on each Worker
# (two applications fit at once), both registered before the first job (its tasks then run on
# both hosts).
APP_CONF = {
    "spark.cores.max": "2",
    "spark.executor.cores": "1",
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
    "spark.executor.memory": "640m",
    "spark.driver.memory": "768m",
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.log.level": "WARN",
}

# What the applications that lose a host on purpose (test_failures.py) add: the lost executor
# noticed in seconds rather than minutes. The others keep Spark's timeouts, since on a loaded
# machine a heartbeat 10 s late would lose a live executor and move its tasks to the other host.
LOSS_CONF = {
    "spark.executor.heartbeatInterval": "1s",
    "spark.network.timeout": "10s",
    "spark.network.timeoutInterval": "2s",
}


def printed(log: str) -> Dict:
    """What an app of apps/ printed: its lines `RESULT <json>`, merged."""
    result = {}
    for line in log.splitlines():
        if line.startswith("RESULT "):
            result.update(json.loads(line[len("RESULT "):]))
    return result
