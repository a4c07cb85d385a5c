//! What another user of the machine can reach of a session of `cargo sparkds spark`: nothing
//! it opens listens beyond the loopback interface (local mode, `--cluster`), the `--cluster`
//! Master refuses a Worker and an application that do not have the run's secret and its web
//! interface kills nothing, the secret is on no command line and in no file that others read,
//! and `--connect` refuses a port whose `[::1]` another user listens on.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::processes::{self, Group, Listening};
use super::{fixture, free_port, world_readable_files_holding, NAME};

/// A session of `cargo sparkds spark --python` whose script prints `READY` once the session
/// runs, then waits until the test lets it go on: the test looks at the running session from
/// outside, as another user would.
struct Waiting {
    child: std::process::Child,
    group: Group,
    lines: Receiver<String>,
    log: tempfile::NamedTempFile,
    go: PathBuf,
    dir: tempfile::TempDir,
}

/// Starts `cargo sparkds spark <args> --python <a waiting script>` in a process group of its
/// own; the script runs `then` once let go. Returns once it printed `READY`.
fn waiting_session(args: &[&str], then: &str) -> Waiting {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let go = dir.path().join("go");
    let script = dir.path().join("waiting.py");
    std::fs::write(
        &script,
        format!(
            "import os, sys, time\n\
             print('READY', flush=True)\n\
             deadline = time.monotonic() + 600\n\
             while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:\n\
             \x20   time.sleep(0.1)\n\
             {then}\n"
        ),
    )
    .expect("write the script");
    let (script, go_arg) = (script.display().to_string(), go.display().to_string());
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--python", &script, "--", &go_arg]);
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let mut command = fixture().spark(&all);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(log.reopen().expect("reopen the log"))
        .spawn()
        .expect("start cargo sparkds spark");
    let group = Group(child.id());
    let lines = lines_of(child.stdout.take().expect("piped stdout"));
    let session = Waiting {
        child,
        group,
        lines,
        log,
        go,
        dir,
    };
    let ready = session
        .lines
        .recv_timeout(Duration::from_secs(900))
        .is_ok_and(|line| line == "READY");
    assert!(ready, "the session did not start:\n{}", session.said());
    session
}

impl Waiting {
    /// The processes of the session: the command, Python, the driver's JVM, the executors,
    /// the Python workers.
    fn processes(&self) -> Vec<u32> {
        processes::of_group(self.group.0)
    }

    /// What the command wrote to its standard error.
    fn said(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Lets the script go on and waits for the command: its exit code and what the script
    /// printed after `READY`.
    fn finish(mut self) -> (Option<i32>, String) {
        std::fs::write(&self.go, b"").expect("write the go file");
        let deadline = Instant::now() + Duration::from_secs(300);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.code(),
                _ if Instant::now() > deadline => break None,
                _ => std::thread::sleep(Duration::from_millis(100)),
            }
        };
        // The reader ends with the command's standard output.
        let mut out = String::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            out.push_str(&line);
            out.push('\n');
        }
        (status, format!("{out}\nstderr:\n{}", self.said()))
    }
}

/// The lines of `stream`, as they come.
fn lines_of(stream: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    receiver
}

/// The sockets among `listening` that another machine could reach: not on loopback.
fn beyond_loopback(listening: &[Listening]) -> Vec<&Listening> {
    listening
        .iter()
        .filter(|s| !processes::is_loopback(&s.address))
        .collect()
}

#[test]
fn the_bridge_reads_the_source_through_a_view_and_listens_on_loopback_only() {
    let session = waiting_session(
        &["--bridge", "end=6"],
        &format!("print('COUNT', spark.sql('SELECT count(*) AS n FROM {NAME}').first().n)"),
    );
    let listening = processes::listening(&session.processes());
    let (status, out) = session.finish();
    // The driver's JVM listens (its RPC and its block manager): the check has something to see.
    assert!(
        listening.iter().any(|s| s.process.contains("java")),
        "no socket of the session's JVM: {listening:#?}"
    );
    assert!(
        beyond_loopback(&listening).is_empty(),
        "listening beyond loopback: {:#?}",
        beyond_loopback(&listening)
    );
    assert_eq!(status, Some(0), "{out}");
    assert!(out.contains("COUNT 6"), "{out}");
}

