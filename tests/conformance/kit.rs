//! The conformance kit (`sparkds::testing::Conformance`): the C fixture passes every check
//! that applies to it and skips the others with their reason, and each fault below fails the
//! check that it breaks, with the check, the options and the fix in the report.

use sparkds::testing::{Conformance, ConformanceReport, KitCheck, Verdict};

use crate::helpers::Fixture;

/// The faults built with the option `store`, whose writes read back.
const STORING: [&str; 3] = ["STORE_WRITES", "ABORT_PUBLISHES", "RETRY_PUBLISHED_TWICE"];

/// The kit on the fixture built with `fault`, reading with `end=20` in 3 partitions of
/// batches of 2, and writing to a store file of its own when it stores.
fn kit_report(fault: &'static str) -> ConformanceReport {
    let library = Fixture::with_fault(fault).load();
    let dir = tempfile::tempdir().expect("a directory");
    let store = dir.path().join("store").display().to_string();
    let kit = Conformance::new(&library).options([
        ("end", "20"),
        ("partitions", "3"),
        ("batch_size", "2"),
    ]);
    match STORING.contains(&fault) {
        true => kit.write_options([("store", store)]).run(),
        false => kit.run(),
    }
}

/// The text of `check`'s verdict when it failed.
fn failure(report: &ConformanceReport, check: KitCheck) -> String {
    match report.verdict(check) {
        Some(Verdict::Failed(what)) => what.clone(),
        other => panic!("{} did not fail: {other:?}\n{report}", check.name()),
    }
}

/// Asserts that only `check` failed, and that the report names it, the options and the fix.
fn fails_only(report: &ConformanceReport, check: KitCheck) -> String {
    assert_eq!(report.failed(), [check], "{report}");
    let shown = report.to_string();
    assert!(
        shown.contains(&format!("  {}: FAILED: ", check.name())),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("    fix: {}", check.fix())),
        "{shown}"
    );
    assert!(shown.contains("(\"end\", \"20\")"), "{shown}");
    failure(report, check)
}

#[test]
fn a_good_library_passes_every_check_that_applies_and_says_why_it_skips_the_others() {
    let report = kit_report("STORE_WRITES");
    assert!(report.passed(), "{report}");
    for check in KitCheck::ALL {
        let verdict = report.verdict(check).expect("every check ran");
        match check {
            KitCheck::Filters => assert_eq!(
                verdict,
                &Verdict::Skipped(
                    "the library does not push filters (its export! line does not name \
                     push_filters)"
                        .into()
                )
            ),
            _ => assert!(matches!(verdict, Verdict::Passed(_)), "{report}"),
        }
    }
    assert!(
        report.to_string().contains(
            "  empty projection: ok: a read of no column counted 20 rows\n  unknown option: ok: \
             refused with: `create` failed: unknown option `conformanceUnknownOption`"
        ),
        "{report}"
    );
}

#[test]
fn without_a_write_target_the_write_checks_are_skipped_with_the_fix() {
    let library = Fixture::good().load();
    let report = Conformance::new(&library).run();
    assert!(report.passed(), "{report}");
    for check in [KitCheck::AbortedWrite, KitCheck::RetriedAttempt] {
        let Some(Verdict::Skipped(why)) = report.verdict(check) else {
            panic!("{report}");
        };
        assert!(
            why.starts_with("no write target: give `.write_options(...)`"),
            "{why}"
        );
    }
}

#[test]
fn a_write_target_that_does_not_read_back_fails_the_write_checks() {
    // The good fixture ignores `path`: what it writes never reads back.
    let library = Fixture::good().load();
    let report = Conformance::new(&library).scratch_path().run();
    assert_eq!(
        report.failed(),
        [KitCheck::AbortedWrite, KitCheck::RetriedAttempt],
        "{report}"
    );
    assert!(failure(&report, KitCheck::AbortedWrite).starts_with(
        "a committed write of 5 rows changed what a read with the write options gives from 10 \
         to 10 rows"
    ));
}

#[test]
fn a_prune_columns_that_refuses_no_column_fails_the_empty_projection() {
    let what = fails_only(
        &kit_report("NO_EMPTY_PROJECTION"),
        KitCheck::EmptyProjection,
    );
    assert!(what.contains("prune_columns"), "{what}");
}

#[test]
fn a_library_that_ignores_an_unknown_option_fails() {
    let what = fails_only(
        &kit_report("ACCEPTS_UNKNOWN_OPTION"),
        KitCheck::UnknownOption,
    );
    assert_eq!(
        what,
        "the option `conformanceUnknownOption`, which no source has, was accepted: a misspelt \
         option would be ignored"
    );
}

#[test]
fn a_read_that_ignores_its_kill_fails_the_killed_read() {
    let what = fails_only(&kit_report("IGNORE_INTERRUPT"), KitCheck::KilledRead);
    assert!(
        what.contains("must stop within one batch (rule 23"),
        "{what}"
    );
}

#[test]
fn a_library_that_breaks_when_a_stream_is_released_early_fails_the_killed_read() {
    // The library stays broken: the checks after it fail too. Which partition meets the
    // broken state first depends on how its task threads interleave with the released one.
    let report = kit_report("BROKEN_AFTER_RELEASE");
    assert_eq!(report.failed()[0], KitCheck::KilledRead, "{report}");
    let what = failure(&report, KitCheck::KilledRead);
    let partition = what
        .strip_prefix("`read` (partition ")
        .and_then(|rest| rest.strip_suffix(") failed: a stream was released before its end"));
    assert!(
        partition.is_some_and(|p| p.parse::<usize>().is_ok()),
        "{what}"
    );
}

#[test]
fn a_read_that_ignores_its_accepted_limit_fails_the_limit() {
    let what = fails_only(&kit_report("LIMIT_IGNORED"), KitCheck::Limit);
    assert!(what.contains("rule 22"), "{what}");
}

#[test]
fn an_accepted_filter_that_keeps_other_rows_fails_the_filters() {
    let what = fails_only(&kit_report("FILTER_BROKEN_ROW"), KitCheck::Filters);
    assert!(
        what.starts_with("the read with the filter `id = "),
        "{what}"
    );
    assert!(what.contains("rule 31"), "{what}");
}

#[test]
fn the_filters_of_a_library_that_pushes_them_agree_with_sparks_evaluation() {
    let library = Fixture::c_range().load();
    let report = Conformance::new(&library).option("end", "30").run();
    let Some(Verdict::Passed(what)) = report.verdict(KitCheck::Filters) else {
        panic!("{report}");
    };
    assert!(!what.starts_with("0 of"), "{what}");
}

#[test]
fn an_abort_that_publishes_fails_the_aborted_write() {
    let what = fails_only(&kit_report("ABORT_PUBLISHES"), KitCheck::AbortedWrite);
    assert_eq!(
        what,
        "a write whose task 1 failed (aborted: true) left 10 rows, not the 5 of before"
    );
}

#[test]
fn a_commit_that_publishes_every_attempt_fails_the_retried_attempt() {
    let what = fails_only(
        &kit_report("RETRY_PUBLISHED_TWICE"),
        KitCheck::RetriedAttempt,
    );
    assert_eq!(
        what,
        "a write of 10 rows in 2 tasks, whose task 0 ran twice (attempt 0 committed but its \
         message was lost, attempt 1 committed), added 15 rows"
    );
}
