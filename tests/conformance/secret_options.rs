//! No message of the host repeats the value of a secret option, even when the library does:
//! the fixture built with `FAULT_ECHO_SECRETS` logs its `password` and repeats a wrong one in
//! its error, and the host shows `*********(redacted)` instead, in its errors, in the library's
//! log and in every output of `sparkds`.

use crate::helpers::{error, sparkds, Fixture};

fn echoing() -> Fixture {
    Fixture::with_fault("ECHO_SECRETS")
}

#[test]
fn a_library_error_that_repeats_a_wrong_password_is_scrubbed() {
    let library = echoing().load();
    let text = error(library.batch_read().option("password", "wrong-7c41e").run());
    assert_eq!(
        text,
        "`create` failed: wrong password `*********(redacted)`"
    );
}

#[test]
fn a_library_log_that_repeats_a_password_is_scrubbed() {
    let library = echoing().own_copy("logged").load();
    let read = library
        .batch_read()
        .option("password", "open-sesame")
        .option("end", "2")
        .run()
        .expect("the right password is taken");
    assert_eq!(read.num_rows(), 2);
    let log: Vec<String> = library.log().iter().map(ToString::to_string).collect();
    assert!(
        log.contains(&"Info: create: password `*********(redacted)`".to_string()),
        "{log:?}"
    );
    assert!(
        !log.iter().any(|line| line.contains("open-sesame")),
        "{log:?}"
    );
}

#[test]
fn a_secret_value_with_a_nul_byte_is_refused_without_showing_it() {
    let library = echoing().load();
    let text = error(library.batch_read().option("token", "t0k\0en").run());
    assert_eq!(
        text,
        "the value of option `token` `*********(redacted)` contains a NUL byte; remove it"
    );
}

#[test]
fn show_and_roundtrip_report_a_wrong_password_without_its_value() {
    let lib = echoing().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    // `--scratch`: roundtrip writes with options only where the user says it may.
    for command in [&["show"][..], &["roundtrip", "--scratch"]] {
        let args = [command, &["--lib", lib, "password=wrong-90d2"]].concat();
        let (code, stdout, stderr) = sparkds(&args);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (
                2,
                "",
                "error: `create` failed: wrong password `*********(redacted)`\n"
            ),
            "{command:?}"
        );
    }
}

#[test]
fn check_reports_a_wrong_password_without_its_value_in_text_and_json() {
    let lib = echoing().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    for json in [false, true] {
        let mut args = vec!["check", "--lib", lib, "--in-process", "password=wrong-51aa"];
        if json {
            args.push("--json");
        }
        let (code, stdout, stderr) = sparkds(&args);
        assert_eq!(code, 1, "{stdout}{stderr}");
        assert!(
            stdout.contains("wrong password `*********(redacted)`"),
            "{stdout}"
        );
        assert!(
            !format!("{stdout}{stderr}").contains("wrong-51aa"),
            "{stdout}{stderr}"
        );
    }
}

#[test]
fn bench_shows_a_secret_option_redacted_in_text_and_json() {
    let lib = echoing().path();
    let lib = lib.to_str().expect("a UTF-8 path");
    for json in [false, true] {
        let mut args = vec![
            "bench",
            "--lib",
            lib,
            "--repeat",
            "1",
            "password=open-sesame",
            "end=100",
        ];
        if json {
            args.push("--json");
        }
        let (code, stdout, stderr) = sparkds(&args);
        assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
        assert!(stdout.contains("*********(redacted)"), "{stdout}");
        assert!(!stdout.contains("open-sesame"), "{stdout}");
    }
}

#[test]
fn an_argument_that_names_a_secret_without_equals_is_not_repeated() {
    let (code, _, stderr) = sparkds(&["show", "--lib", "x.so", "password:hunter2"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("an option whose key looks secret must be written key=value"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}
