//! Tests: spark_command. `cargo sparkds spark` as a user runs it: the command installed with
//! `cargo install --locked --path crates/cargo-sparkds` (the README's way, into a root of this
//! binary), in a project generated from the template in a scratch directory, on real Spark (the
//! pyspark of python3): `--sql`, a write read back and a pushed filter (`--python`), `--connect`
//! with a Connect client, `--cluster 2`, `--bridge`, the interactive shell in a pseudo-terminal,
//! and the one message for a missing Java or Python.
//!
//! The tests share one generated project (the read-write variant with `push_filters`) and one
//! cache (`SPARKDS_CACHE_DIR`, under `target/spark_command`), so the plugin is built by the
//! first command that needs it and reused by the others, as on a user's machine. The tool
//! installs from the checkout's target directory, as the README's command does (so after it,
//! nothing is rebuilt), the JNI library builds there too (the command's way for an SDK from a
//! checkout) and the project in `target/generated` beside the template's tests' projects, so a
//! second run rebuilds nothing and a first one builds each dependency as few times as it can.
//! Each test starts one Spark at most; they run in parallel.

#![cfg(unix)]

#[allow(dead_code)]
#[path = "../support/checked.rs"]
mod checked;
#[path = "../support/checkout.rs"]
mod checkout;
#[path = "../support/run_dir.rs"]
mod run_dir;

use checked::checked;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The data source of the generated project.
const NAME: &str = "sc_rw";

/// The installed command, the generated project and the directories they share.
struct Fixture {
    /// The `bin` directory of the install root, first on PATH.
    bin: PathBuf,
    project: PathBuf,
    base: PathBuf,
    _run: tempfile::TempDir,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Installs the command and generates the project, once per run of the binary.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let started = Instant::now();
        let base = repo_root().join("target").join("spark_command");
        let root = base.join("tool");
        checked(
            Command::new("cargo")
                .args(["install", "--locked", "--quiet", "--path"])
                .arg(repo_root().join("crates/cargo-sparkds"))
                .arg("--root")
                .arg(&root),
            "cargo install --path crates/cargo-sparkds",
        );
        let run = run_dir::new_run_dir(&base, "run-");
        // The test runner's copy of the repository, whose builds of the SDK the other groups'
        // projects share, else this repository.
        let source = checkout::shared_or(&repo_root());
        checked(
            Command::new("cargo")
                .args(["generate", "--path"])
                .arg(source.join("template"))
                .args([
                    "--name",
                    NAME,
                    "--silent",
                    "--no-workspace",
                    "--vcs",
                    "none",
                ])
                .arg("-d")
                .arg(format!("sdk=path:{}", source.display()))
                .args(["-d", "capabilities=batch_read,batch_write,truncate"])
                .args(["-d", "pushdowns=push_limit,prune_columns,push_filters"])
                .arg("--destination")
                .arg(run.path()),
            "cargo generate (is cargo-generate installed?)",
        );
        // The project builds where the template's tests build theirs, so that its release
        // build reuses their dependencies: set in its cargo configuration, as a user would,
        // since CARGO_TARGET_DIR would also move the JNI library's build out of the checkout.
        let project = run.path().join(NAME);
        std::fs::create_dir_all(project.join(".cargo")).expect("create .cargo");
        std::fs::write(
            project.join(".cargo/config.toml"),
            format!(
                "[build]\ntarget-dir = {:?}\n",
                repo_root().join("target/generated").display().to_string()
            ),
        )
        .expect("write .cargo/config.toml");
        println!("installed and generated in {:.1?}", started.elapsed());
        Fixture {
            bin: root.join("bin"),
            project,
            base,
            _run: run,
        }
    })
}

impl Fixture {
    /// `cargo sparkds spark <args>` in the project, with the installed command first on PATH.
    fn spark(&self, args: &[&str]) -> Command {
        let mut command = Command::new("cargo");
        command
            .args(["sparkds", "spark"])
            .args(args)
            .current_dir(&self.project)
            .env("PATH", self.path())
            .env("SPARKDS_CACHE_DIR", self.base.join("cache"))
            .env_remove("CARGO_TARGET_DIR")
            .stdin(Stdio::null());
        command
    }

    /// PATH with the installed command's directory first.
    fn path(&self) -> OsString {
        let rest = std::env::var_os("PATH").unwrap_or_default();
        std::env::join_paths(std::iter::once(self.bin.clone()).chain(std::env::split_paths(&rest)))
            .expect("a valid PATH")
    }
}

