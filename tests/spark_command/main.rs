//! Tests: spark_command. `cargo sparkds spark` as a user runs it: the command installed with
//! `cargo install --locked --path crates/cargo-sparkds` (the README's way, into a root of this
//! binary), in a project generated from the template in a scratch directory, on real Spark (the
//! pyspark of python3): `--sql`, a write read back and a pushed filter (`--python`), `--connect`
//! with Connect clients (with the run's token, without it, with a wrong one), a port taken by
//! another process, Ctrl-C while the server starts, `--cluster 2`, `--bridge`, the interactive
//! shell in a pseudo-terminal, and the one message for a missing Java or Python; and `check` and
//! `roundtrip` on the generated project, which leave a table they did not create as it is.
//!
//! The tests share one generated project (the read-write variant with `push_filters`) and one
//! cache (`SPARKDS_CACHE_DIR`: the test runner's, else `target/spark_command/cache`), so the
//! plugin is built by the first command that needs it and reused by the others, as on a user's
//! machine. The command, installed from this checkout, records no released plugin: it builds
//! the JNI library of the project's SDK (a path) in the cache's target directory, which is where
//! the tool is installed from too, so that the JNI build reuses the dependencies they share; the
//! project builds in `target/generated` beside the template's tests' projects, so a second run
//! rebuilds nothing and a first one builds each dependency as few times as it can.
//! Each test starts one Spark at most; they run in parallel.

#![cfg(unix)]

#[allow(dead_code)]
#[path = "../support/checked.rs"]
mod checked;
#[path = "../support/checkout.rs"]
mod checkout;
mod processes;
#[path = "../support/run_dir.rs"]
mod run_dir;
mod secured;

use checked::checked;
use processes::{in_group as processes_in_group, stop_group};
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
    /// The cache of `cargo sparkds spark`.
    cache: PathBuf,
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
        let cache = std::env::var_os("SPARKDS_CACHE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| base.join("cache"));
        let root = base.join("tool");
        checked(
            Command::new("cargo")
                .args(["install", "--locked", "--quiet", "--path"])
                .arg(repo_root().join("crates/cargo-sparkds"))
                .arg("--root")
                .arg(&root)
                .arg("--target-dir")
                .arg(cache.join("jni-target")),
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
        // build reuses their dependencies: set in its cargo configuration, as a user would.
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
            cache,
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
            .env("SPARKDS_CACHE_DIR", &self.cache)
            .env_remove("CARGO_TARGET_DIR")
            .stdin(Stdio::null());
        command
    }

    /// `cargo sparkds <args>` in the project, with the installed command first on PATH.
    fn sparkds(&self, args: &[&str]) -> std::process::Output {
        Command::new("cargo")
            .arg("sparkds")
            .args(args)
            .current_dir(&self.project)
            .env("PATH", self.path())
            .env_remove("CARGO_TARGET_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("run cargo sparkds")
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
    let cache = fixture().cache.clone();
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
fn check_and_roundtrip_leave_a_table_they_did_not_create_as_it_is() {
    let fixture = fixture();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let table = dir.path().join("people");
    let path = format!("path={}", table.display());
    // The user's table, with rows (written by the command, told that it may).
    let made = fixture.sparkds(&["roundtrip", "--release", "--scratch", &path]);
    assert!(made.status.success(), "{made:?}");
    let before = tree(&table);
    assert!(before.len() > 1, "{before:?}");
    let check = fixture.sparkds(&["check", "--release", &path]);
    let out = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{check:?}");
    assert!(
        out.contains(
            "truncate-write     not run: it would replace what the option `path` points at, \
             which `check` did not create"
        ),
        "{out}"
    );
    let roundtrip = fixture.sparkds(&["roundtrip", "--release", "--mode", "truncate", &path]);
    let said = String::from_utf8_lossy(&roundtrip.stderr);
    assert_eq!(roundtrip.status.code(), Some(2), "{roundtrip:?}");
    assert!(
        said.contains(
            "error: roundtrip would write sample rows into what the option `path` points at, \
             replacing what is there (--mode truncate), and writes only where nothing is lost"
        ),
        "{said}"
    );
    assert_eq!(tree(&table), before, "the table changed");
}

#[test]
fn check_writes_into_directories_it_creates() {
    let check = fixture().sparkds(&["check", "--release"]);
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{check:?}");
    assert!(out.ends_with("all protocols passed\n"), "{out}");
}

/// Every file under `dir` and its bytes.
fn tree(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    files
}

#[test]
fn a_local_cluster_reads_through_its_executors() {
    let started = std::time::SystemTime::now();
    let out = spark_ok(&[
        "--cluster",
        "2",
        "end=100",
        "num_partitions=4",
        "--sql",
        &format!("SELECT count(*) AS n, sum(id) AS s FROM native.{NAME}"),
    ]);
    assert!(out.contains("|100|4950|"), "{out}");
    // The executors' logs (in $SPARK_HOME/work, which may be a shared pyspark's folder) are
    // the user's alone.
    let readable = readable_by_others_since(&secured::spark_home().join("work"), started);
    assert!(readable.is_empty(), "others may read {readable:?}");
}

/// The files and folders under `dir` changed since `since` that other users may read.
fn readable_by_others_since(dir: &Path, since: std::time::SystemTime) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                dirs.push(entry.path());
            }
            let recent = meta.modified().is_ok_and(|m| m >= since);
            if recent && meta.permissions().mode() & 0o044 != 0 {
                found.push(entry.path());
            }
        }
    }
    found
}

