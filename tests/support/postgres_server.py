"""A PostgreSQL server of the tests' own, made as the postgres example's host tests make theirs
(examples/postgres/tests/library/server.rs): initdb into a scratch directory as the system user
`sparkds-pg` when the tests run as root, scram-sha-256 for the test role; a watchdog in a session
of its own stops it and removes the directory when the test process ends, however it ends.

By default it listens on a private port of 127.0.0.1 (the example's Spark tests). The hosts
group (tests/hosts) runs one on a host of its own: in that host's namespaces (`enter`, the
command that runs a program there), on the host's address and port 5432, with TLS (`files`,
`settings`) and the rules of pg_hba.conf that let the other hosts in (`hba`).
"""

import glob
import os
import socket
import subprocess
import tempfile

USER = "sparkds"
PASSWORD = "pw-7d1f0c3a-secret"
DATABASE = "sparkds"
SYSTEM_USER = "sparkds-pg"
SUPERUSER_PASSWORD = "superuser-pw"


def bin_dir() -> str:
    if os.environ.get("PG_BIN"):
        return os.environ["PG_BIN"]
    found = sorted(
        (int(os.path.basename(os.path.dirname(d))), d)
        for d in glob.glob("/usr/lib/postgresql/*/bin")
        if os.path.isfile(os.path.join(d, "initdb")) and os.path.basename(os.path.dirname(d)).isdigit()
    )
    if not found:
        raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql (or set PG_BIN)")
    return found[-1][1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A PostgreSQL server for the tests: `start()`, then `stop()` (the watchdog covers the rest).

    `parent` is where its directory goes (the system's temporary directory by default),
    `addresses` what it listens on (psql connects to the first), `host` the name that clients
    put in their URL (the first address by default: a name for `sslmode=verify-full`), and
    `enter` the command line prefix that runs a program where the server runs."""

    def __init__(self, parent=None, addresses=("127.0.0.1",), host=None, port=None, enter=()):
        self.bin = bin_dir()
        self.run_as = SYSTEM_USER if os.geteuid() == 0 else None
        if self.run_as and subprocess.run(["id", SYSTEM_USER], capture_output=True).returncode != 0:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
                capture_output=True,
            )
        self.addresses = list(addresses)
        self.host = host or self.addresses[0]
        self.enter = list(enter)
        self.dir = tempfile.mkdtemp(prefix="sparkds-pg-", dir=parent)
        self.port = port or free_port()
        stop = self._argv("pg_ctl") + ["-D", os.path.join(self.dir, "data"), "-m", "immediate", "stop"]
        script = "read _ignored; {} > /dev/null 2>&1; rm -rf '{}'".format(" ".join(stop), self.dir)
        self.watchdog = subprocess.Popen(
            ["setsid", "sh", "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _argv(self, program):
        path = os.path.join(self.bin, program)
        return self.enter + (["runuser", "-u", self.run_as, "--", path] if self.run_as else [path])

    def _run(self, argv, **kwargs):
        done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
        if done.returncode != 0:
            raise RuntimeError(f"{argv} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def start(self, settings=(), hba=(), files=()):
        """Starts the server with `settings` (`-c` options, where `{dir}` names the server's
        directory), the lines `hba` added to pg_hba.conf, and `files` ((name, bytes, mode) in
        the server's directory, such as its certificate and key) written first."""
        password_file = os.path.join(self.dir, "superuser-password")
        with open(password_file, "w") as f:
            f.write(SUPERUSER_PASSWORD)
        for name, content, mode in files:
            path = os.path.join(self.dir, name)
            with open(path, "wb") as f:
                f.write(content)
            os.chmod(path, mode)
        if self.run_as:
            self._run(["chown", "-R", self.run_as, self.dir])
        data = os.path.join(self.dir, "data")
        self._run(
            self._argv("initdb")
            + ["-D", data, "-U", "postgres", "-E", "UTF8", "--locale=C"]
            + ["--no-sync", "--auth=scram-sha-256", f"--pwfile={password_file}"]
        )
        if hba:
            with open(os.path.join(data, "pg_hba.conf"), "a") as f:
                f.write("".join(f"{line}\n" for line in hba))
        listen = ",".join(self.addresses)
        options = f"-p {self.port} -k {self.dir} -c listen_addresses={listen} " + " ".join(
            f"-c {s.format(dir=self.dir)}" for s in settings
        )
        self._run(
            self._argv("pg_ctl")
            + ["-D", data, "-l", os.path.join(self.dir, "server.log")]
            + ["-w", "-t", "60", "-o", options, "start"]
        )
        self.psql(f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'", user="postgres", database="postgres")
        self.psql(f"CREATE DATABASE {DATABASE} OWNER {USER}", user="postgres", database="postgres")
        return self

    def restart(self):
        """Stops the server (`-m fast`: its sessions are ended) and starts it again with the
        same settings."""
        self._run(
            self._argv("pg_ctl")
            + ["-D", os.path.join(self.dir, "data"), "-l", os.path.join(self.dir, "server.log")]
            + ["-m", "fast", "-w", "-t", "60", "restart"]
        )

    def psql(self, sql, user=USER, database=DATABASE, args=()):
        """Runs `sql` with psql over TCP, with the role's password; returns its output."""
        return self._run(
            self.psql_argv(user, database) + ["-v", "ON_ERROR_STOP=1", "-q", "-X", *args, "-c", sql],
            env=self.password_env(user),
        )

    def psql_argv(self, user=USER, database=DATABASE):
        """psql, connected over TCP as `user` (its password in `password_env`)."""
        host, port = self.addresses[0], str(self.port)
        return self.enter + ["psql", "-h", host, "-p", port, "-U", user, "-d", database]

    def password_env(self, user=USER):
        return dict(os.environ, PGPASSWORD=SUPERUSER_PASSWORD if user == "postgres" else PASSWORD)

    def stop(self):
        if self.watchdog.poll() is None:
            self.watchdog.stdin.close()
            self.watchdog.wait(timeout=60)

    @property
    def url(self):
        return f"postgresql://{self.host}:{self.port}/{DATABASE}"

    @property
    def jdbc_url(self):
        return f"jdbc:postgresql://{self.host}:{self.port}/{DATABASE}"

    def options(self, **more):
        return dict(url=self.url, user=USER, password=PASSWORD, **more)

    def jdbc_options(self, **more):
        return dict(url=self.jdbc_url, user=USER, password=PASSWORD, driver="org.postgresql.Driver", **more)
