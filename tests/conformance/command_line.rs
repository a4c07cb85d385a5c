//! The `sparkds` command: `show`, `roundtrip`, `check` and `bench`, and clear errors for bad input.

use crate::helpers::{sparkds, Fixture};

#[test]
fn show_prints_the_schema_and_the_rows() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&["show", "--lib", lib, "--rows", "3", "end=5"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    insta::assert_snapshot!("show", stdout);
}

#[test]
fn show_prunes_and_limits() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, _) = sparkds(&["show", "--lib", lib, "--columns", "name", "--limit", "3"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("show_pruned", stdout);
}

#[test]
fn roundtrip_writes_then_reads_back() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&["roundtrip", "--lib", lib, "--scratch", "end=4"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    insta::assert_snapshot!("roundtrip", stdout);
}

#[test]
fn roundtrip_refuses_options_that_are_not_marked_as_scratch() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let table = tempfile::tempdir().expect("a directory");
    let path = format!("path={}", table.path().display());
    for (mode, what) in [
        ("append", ""),
        ("truncate", ", replacing what is there (--mode truncate)"),
    ] {
        let (code, stdout, stderr) = sparkds(&[
            "roundtrip",
            "--lib",
            lib,
            "--mode",
            mode,
            &path,
            "db.password=hunter2",
        ]);
        assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: roundtrip would write sample rows into what the options `path`, \
                 `db.password` point at{what}, and writes only where nothing is lost: leave the \
                 options out, and it writes into an empty directory that it creates (given as \
                 `path`), or add --scratch if that may be overwritten\n"
            )
        );
    }
}

#[test]
fn roundtrip_without_options_writes_into_a_directory_it_creates() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&["roundtrip", "--lib", lib]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert!(
        stdout.starts_with(
            "wrote 6 rows in 2 tasks into an empty directory that roundtrip created as `path` \
             (removed at the end):\n"
        ),
        "{stdout}"
    );
}

#[test]
fn check_does_not_run_the_writes_where_options_point_unless_marked_as_scratch() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    // In child processes, as by default, and in this one.
    for in_process in [false, true] {
        let mut args = vec!["check", "--lib", lib, "end=5"];
        if in_process {
            args.push("--in-process");
        }
        let (code, stdout, _) = sparkds(&args);
        assert_eq!(code, 1, "{stdout}");
        insta::with_settings!({filters => vec![(lib, "[LIB]")]}, {
            insta::assert_snapshot!("check_not_scratch", stdout);
        });
        args.push("--scratch");
        let (code, stdout, stderr) = sparkds(&args);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert!(stdout.ends_with("all protocols passed\n"), "{stdout}");
    }
}

#[test]
fn check_exits_with_1_on_a_violation() {
    let lib = Fixture::with_fault("NULL_ROW").path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, _) = sparkds(&["check", "--lib", lib]);
    assert_eq!(code, 1);
    insta::with_settings!({filters => vec![(lib, "[LIB]")]}, {
        insta::assert_snapshot!("check_null_row", stdout);
    });
}

