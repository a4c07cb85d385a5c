//! The example on real Spark 4.3 (`tests/spark`, pytest): through the JVM plugin and through
//! the bridge of `python/`, against the issues API of `tests/common/issues.rs`, which this test
//! serves while pytest runs. It fails, rather than skips, without pyspark or Java
//! (`.ci/install` installs them).

#[path = "common/issues.rs"]
mod issues;

use std::path::Path;
use std::process::Command;

/// Issues of the Spark tests: 26 pages of 100.
const COUNT: u64 = 2_550;

#[test]
fn reads_on_spark_as_the_api_gives_its_issues() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = sparkds::cdylib("spark_datasource_rest").expect("cargo test built the library");
    let server = issues::serve(COUNT).expect("the issues API starts");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(example.join("tests").join("spark"))
        .env("SPARKDS_REST_LIBRARY", library)
        .env("SPARKDS_REST_URL", server.url())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.to_string_lossy()));
    assert!(
        output.status.success(),
        "the rest example failed on Spark (pytest examples/rest/tests/spark):\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