/// The Spark that the command runs, as it finds it: SPARK_HOME, else python3's pyspark.
pub(crate) fn spark_home() -> PathBuf {
    if let Some(home) = std::env::var_os("SPARK_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    let output = Command::new("python3")
        .args([
            "-c",
            "import os, pyspark; print(os.path.dirname(pyspark.__file__))",
        ])
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "python3 has no pyspark: {output:?}"
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// A process started apart, in a process group of its own, with its standard output and error
/// in one file: stopped, and waited for, when dropped.
struct Apart {
    child: std::process::Child,
    log: tempfile::NamedTempFile,
}

impl Apart {
    fn start(command: &mut Command) -> Apart {
        let log = tempfile::NamedTempFile::new().expect("a log file");
        std::os::unix::process::CommandExt::process_group(command, 0);
        let child = command
            .stdout(log.reopen().expect("reopen the log"))
            .stderr(log.reopen().expect("reopen the log"))
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        Apart { child, log }
    }

    fn said(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}

impl Drop for Apart {
    fn drop(&mut self) {
        let group = self.child.id();
        processes::stop_group(group);
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        // What ignored SIGTERM.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{group}")])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

/// A Worker of Spark's own, started as a user of the machine would start one, without the
/// session's secret: `spark-class org.apache.spark.deploy.worker.Worker spark://...`.
fn rogue_worker(master: &str, dir: &Path) -> Apart {
    let home = spark_home();
    Apart::start(
        Command::new(home.join("bin").join("spark-class"))
            .args(["org.apache.spark.deploy.worker.Worker", "--work-dir"])
            .arg(dir.join("rogue-worker"))
            .args([
                "--webui-port",
                "0",
                "--cores",
                "1",
                "--memory",
                "1g",
                master,
            ])
            .env("SPARK_HOME", &home)
            // Its own ports on loopback too: the test opens nothing beyond it.
            .env("SPARK_LOCAL_IP", "127.0.0.1"),
    )
}

/// An application of a user of the machine, without the session's secret: a PySpark session
/// whose master is the session's Master.
fn rogue_application(master: &str) -> Apart {
    let code = "import sys\n\
                from pyspark.sql import SparkSession\n\
                try:\n\
                \x20   s = SparkSession.builder.master(sys.argv[1]).appName('rogue')\\\n\
                \x20       .config('spark.ui.enabled', 'false').getOrCreate()\n\
                \x20   print('ROGUE SESSION', flush=True)\n\
                \x20   print('ROGUE ROWS', s.range(3).count(), flush=True)\n\
                except Exception as e:\n\
                \x20   print('ROGUE RAISED', type(e).__name__, flush=True)\n";
    Apart::start(
        Command::new("python3")
            .args(["-c", code, master])
            .env("SPARK_LOCAL_IP", "127.0.0.1"),
    )
}

/// Waits until each of `rogues` logged `refused` or one of its `admitted` words, at most
/// `limit`.
fn until_refused_or_admitted(rogues: &[(&Apart, &[&str])], refused: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        let settled = rogues.iter().all(|(rogue, admitted)| {
            let said = rogue.said();
            said.contains(refused) || admitted.iter().any(|w| said.contains(w))
        });
        if settled {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// What a rogue that registers with the Master logs (a Worker; an application's session).
const WORKER_ADMITTED: &[&str] = &[
    "Successfully registered with master",
    "Asked to launch executor",
];
const APPLICATION_ADMITTED: &[&str] =
    &["ROGUE SESSION", "ROGUE ROWS", "Connected to Spark cluster"];

/// What Spark's Master answers a peer that does not authenticate with the run's secret
/// (`spark.authenticate`): the connection is refused before any message of Spark's protocol.
const NOT_AUTHENTICATED: &str = "Expected SaslMessage, received something else";

#[test]
fn a_cluster_listens_on_loopback_only_and_refuses_a_worker_and_an_application_without_its_secret() {
    let started = Instant::now();
    let session = waiting_session(
        &["--cluster", "2", "end=100", "num_partitions=4"],
        &format!(
            "row = spark.sql('SELECT count(*) AS n, sum(id) AS s FROM native.{NAME}').first()\n\
             print('READ AFTER', row.n, row.s)"
        ),
    );
    let pids = session.processes();
    let listening = processes::listening(&pids);
    let ports: Vec<u16> = listening.iter().map(|s| s.port).collect();
    let before = processes::master(&ports);
    let Some(before) = before else {
        panic!(
            "no Master's web interface among {listening:#?}\n{}",
            session.said()
        );
    };
    // The executors get the secret from their Worker, in their environment (which only this
    // user reads), never on a command line.
    let secret = pids
        .iter()
        .filter(|pid| processes::command_line(**pid).contains("CoarseGrainedExecutorBackend"))
        .find_map(|pid| processes::environment_variable(*pid, "_SPARK_AUTH_SECRET"));
    let on_command_lines = secret
        .as_deref()
        .map(processes::command_lines_holding)
        .unwrap_or_default();
    let worker = rogue_worker(&before.url, session.dir.path());
    let application = rogue_application(&before.url);
    until_refused_or_admitted(
        &[
            (&worker, WORKER_ADMITTED),
            (&application, APPLICATION_ADMITTED),
        ],
        NOT_AUTHENTICATED,
        Duration::from_secs(120),
    );
    // Another user reaches the Master's web interface on loopback: it kills nothing.
    let app = before.applications.first().map(|(id, _)| id.clone());
    let kill = processes::http(
        before.ui_port,
        "POST",
        &format!(
            "/app/kill/?id={}&terminate=true",
            app.clone().unwrap_or_default()
        ),
    );
    let decommission = processes::http(before.ui_port, "POST", "/workers/kill/?host=127.0.0.1");
    let after = processes::master_at(before.ui_port);
    let (worker_said, application_said) = (worker.said(), application.said());
    drop((worker, application));
    let (status, out) = session.finish();
    let readable = secret
        .as_deref()
        .map(|s| world_readable_files_holding(s, started, &[spark_home().join("work")]))
        .unwrap_or_default();

    // What each rogue logged about the Master, for the record.
    for (who, said) in [
        ("rogue Worker", &worker_said),
        ("rogue application", &application_said),
    ] {
        let about = |l: &&str| {
            ["master", "SaslMessage", "executor", "ROGUE"]
                .iter()
                .any(|w| l.contains(w))
        };
        for line in said.lines().filter(about) {
            println!("{who}: {line}");
        }
    }
    let master_address = before.url.trim_start_matches("spark://");
    for (who, said, admitted) in [
        ("the rogue Worker", &worker_said, WORKER_ADMITTED),
        (
            "the rogue application",
            &application_said,
            APPLICATION_ADMITTED,
        ),
    ] {
        assert!(
            said.contains(&format!("Failed to connect to master {master_address}"))
                && said.contains(NOT_AUTHENTICATED)
                && !admitted.iter().any(|w| said.contains(w)),
            "{who} was not refused:\n{said}"
        );
    }
    assert!(
        beyond_loopback(&listening).is_empty(),
        "listening beyond loopback: {:#?}",
        beyond_loopback(&listening)
    );
    assert!(before.url.starts_with("spark://127.0.0.1:"), "{before:?}");
    let secret = secret.unwrap_or_else(|| {
        panic!("no executor of the session has a secret (spark.authenticate is off):\n{out}")
    });
    assert!(
        secret.len() == 64 && secret.chars().all(|c| c.is_ascii_hexdigit()),
        "the secret is not 32 random bytes in hex: {} characters",
        secret.len()
    );
    assert!(
        on_command_lines.is_empty(),
        "the secret is on the command lines of {on_command_lines:?}"
    );
    assert!(readable.is_empty(), "the secret is in {readable:?}");
    let after = after.expect("the Master still answers");
    assert_eq!(
        after.workers, before.workers,
        "the Master's workers changed"
    );
    assert_eq!(after.workers.len(), 2, "{after:?}");
    assert_eq!(after.applications, before.applications, "{after:?}");
    assert_eq!(after.applications.len(), 1, "{after:?}");
    // Spark answers a request to a handler that is not there 400 or 405, as the HTTP version
    // goes; a kill it takes is a redirection (302).
    let refused = |answer: &Option<(u16, String)>| {
        answer
            .as_ref()
            .is_some_and(|(status, _)| (400..500).contains(status))
    };
    assert!(
        refused(&kill) && refused(&decommission),
        "the Master's web interface took a kill ({kill:?}) or a decommission ({decommission:?})"
    );
    assert_eq!(status, Some(0), "{out}");
    assert!(out.contains("READ AFTER 100 4950"), "{out}");
    println!(
        "--cluster 2 with a rogue Worker and application: {:.1?}",
        started.elapsed()
    );
}

/// The Python that listens on `[::1]:PORT` as another user would, with every option that lets
/// a socket share a port (SO_REUSEADDR, SO_REUSEPORT): `TAKEN <errno>` when it cannot bind,
/// else `LISTENING`, then `RECEIVED <bytes in hex>` for each connection, for `argv[2]` seconds.
const IPV6_LISTENER: &str = r#"
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
try:
    s.bind(("::1", int(sys.argv[1])))
    s.listen()
except OSError as e:
    print("TAKEN", e.errno, flush=True)
    sys.exit(0)
print("LISTENING", flush=True)
s.settimeout(float(sys.argv[2]))
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.settimeout(2)
    data = b""
    try:
        while len(data) < 1 << 20:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    print("RECEIVED", data.hex(), flush=True)
"#;

/// `IPV6_LISTENER` on `port` for `seconds`, run as the user `nobody` where this machine allows
/// it (root, with `runuser`), else as this user (the port is taken either way).
pub fn ipv6_listener(port: u16, seconds: u32) -> Command {
    // The system's Python: another user may not read this user's (a pyenv in /root).
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
        .unwrap_or("python3");
    let as_nobody = Command::new("runuser")
        .args(["-u", "nobody", "--", python, "-c", "pass"])
        .output()
        .is_ok_and(|o| o.status.success());
    let mut command = if as_nobody {
        let mut command = Command::new("runuser");
        command.args(["-u", "nobody", "--", python]);
        command
    } else {
        println!("the [::1] listener runs as this user: runuser -u nobody is not allowed here");
        Command::new(python)
    };
    command
        .args(["-c", IPV6_LISTENER])
        .arg(port.to_string())
        .arg(seconds.to_string());
    command
}

/// Whether this machine has an IPv6 loopback, where a client of `localhost` may go.
pub fn has_ipv6_loopback() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

#[test]
fn connect_refuses_a_port_whose_ipv6_loopback_another_user_listens_on() {
    if !has_ipv6_loopback() {
        println!("skipped: this machine has no [::1], where no client of localhost can go");
        return;
    }
    let port = free_port();
    let listener = Apart::start(&mut ipv6_listener(port, 600));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !listener.said().contains("LISTENING") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        listener.said().contains("LISTENING"),
        "the listener did not start: {}",
        listener.said()
    );
    let mut command = fixture().spark(&["--connect", &port.to_string(), "end=3"]);
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(log.reopen().expect("reopen the log"))
        .spawn()
        .expect("start cargo sparkds spark --connect");
    let _group = Group(child.id());
    let lines = lines_of(child.stdout.take().expect("piped stdout"));
    // Today's command started the server here and printed its URL: stop at the URL too.
    let mut printed = Vec::new();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(900)) {
        let url = line.contains("sc://");
        printed.push(line);
        if url {
            break;
        }
    }
    if printed.iter().any(|line| line.contains("sc://")) {
        processes::stop_group(child.id());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let ended = child.try_wait().ok().flatten();
    drop(listener);
    let said = std::fs::read_to_string(log.path()).unwrap_or_default();
    let printed = printed.join("\n");
    assert!(
        !printed.contains("sc://"),
        "the URL was printed:\n{printed}\n{said}"
    );
    assert_eq!(ended.and_then(|s| s.code()), Some(2), "{printed}\n{said}");
    assert!(
        said.contains(&format!(
            "error: port {port} of [::1] is taken by another process"
        )),
        "{said}"
    );
}
