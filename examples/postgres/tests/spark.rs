//! The example on real Spark 4.3 (`tests/spark`, pytest): through the JVM plugin and through
//! the bridge of `python/`, beside Spark's own JDBC source on a PostgreSQL server of the tests'
//! own. It fails, rather than skips, without pyspark, Java, PostgreSQL or its JDBC driver
//! (`.ci/install` installs them).

use std::path::Path;
use std::process::Command;

#[test]
fn reads_and_writes_on_spark_as_its_jdbc_source_does() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The library that this `cargo test` built, as the plugin and the bridge load it.
    let library =
        sparkds::cdylib("spark_datasource_postgres").expect("cargo test built the library");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(example.join("tests").join("spark"))
        .env("SPARKDS_POSTGRES_LIBRARY", library)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.to_string_lossy()));
    assert!(
        output.status.success(),
        "the postgres example failed on Spark (pytest examples/postgres/tests/spark):\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
