//! Tests: hosts. A Spark standalone cluster of hosts on one machine, with no shared disk: each
//! host a network namespace on a private subnet of the run, joined to a switch of its own by a
//! veth pair, with its own hostname and a mount namespace where the checkout, the other hosts'
//! directories, the caches and `/tmp` are out of sight (`hosts.py`). The client host runs the
//! drivers and serves the plugin's Maven repository over HTTP; the master host Spark's Master, two
//! worker hosts a Worker each (`cluster.py`, with the scripts of `deploy/` that the book's
//! chapter "Deploying to a cluster" shows); the postgres host PostgreSQL 15 with TLS; a fifth host
//! Workers without the cluster's secret. Everything is installed as a user installs it: the plugin
//! by `--packages` from that repository, the data sources by `--files` with their `.sparkpkg`.
//!
//! This binary builds what the hosts get and names it for pytest: examples/c_range
//! (`SPARK_E2E_C_RANGE_LIBRARY`), examples/postgres (`SPARKDS_POSTGRES_LIBRARY`), `cargo-sparkds`,
//! which makes the packages (`SPARKDS_BIN`), and the Maven repository of the plugin by
//! `jvm/maven.sh` with the suite's JNI library (`SPARKDS_HOSTS_MAVEN`, its version in
//! `SPARKDS_HOSTS_VERSION`). Then one pytest process runs `test_cluster.py`, whose applications
//! share the cluster, and `test_failures.py`, which cuts a Worker host off and kills another.
//!
//! On a machine that refuses network or mount namespaces (not root, no `ip netns`), it says so
//! on its output and passes without running anything else: only there.

// The spark binary's helpers: this group builds no generated project, which they can also do.
#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod helpers;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use helpers::{checked, Pytest, Repository};

#[test]
fn the_hosts_suite_passes_on_a_cluster_of_namespaces() {
    let repository = Repository::locate();
    if let Some(why) = refused(&repository) {
        let message = format!(
            "SKIPPED: the hosts group did not run, this machine refuses what its hosts need: \
             {why}"
        );
        shown(&message);
        return;
    }
    let started = Instant::now();
    let work = tempfile::Builder::new()
        .prefix("sparkds-hosts-build-")
        .tempdir()
        .expect("a temporary directory");
    let jni = built(
        "CARGO_CDYLIB_FILE_SPARKDS_JNI",
        &repository,
        "sparkds-jni",
        |t| t.join("libsparkds_jni.so"),
    );
    let (maven, version) = maven_repository(&repository, work.path(), &jni);
    let c_range = repository.build_c_range();
    let postgres = built(
        "CARGO_CDYLIB_FILE_POSTGRES_EXAMPLE",
        &repository,
        "postgres_example",
        |t| t.join("libspark_datasource_postgres.so"),
    );
    let sparkds = built(
        "CARGO_BIN_EXE_cargo-sparkds",
        &repository,
        "cargo-sparkds",
        |t| t.join("cargo-sparkds"),
    );
    let built_in = started.elapsed().as_secs_f64();
    let report = work.path().join("report.txt");
    Pytest::new(&repository)
        .suite("tests/hosts/test_cluster.py")
        .suite("tests/hosts/test_failures.py")
        .env("SPARK_E2E_C_RANGE_LIBRARY", &c_range)
        .env("SPARKDS_POSTGRES_LIBRARY", &postgres)
        .env("SPARKDS_BIN", &sparkds)
        .env("SPARKDS_HOSTS_MAVEN", &maven)
        .env("SPARKDS_HOSTS_VERSION", Path::new(&version))
        .env("SPARKDS_HOSTS_REPORT", &report)
        .run();
    let report = std::fs::read_to_string(&report).unwrap_or_default();
    shown(&format!(
        "built the plugin's Maven repository and the libraries: {built_in:.1} s\n{report}\
         the hosts group: {:.1} s",
        started.elapsed().as_secs_f64()
    ));
}

/// Writes `message` to the standard error of the process, which the test harness does not
/// capture (it captures `println!` and `eprintln!` of a passing test): a skip, what each host
/// saw and the figures of the run are in the group's log however it ends.
fn shown(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

/// Why this machine cannot make the hosts, as `hosts.refused()` says (root, `ip netns`,
/// `unshare --mount --uts`), or `None`.
fn refused(repository: &Repository) -> Option<String> {
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let probe = "import sys; sys.path.insert(0, 'tests/hosts'); import hosts; \
                 print(hosts.refused() or '')";
    let output = checked(
        Command::new(&python)
            .args(["-c", probe])
            .current_dir(repository.path("")),
        "python3 tests/hosts/hosts.py's refused()",
    );
    let why = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (!why.is_empty()).then_some(why)
}

/// The file that `variable` names (the suite's compilation built it), else `cargo build -p
/// package` in the shared target directory, and the file `file` names in its `debug/`.
fn built(
    variable: &str,
    repository: &Repository,
    package: &str,
    file: impl Fn(&Path) -> PathBuf,
) -> PathBuf {
    if let Some(path) = std::env::var_os(variable) {
        return PathBuf::from(path);
    }
    checked(
        Command::new(env!("CARGO"))
            .args(["build", "--locked", "-p", package])
            .current_dir(repository.path("")),
        &format!("cargo build -p {package}"),
    );
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository.path("target"));
    file(&target.join("debug"))
}

/// The plugin's Maven repository, as the release builds it (`jvm/maven.sh`, here with the JNI
/// library `jni`, dev profile): its directory and the plugin's version.
fn maven_repository(repository: &Repository, work: &Path, jni: &Path) -> (PathBuf, String) {
    let maven = work.join("maven");
    let output = checked(
        Command::new("bash")
            .arg(repository.path("jvm/maven.sh"))
            .args(["--profile", "dev", "--out"])
            .arg(&maven)
            .env("CARGO_CDYLIB_FILE_SPARKDS_JNI", jni)
            // Where jvm/build.sh writes the jar before maven.sh copies it (nothing is compiled
            // by cargo: the JNI library is given).
            .env("CARGO_TARGET_DIR", work.join("target")),
        "jvm/maven.sh",
    );
    let record = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let version = record
        .split_whitespace()
        .nth(1)
        .and_then(|coordinates| coordinates.rsplit(':').next())
        .unwrap_or_else(|| {
            panic!("jvm/maven.sh printed `{record}`, not `<line> <coordinates> <sha>`")
        })
        .to_string();
    (maven, version)
}
