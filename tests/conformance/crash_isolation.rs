//! A library that aborts the process is reported by a check that runs in a child process.

use sparkds::check::{Check, Outcome, Protocol};

use crate::helpers::{sparkds_binary, Fixture};

#[test]
fn an_escaping_panic_is_reported_not_fatal() {
    let report = Check::new(Fixture::rust_panic().path())
        .protocols([Protocol::Load])
        .isolated(sparkds_binary())
        .run();
    let expected = if cfg!(unix) {
        "`create` aborted the process (signal 6): a panic or exception crossed the interface (rule 9: no panic or exception crosses the interface; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-9)"
    } else {
        "`create` aborted the process (exit code 0xc0000409): a panic or exception crossed the interface (rule 9: no panic or exception crosses the interface; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-9)"
    };
    assert_eq!(
        report.results,
        vec![(Protocol::Load, Outcome::Failed(expected.to_string()))]
    );
}

#[test]
fn an_isolated_check_of_a_good_library_passes() {
    let report = Check::new(Fixture::good().path())
        .isolated(sparkds_binary())
        .run();
    assert!(report.passed(), "{report}");
}

#[test]
fn a_cpp_exception_escaping_get_next_is_reported_not_fatal() {
    let report = Check::new(Fixture::cpp_exception().path())
        .isolated(sparkds_binary())
        .run();
    if cfg!(unix) {
        insta::assert_snapshot!("cpp_exception_check", report.to_string());
    }
    assert_eq!(report.failures(), 1);
}