/// Runs `cargo sparkds spark <args>`, expecting success, and returns its standard output.
fn spark_ok(args: &[&str]) -> String {
    let started = Instant::now();
    let output = checked(
        &mut fixture().spark(args),
        &format!("cargo sparkds spark {args:?}"),
    );
    println!("cargo sparkds spark {args:?}: {:.1?}", started.elapsed());
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn sql_prints_the_rows_of_a_read_as_show_does() {
    let out = spark_ok(&[
        "end=12",
        "--sql",
        &format!("SELECT id, label FROM native.{NAME} WHERE id < 3 ORDER BY id"),
    ]);
    let expected = "+---+-----+\n| id|label|\n+---+-----+\n|  0|row 0|\n|  1|row 1|\n|  2| NULL|\n+---+-----+\n";
    assert!(out.contains(expected), "{out}");
    assert_the_cached_jni_library_exports_the_native_methods();
}

/// The JNI library that the command built in its cache, a cdylib that wraps `sparkds-jni`,
/// exports the `#[no_mangle]` functions of `sparkds-jni`: `JNI_OnLoad` and the native methods
/// of `dev.sparkds.spark.jni.Native`.
fn assert_the_cached_jni_library_exports_the_native_methods() {
    use object::{Object, ObjectSymbol};
    let cache = fixture().base.join("cache");
    let library = std::fs::read_dir(&cache)
        .expect("the cache exists")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("jni-"))
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .map(|platform| platform.path().join("libsparkds_jni.so"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no JNI library in {}", cache.display()));
    let data = std::fs::read(&library).expect("read the JNI library");
    let file = object::File::parse(&*data).expect("a shared library");
    let exported: Vec<String> = file
        .dynamic_symbols()
        .filter(|s| s.is_definition())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect();
    let natives = exported
        .iter()
        .filter(|n| n.starts_with("Java_dev_sparkds_spark_jni_Native_"))
        .count();
    assert!(
        exported.iter().any(|n| n == "JNI_OnLoad") && natives > 10,
        "{} exports {natives} native methods: {exported:?}",
        library.display()
    );
}

#[test]
fn a_script_writes_reads_back_and_pushes_a_filter() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = dir.path().join("write_read.py");
    std::fs::write(
        &script,
        format!(
            r#"import sys
path = sys.argv[1]
rows = [(1, "one"), (2, None), (30, "thirty")]
df = spark.createDataFrame(rows, "id long, label string")
df.write.format("native").option("source", "{NAME}").option("path", path).mode("append").save()
back = spark.read.format("native").option("source", "{NAME}").option("path", path).load()
print("READ", sorted((r.id, r.label) for r in back.collect()))
above = back.where("id > 1")
print("FILTERED", sorted(r.id for r in above.collect()))
print("PLAN", above._jdf.queryExecution().executedPlan().toString().replace("\n", " "))
{LEAKS}
"#
        ),
    )
    .expect("write the script");
    let table = dir.path().join("table");
    let script = script.to_string_lossy();
    let table = table.to_string_lossy();
    let out = spark_ok(&["batch_rows=1234567", "--python", &script, "--", &table]);
    assert!(out.contains("OPTIONS ON COMMAND LINES []"), "{out}");
    assert!(
        out.contains("READ [(1, 'one'), (2, None), (30, 'thirty')]"),
        "{out}"
    );
    assert!(out.contains("FILTERED [2, 30]"), "{out}");
    assert!(out.contains("PushedFilters: [id > 1]"), "{out}");
}

#[test]
fn a_local_cluster_reads_through_its_executors() {
    let out = spark_ok(&[
        "--cluster",
        "2",
        "end=100",
        "num_partitions=4",
        "--sql",
        &format!("SELECT count(*) AS n, sum(id) AS s FROM native.{NAME}"),
    ]);
    assert!(out.contains("|100|4950|"), "{out}");
}

#[test]
fn the_bridge_reads_the_source_through_a_view() {
    let out = spark_ok(&[
        "--bridge",
        "end=6",
        "--sql",
        &format!("SELECT count(*) AS n FROM {NAME}"),
    ]);
    assert!(out.contains("|  6|"), "{out}");
}

#[test]
fn connect_serves_the_source_to_a_connect_client() {
    let fixture = fixture();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let started = Instant::now();
    let log = tempfile::NamedTempFile::new().expect("a log file");
    // One option from a file (as a password would come), one from the command line.
    let options_file = tempfile::NamedTempFile::new().expect("an options file");
    std::fs::write(options_file.path(), "# batches\nbatch_rows=7\n").expect("write options");
    let options_arg = format!("--options-file={}", options_file.path().display());
    let mut server = fixture.spark(&["--connect", &port.to_string(), &options_arg, "end=9"]);
    std::os::unix::process::CommandExt::process_group(&mut server, 0);
    let mut child = server
        .stdout(Stdio::piped())
        .stderr(log.reopen().expect("reopen the log"))
        .spawn()
        .expect("start cargo sparkds spark --connect");
    let group = child.id();
    let stop = || {
        // The command, spark-submit and its JVM: the group the test started.
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{group}")])
            .status();
    };
    let url = server_url(child.stdout.take().expect("piped stdout"));
    let Some(url) = url else {
        stop();
        let _ = child.wait();
        panic!(
            "no URL printed; the command said:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
    };
    assert_eq!(url, format!("sc://127.0.0.1:{port}"));
    // The options reached spark-submit in a file of its own, removed once the server listens.
    let passed = repo_root().join(format!(
        "target/generated/sparkds-spark/connect-{port}.properties"
    ));
    let removed = !passed.exists();
    let client = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "from pyspark.sql import SparkSession\n\
             s = SparkSession.builder.remote('{url}').getOrCreate()\n\
             print('COUNT', s.sql('SELECT count(*) AS n FROM native.{NAME}').first().n)\n\
             s.stop()\n\
             {LEAKS}"
        ))
        .output();
    stop();
    let _ = child.wait();
    let client = client.expect("run the Connect client");
    let out = String::from_utf8_lossy(&client.stdout);
    assert!(
        removed,
        "{} is left after the server started",
        passed.display()
    );
    assert!(
        out.contains("COUNT 9") && out.contains("OPTIONS ON COMMAND LINES []"),
        "{out}\n{}\nserver:\n{}",
        String::from_utf8_lossy(&client.stderr),
        std::fs::read_to_string(log.path()).unwrap_or_default()
    );
    println!("--connect with a client query: {:.1?}", started.elapsed());
}

