//! The example on real Spark 4.3 (`tests/spark`, pytest): through the JVM plugin and through
//! the bridge of `python/`, against Python's sqlite3 on a generated database. It fails, rather
//! than skips, without pyspark or Java (`.ci/install` installs them).

use std::path::Path;
use std::process::Command;

#[test]
fn reads_and_writes_on_spark_as_pythons_sqlite3_sees_them() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = sparkds::cdylib("spark_datasource_sqlite").expect("cargo test built the library");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(example.join("tests").join("spark"))
        .env("SPARKDS_SQLITE_LIBRARY", library)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.to_string_lossy()));
    assert!(
        output.status.success(),
        "the sqlite example failed on Spark (pytest examples/sqlite/tests/spark):\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
