//! Tests: perf. The performance guard: the headline ratios of the book's performance chapters
//! (the JVM plugin against spark.range and against the bridge, a pushed needle against Spark's
//! floor, text_files against Spark's CSV reader, PostgreSQL against Spark's JDBC source),
//! measured side by side in one Spark session by `guard.py`, each against the ratio recorded in
//! `book/src/performance/data/ratios.tsv`. The group fails, with both figures, when a ratio falls
//! under three quarters of its record: ratios, not times, since the machines are shared.
//!
//! The libraries and the plugin's jar are release builds, as users run them: `guard.py` builds
//! them (`cargo build --release`, `jvm/build.sh`), which a run's first time costs minutes.

use std::path::Path;
use std::process::Command;

#[test]
fn no_headline_ratio_falls_by_more_than_a_quarter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let output = Command::new(python)
        .arg(root.join("tests/perf/guard.py"))
        .current_dir(root)
        // Release builds of their own: not the suite's dev libraries or its flags.
        .env_remove("RUSTFLAGS")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The figures, for the run's log whether it passes or not.
    println!("{stdout}");
    let measured: Vec<&str> = stderr.lines().filter(|l| l.contains(" ratio ")).collect();
    println!("{}", measured.join("\n"));
    assert!(
        output.status.success(),
        "the performance guard failed ({}):\n{stdout}\n{}",
        output.status,
        stderr
            .lines()
            .rev()
            .take(40)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