#[test]
fn an_option_without_equals_is_explained() {
    let (code, _, stderr) = sparkds(&["show", "--lib", "x.so", "end"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("option `end` must be written key=value, such as `end=20`"),
        "{stderr}"
    );
}

#[test]
fn a_missing_library_is_explained() {
    let (code, _, stderr) = sparkds(&["show", "--lib", "/nonexistent/libspark_datasource_x.so"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: cannot load the library `/nonexistent/libspark_datasource_x.so`: the file does not exist; build the library first (cargo build), or pass the path of the built .so, .dylib or .dll\n"
    );
}

#[test]
fn an_unknown_command_is_explained() {
    let (code, _, stderr) = sparkds(&["shwo"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unrecognized subcommand 'shwo'"),
        "{stderr}"
    );
}

#[test]
fn show_reports_a_library_that_aborts_the_process() {
    let lib = Fixture::rust_panic().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&["show", "--lib", lib]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    let expected = if cfg!(unix) {
        "error: `create` aborted the process (signal 6): a panic or exception crossed the interface (rule 9: no panic or exception crosses the interface; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-9)\n"
    } else {
        "error: `create` aborted the process (exit code 0xc0000409): a panic or exception crossed the interface (rule 9: no panic or exception crosses the interface; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-9)\n"
    };
    assert!(stderr.ends_with(expected), "{stderr}");
}

#[test]
fn show_without_lib_builds_the_cargo_package_of_the_current_directory() {
    let package = tempfile::tempdir().expect("a temporary directory");
    std::fs::create_dir(package.path().join("src")).expect("src");
    std::fs::write(
        package.path().join("Cargo.toml"),
        "[package]\nname = \"panicking\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [lib]\nname = \"spark_datasource_panicking\"\ncrate-type = [\"cdylib\"]\n\n[workspace]\n",
    )
    .expect("Cargo.toml");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/conformance/fixtures/panic.rs"),
        package.path().join("src/lib.rs"),
    )
    .expect("src/lib.rs");
    let output = std::process::Command::new(crate::helpers::sparkds_binary())
        .arg("show")
        .current_dir(package.path())
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("sparkds runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    // The library that cargo built is the one loaded: its `create` panics.
    assert!(stderr.contains("`create` aborted the process"), "{stderr}");
}

#[test]
fn check_gives_a_scoped_option_to_its_protocols_only() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, _) = sparkds(&["check", "--lib", lib, "--in-process", "write:end=ten"]);
    assert_eq!(code, 1, "{stdout}");
    insta::with_settings!({filters => vec![(lib, "[LIB]")]}, {
        insta::assert_snapshot!("check_scoped_option", stdout);
    });
}

#[test]
fn bench_measures_each_read_with_and_without_the_checks() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&["bench", "--lib", lib, "end=1000"]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    let header = stdout
        .lines()
        .find(|line| line.starts_with("protocol"))
        .expect("a header row");
    for column in [
        "rows/s",
        "Arrow bytes/s",
        "batches/s",
        "in library",
        "in host",
        "peak RSS",
    ] {
        assert!(header.contains(column), "{stdout}");
    }
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|cells| cells.first() == Some(&"batch-read"))
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    // protocol, checks, then the exact number of rows.
    assert_eq!(rows[0][..3], ["batch-read", "on", "1000"], "{stdout}");
    assert_eq!(rows[1][..3], ["batch-read", "off", "1000"], "{stdout}");
    // The fixture streams too: its micro-batches are measured, both ways.
    let micro_batches = stdout
        .lines()
        .filter(|line| line.split_whitespace().next() == Some("micro-batch-read"))
        .count();
    assert_eq!(micro_batches, 2, "{stdout}");
    assert!(
        stdout.contains("batch-read: the checks make the read"),
        "{stdout}"
    );
}

#[test]
fn bench_prints_json_with_every_figure() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, stdout, stderr) = sparkds(&[
        "bench",
        "--lib",
        lib,
        "--json",
        "--no-checks",
        "--protocol",
        "batch-read",
        "--repeat",
        "2",
        "--columns",
        "id",
        "end=1000",
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("the report is JSON");
    assert_eq!(report["repeat"], 2);
    assert_eq!(report["columns"], serde_json::json!(["id"]));
    let measures = report["measures"].as_array().expect("measures");
    assert_eq!(measures.len(), 1, "{stdout}");
    let measure = &measures[0];
    assert_eq!(measure["protocol"], "batch-read");
    assert_eq!(measure["checks"], false);
    assert_eq!(measure["rows"], 1000);
    for field in [
        "batches",
        "arrow_bytes",
        "seconds",
        "library_seconds",
        "host_seconds",
        "rows_per_second",
        "arrow_bytes_per_second",
        "batches_per_second",
    ] {
        assert!(measure[field].is_number(), "{field} in {stdout}");
    }
    // 1000 values of 8 bytes, at least.
    assert!(measure["arrow_bytes"].as_u64() >= Some(8000), "{stdout}");
    let rss = &measure["peak_rss_bytes"];
    assert!(rss.is_number() || rss.is_null(), "{stdout}");
}

#[test]
fn bench_names_a_column_that_is_not_there() {
    let lib = Fixture::good().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    let (code, _, stderr) = sparkds(&["bench", "--lib", lib, "--columns", "nope", "end=10"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("column `nope` is not in the schema (id, name)"),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn the_checks_child_processes_get_the_options_on_standard_input_not_on_their_command_line() {
    use sparkds::check::{Check, Outcome, Protocol};
    use std::os::unix::fs::PermissionsExt;
    // A stand-in for the child, which records its arguments and its standard input.
    let dir = tempfile::tempdir().expect("a directory");
    let child = dir.path().join("child.sh");
    std::fs::write(
        &child,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{0}/args'\ncat > '{0}/stdin'\n\
             echo '[[\"load\",{{\"passed\":\"declares nothing\"}}]]'\n",
            dir.path().display()
        ),
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&child, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let report = Check::new(Fixture::good().path())
        .option("password", "hunter2-5e1f")
        .protocols([Protocol::Load])
        .isolated(&child)
        .run();
    assert_eq!(
        report.results,
        vec![(
            Protocol::Load,
            Outcome::Passed("declares nothing".to_string())
        )]
    );
    let args = std::fs::read_to_string(dir.path().join("args")).expect("the arguments");
    assert!(
        !args.contains("hunter2") && args.lines().any(|a| a == "--options-stdin"),
        "{args}"
    );
    let stdin = std::fs::read_to_string(dir.path().join("stdin")).expect("the input");
    assert_eq!(stdin, r#"[["password","hunter2-5e1f"]]"#);
}
