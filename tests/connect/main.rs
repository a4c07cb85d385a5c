//! Tests: connect. The JVM plugin behind a Spark Connect server (pyspark 4.3's
//! `SparkConnectServer`, local mode), driven only by PySpark's Connect client: reads, writes,
//! streams, SQL, errors as the client sees them, packages per session, and the Python bridge
//! registered from a client.
//!
//! This binary builds the plugin's jar with `jvm/build.sh --profile dev`, the c_range example
//! and the generated read-write variant of the Spark suite, then runs the pytest suite of
//! `tests/connect`, which starts one server for all its tests and stops it at the end. It needs
//! what `tests/jvm` needs, plus the Connect client's packages of `tests/spark/requirements.txt`.

#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod spark_helpers;

use std::path::PathBuf;
use std::process::Command;

use spark_helpers::{Pytest, Repository};

#[test]
fn the_spark_connect_suite_passes_against_a_local_server() {
    let repository = Repository::locate();
    let jar = build_jar(&repository);
    let c_range = repository.build_c_range();
    let writer = repository.generate_and_build_writer_variant();
    Pytest::new(&repository)
        .suite("tests/connect")
        .env("SPARKDS_JVM_JAR", &jar)
        .env("SPARK_E2E_C_RANGE_LIBRARY", &c_range)
        .env("SPARK_E2E_WRITER_LIBRARY", &writer)
        .run();
}

/// `jvm/build.sh --profile dev`, which prints the jar's path and nothing else on stdout.
fn build_jar(repository: &Repository) -> PathBuf {
    let script = repository.path("jvm/build.sh");
    let output = Command::new("bash")
        .arg(&script)
        .args(["--profile", "dev"])
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", script.display()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "jvm/build.sh failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(stdout.trim())
}
