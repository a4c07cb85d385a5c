//! The `sparkds` command: `show`, `roundtrip` and `check`, and clear errors for bad input.

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
    let (code, stdout, stderr) = sparkds(&["roundtrip", "--lib", lib, "end=4"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    insta::assert_snapshot!("roundtrip", stdout);
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
        "error: `create` aborted the process (signal 6): a panic or exception crossed the interface (rule 9)\n"
    } else {
        "error: `create` aborted the process (exit code 0xc0000409): a panic or exception crossed the interface (rule 9)\n"
    };
    assert!(stderr.ends_with(expected), "{stderr}");
}