#[test]
fn connect_serves_the_source_to_a_client_with_its_token_only() {
    let fixture = fixture();
    let port = free_port();
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
    let url = server_url(child.stdout.take().expect("piped stdout"));
    let Some(url) = url else {
        stop_group(group);
        let _ = child.wait();
        panic!(
            "no URL printed; the command said:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
    };
    let token = url
        .strip_prefix(&format!("sc://localhost:{port}/;token="))
        .unwrap_or_default()
        .to_string();
    // The options and the token reached spark-submit in a file of its own, removed once the
    // server listens.
    let passed = properties_file(port);
    let removed = !passed.exists();
    // Another user cannot listen on [::1]:PORT, where a client of `localhost` may go first.
    let foreign = secured::ipv6_listener(port, 1)
        .output()
        .expect("run the [::1] listener");
    let foreign = String::from_utf8_lossy(&foreign.stdout).into_owned();
    let listening = processes::listening(&processes::of_group(group));
    // The client gets the URL in its environment: a command line is every user's to read.
    let client = |url: &str| {
        Command::new("python3")
            .arg("-c")
            .arg(format!(
                "import os\n\
                 from pyspark.sql import SparkSession\n\
                 try:\n\
                 \x20   s = SparkSession.builder.remote(os.environ['SPARKDS_TEST_URL']).create()\n\
                 \x20   print('COUNT', s.sql('SELECT count(*) AS n FROM native.{NAME}').first().n)\n\
                 \x20   s.stop()\n\
                 except Exception as e:\n\
                 \x20   print('REFUSED', ' '.join(str(e).split()) or type(e).__name__)\n\
                 {LEAKS}"
            ))
            .env("SPARKDS_TEST_URL", url)
            .env("SPARKDS_TEST_TOKEN", &token)
            .env_remove("SPARK_CONNECT_AUTHENTICATE_TOKEN")
            .output()
            .expect("run the Connect client")
    };
    let with_token = client(&url);
    let without = client(&format!("sc://localhost:{port}"));
    let wrong = client(&format!("sc://localhost:{port}/;token={}", "0".repeat(64)));
    let readable = world_readable_files_holding(&token, started, &[]);
    stop_group(group);
    let _ = child.wait();
    let said = |output: &std::process::Output| {
        format!(
            "{}{}\nserver:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            std::fs::read_to_string(log.path()).unwrap_or_default()
        )
    };
    assert_eq!(token.len(), 64, "the URL printed: {url}");
    assert!(
        removed,
        "{} is left after the server started",
        passed.display()
    );
    let out = String::from_utf8_lossy(&with_token.stdout);
    assert!(
        out.contains("COUNT 9") && out.contains("OPTIONS ON COMMAND LINES []"),
        "{}",
        said(&with_token)
    );
    // The server's words for each: no token at all, or another one.
    for (refused, why) in [
        (&without, "No authentication token provided"),
        (&wrong, "Invalid authentication token"),
    ] {
        let out = String::from_utf8_lossy(&refused.stdout);
        assert!(
            out.contains("REFUSED") && out.contains(why),
            "{}",
            said(refused)
        );
    }
    assert!(readable.is_empty(), "the token is in {readable:?}");
    assert!(
        foreign.starts_with("TAKEN") || !secured::has_ipv6_loopback(),
        "another user listened on [::1]:{port}: {foreign}"
    );
    let beyond: Vec<_> = listening
        .iter()
        .filter(|s| !processes::is_loopback(&s.address))
        .collect();
    assert!(
        listening.iter().any(|s| s.port == port) && beyond.is_empty(),
        "the server listens beyond loopback, or not on {port}: {listening:#?}"
    );
    println!("--connect with three clients: {:.1?}", started.elapsed());
}

#[test]
fn connect_prints_nothing_when_another_process_listens_on_its_port_first() {
    let fixture = fixture();
    let port = free_port();
    let mut server = fixture.spark(&["--connect", &port.to_string(), "end=3"]);
    std::os::unix::process::CommandExt::process_group(&mut server, 0);
    let mut child = server
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cargo sparkds spark --connect");
    let group = child.id();
    let stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
    let (said, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = said.send(line);
        }
    });
    // The command says which Spark it starts, then checks that the port is free and starts
    // it, which takes seconds: the port is taken in between, as another user could.
    let mut messages = Vec::new();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(900)) {
        let starting = line.starts_with("sparkds: Spark ");
        messages.push(line);
        if starting {
            break;
        }
    }
    std::thread::sleep(Duration::from_secs(1));
    let deadline = Instant::now() + Duration::from_secs(30);
    let taken = loop {
        match std::net::TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => break Some(listener),
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let mut stdout = String::new();
    let _ =
        std::io::Read::read_to_string(&mut child.stdout.take().expect("piped stdout"), &mut stdout);
    let status = child.wait().expect("the command ends");
    stop_group(group);
    messages.extend(lines.try_iter());
    let messages = messages.join("\n");
    assert!(taken.is_some(), "the port stayed busy:\n{messages}");
    assert_eq!(status.code(), Some(2), "{stdout}\n{messages}");
    assert!(
        messages.contains(&format!(
            "error: another process listens on port {port} of 127.0.0.1, not the Spark Connect \
             server that this command started: the server was stopped and its URL, which holds \
             its token, not printed; pass another port with --connect PORT"
        )),
        "{messages}"
    );
    assert!(!stdout.contains("sc://"), "{stdout}");
}