/// Python that prints the processes whose command line holds a source's option (`--conf
/// spark.sql.catalog.native.<key>=<value>`), as `OPTIONS ON COMMAND LINES [pids]`: any user of
/// the machine reads command lines (`ps`), and an option may be a password.
const LEAKS: &str = r#"
import os
# Split, so that a `python3 -c` running this code does not match itself.
needle = b"catalog." + b"native."
leaks = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if needle in f.read():
                leaks.append(int(pid))
    except OSError:
        pass
print("OPTIONS ON COMMAND LINES", leaks)
"#;

/// The URL that `--connect` prints once its server listens, read from its standard output.
fn server_url(stdout: std::process::ChildStdout) -> Option<String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("Spark Connect server: ") {
                let _ = sender.send(url.trim().to_string());
            }
        }
    });
    receiver.recv_timeout(Duration::from_secs(900)).ok()
}

#[test]
fn the_shell_runs_a_query_typed_in_a_terminal() {
    let fixture = fixture();
    let driver = r#"
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("cargo", ["cargo", "sparkds", "spark", "end=7"])
seen = b""
def until(token, seconds):
    global seen
    deadline = time.monotonic() + seconds
    while token not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            sys.exit("timed out waiting for %r; the terminal showed:\n%s" % (token, seen.decode(errors="replace")))
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            sys.exit("the shell ended; the terminal showed:\n" + seen.decode(errors="replace"))
        seen += chunk
until(b">>> ", 900)
os.write(fd, b"spark.sql('SELECT count(*) AS n FROM native.sc_rw').show()\n")
until(b"|  7|", 300)
until(b">>> ", 60)
os.write(fd, b"exit()\n")
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let started = Instant::now();
    let output = checked(
        Command::new("python3")
            .arg("-c")
            .arg(driver)
            .current_dir(&fixture.project)
            .env("PATH", fixture.path())
            .env("SPARKDS_CACHE_DIR", fixture.base.join("cache"))
            .env_remove("CARGO_TARGET_DIR"),
        "the shell in a pseudo-terminal",
    );
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        shown.contains(&format!("SELECT * FROM native.{NAME} LIMIT 5")),
        "the shell names what to try first:\n{shown}"
    );
    println!("the shell in a terminal: {:.1?}", started.elapsed());
}

/// A directory whose only commands are links to `tools`, found on this machine's PATH.
fn bin_with(tools: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for tool in tools {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .expect("sh runs");
        let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
        assert!(!path.is_empty(), "{tool} is not on this machine's PATH");
        std::os::unix::fs::symlink(&path, dir.path().join(tool)).expect("link a tool");
    }
    dir
}

/// Runs the installed command with only `tools` on PATH and no JAVA_HOME: it fails with one
/// error, which it returns.
fn refused_with_only(tools: &[&str]) -> String {
    let fixture = fixture();
    let bin = bin_with(tools);
    let output = Command::new(fixture.bin.join("cargo-sparkds"))
        .args(["sparkds", "spark", "--sql", "SELECT 1"])
        .current_dir(&fixture.project)
        .env("PATH", bin.path())
        .env_remove("JAVA_HOME")
        .env("SPARKDS_CACHE_DIR", fixture.base.join("cache"))
        .output()
        .expect("run cargo-sparkds");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one message:\n{stderr}");
    stderr
}

#[test]
fn without_java_one_message_names_the_jdk_to_install() {
    let said = refused_with_only(&["python3"]);
    assert!(
        said.starts_with("error: `java` not found on PATH: install a JDK 17 or later"),
        "{said}"
    );
}

#[test]
fn without_python_one_message_names_python_to_install() {
    let said = refused_with_only(&["java"]);
    assert!(
        said.starts_with("error: `python3` not found on PATH: PySpark needs Python 3.10"),
        "{said}"
    );
}