#[test]
fn ctrl_c_removes_the_file_that_holds_the_token_and_stops_the_server() {
    let fixture = fixture();
    let port = free_port();
    let log = tempfile::NamedTempFile::new().expect("a log file");
    let options_file = tempfile::NamedTempFile::new().expect("an options file");
    std::fs::write(options_file.path(), "password=ctrl-c-7f3e\n").expect("write options");
    let options_arg = format!("--options-file={}", options_file.path().display());
    let mut server = fixture.spark(&["--connect", &port.to_string(), &options_arg]);
    std::os::unix::process::CommandExt::process_group(&mut server, 0);
    let mut child = server
        .stdout(Stdio::null())
        .stderr(log.reopen().expect("reopen the log"))
        .spawn()
        .expect("start cargo sparkds spark --connect");
    let group = child.id();
    let passed = properties_file(port);
    let deadline = Instant::now() + Duration::from_secs(900);
    while !passed.exists() && Instant::now() < deadline && child.try_wait().ok().flatten().is_none()
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mode = std::fs::metadata(&passed)
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777);
    // Ctrl-C, to the command alone: the server starts, and the file is still there.
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let ended = wait_for(&mut child, Duration::from_secs(120));
    let left = passed.exists();
    // The JVM that the command started ends too, with no one left in the group.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !processes_in_group(group).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let lingering = processes_in_group(group);
    stop_group(group);
    let _ = child.wait();
    let said = std::fs::read_to_string(log.path()).unwrap_or_default();
    assert_eq!(mode.ok(), Some(0o600), "{}: {said}", passed.display());
    assert!(ended, "the command did not end after Ctrl-C: {said}");
    assert!(!left, "{} is left after Ctrl-C", passed.display());
    assert!(lingering.is_empty(), "still running: {lingering:?}");
}

/// A free port of 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Where `--connect PORT` writes the server's properties: the project's target directory.
fn properties_file(port: u16) -> PathBuf {
    repo_root().join(format!(
        "target/generated/sparkds-spark/connect-{port}.properties"
    ))
}

/// Whether `child` ends within `limit`.
fn wait_for(child: &mut std::process::Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// The files that every user may read and that hold `secret`: in the project's target
/// directory, where the command writes, and those made since `since` in the temporary
/// directory, where Spark writes, and in `also` (a local cluster's work directory).
fn world_readable_files_holding(secret: &str, since: Instant, also: &[PathBuf]) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let age = since.elapsed();
    let mut found = Vec::new();
    let mut dirs = vec![
        (repo_root().join("target/generated/sparkds-spark"), false),
        (std::env::temp_dir(), true),
    ];
    dirs.extend(also.iter().map(|dir| (dir.clone(), true)));
    while let Some((dir, recent_only)) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else {
                continue;
            };
            let recent = meta
                .modified()
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|a| a <= age);
            if recent_only && !recent {
                continue;
            }
            if meta.is_dir() {
                dirs.push((entry.path(), recent_only));
            } else if meta.is_file()
                && meta.permissions().mode() & 0o004 != 0
                && meta.len() < 64 << 20
                && std::fs::read(entry.path())
                    .is_ok_and(|bytes| bytes.windows(secret.len()).any(|w| w == secret.as_bytes()))
            {
                found.push(entry.path());
            }
        }
    }
    found
}

/// Python that prints the processes whose command line holds a source's option (`--conf
/// spark.sql.catalog.native.<key>=<value>`), or the token in SPARKDS_TEST_TOKEN, as `OPTIONS ON
/// COMMAND LINES [pids]`: any user of the machine reads command lines (`ps`), and an option may
/// be a password or a token.
const LEAKS: &str = r#"
import os
# Split, so that a `python3 -c` running this code does not match itself.
needles = [b"catalog." + b"native."]
if os.environ.get("SPARKDS_TEST_TOKEN"):
    needles.append(os.environ["SPARKDS_TEST_TOKEN"].encode())
leaks = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            line = f.read()
            if any(needle in line for needle in needles):
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
            .env("SPARKDS_CACHE_DIR", &fixture.cache)
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
        .env("SPARKDS_CACHE_DIR", &fixture.cache)
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
