//! Every rule of the host (`sparkds::rules::RULES`) is broken by a fixture of this suite and
//! seen reported, or the book's rules chapter says why no host can check it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sparkds::rules::RULES;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The tests of `tests/conformance` that break each rule, and see it reported.
const BROKEN_BY: &[(u32, &[&str])] = &[
    (1, &["a_library_without_spark_ds_init_is_refused"]),
    (2, &["a_table_smaller_than_version_1_is_refused"]),
    (3, &["another_abi_version_is_refused"]),
    (
        4,
        &[
            "a_declared_capability_with_a_null_required_function_is_reported",
            "functions_beyond_the_table_size_are_ignored",
        ],
    ),
    (7, &["an_error_without_a_message_is_reported"]),
    (8, &["a_failure_that_writes_its_out_parameter_is_reported"]),
    (
        9,
        &[
            "an_escaping_panic_is_reported_not_fatal",
            "show_reports_a_library_that_aborts_the_process",
        ],
    ),
    (
        10,
        &[
            "a_sink_called_after_its_call_is_reported",
            "a_sink_called_from_another_thread_is_reported",
        ],
    ),
    (
        11,
        &[
            "a_batch_that_write_never_releases_is_reported",
            "a_borrowed_schema_that_write_releases_is_reported",
        ],
    ),
    (12, &["a_batch_that_fails_full_validation_is_reported"]),
    (13, &["a_sliced_array_is_reported"]),
    (
        14,
        &["string_offsets_that_do_not_start_at_zero_are_reported"],
    ),
    (
        15,
        &[
            "an_unknown_null_count_is_reported",
            "an_inexact_null_count_is_reported",
        ],
    ),
    (
        16,
        &[
            "a_null_row_in_the_batch_struct_is_reported",
            "a_column_shorter_than_its_batch_is_reported",
        ],
    ),
    (17, &["a_null_in_a_non_nullable_column_is_reported"]),
    (18, &["a_large_string_type_is_reported"]),
    (
        19,
        &[
            "a_stream_that_ignores_the_pruned_columns_is_reported",
            "an_end_of_stream_that_does_not_repeat_is_reported",
        ],
    ),
    (20, &["a_misaligned_buffer_is_reported"]),
    (
        21,
        &[
            "a_null_handle_returned_with_success_is_reported",
            "a_data_writer_handed_to_two_tasks_at_once_is_reported",
        ],
    ),
    (22, &["an_exceeded_limit_is_reported"]),
    (23, &["a_task_that_ignores_its_kill_is_reported"]),
    (
        25,
        &["a_range_that_reads_other_rows_when_replayed_is_reported"],
    ),
    (
        26,
        &["an_empty_projection_that_prune_columns_refuses_is_reported"],
    ),
    (
        27,
        &[
            "a_refused_path_option_is_reported",
            "a_path_option_refused_by_a_write_is_reported",
        ],
    ),
    (28, &["a_pruning_kept_outside_the_reader_state_is_reported"]),
    (29, &["a_filter_table_too_small_is_reported_when_loading"]),
    (
        30,
        &[
            "a_sink_called_twice_is_reported",
            "an_answer_of_the_wrong_length_is_reported",
            "an_answer_other_than_0_or_1_is_reported",
        ],
    ),
    (31, &["a_row_that_breaks_an_accepted_filter_is_reported"]),
    (
        32,
        &["a_pushdown_answered_otherwise_when_replayed_is_reported"],
    ),
];

/// The rules that no host can check, wholly: what they are about does not cross the interface.
/// The chapter says so in their sections ("Not checked by a host"), with what covers them. Rules
/// 8 and 20 have a half of that kind too (Arrow out-parameters on failure, buffer lengths); their
/// other half has a fixture above.
const NOT_CHECKED_BY_A_HOST: &[(u32, &str)] = &[
    (
        5,
        "a read of `SparkDsHost` beyond its size leaves no trace the host sees",
    ),
    (
        6,
        "a shared library records no C types: compilers check signatures",
    ),
    (24, "visibility before `commit` is in the source's storage"),
];

/// Rules that a host could check and whose breaking fixture is still to write. A rule leaves
/// this list when a test of `tests/conformance` breaks it (and goes into [`BROKEN_BY`]).
const WITHOUT_A_FIXTURE_YET: &[(u32, &str)] = &[];

#[test]
fn every_rule_has_a_fixture_that_breaks_it_or_says_why_not() {
    let tests = conformance_tests();
    let mut problems = Vec::new();
    let mut accounted = BTreeSet::new();
    for (rule, names) in BROKEN_BY {
        accounted.insert(*rule);
        if names.is_empty() {
            problems.push(format!("rule {rule}: no test named"));
        }
        for name in *names {
            match tests.iter().find(|(n, _)| n == name) {
                None => problems.push(format!(
                    "rule {rule}: tests/conformance has no test `{name}`"
                )),
                Some((_, body)) if !mentions_rule(body, *rule) => problems.push(format!(
                    "rule {rule}: the test `{name}` does not assert a message of rule {rule}"
                )),
                Some(_) => {}
            }
        }
    }
    let chapter = std::fs::read_to_string(manifest_dir().join("../book/src/reference/rules.md"))
        .expect("book/src/reference/rules.md is readable");
    for (rule, why) in NOT_CHECKED_BY_A_HOST {
        if !accounted.insert(*rule) {
            problems.push(format!("rule {rule} is listed twice"));
        }
        let section = section(&chapter, *rule);
        if !section.contains("**Not checked by a host**") {
            problems.push(format!(
                "rule {rule} is not checked by a host ({why}), and its section must say so \
                 with **Not checked by a host**"
            ));
        }
    }
    for (rule, why) in WITHOUT_A_FIXTURE_YET {
        if !accounted.insert(*rule) {
            problems.push(format!(
                "rule {rule} has a fixture now: remove it from WITHOUT_A_FIXTURE_YET ({why})"
            ));
        }
    }
    for rule in RULES {
        if !accounted.contains(&rule.number) {
            problems.push(format!(
                "rule {} ({}): no test of tests/conformance breaks it; write a fixture that \
                 does, and name its test in BROKEN_BY, or say in NOT_CHECKED_BY_A_HOST and in \
                 the chapter why no host can check it",
                rule.number, rule.title
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The section of rule `number` in the chapter: from its heading to the next heading.
fn section(chapter: &str, number: u32) -> String {
    let heading = format!("### Rule {number}: ");
    let Some(start) = chapter.find(&heading) else {
        return String::new();
    };
    let body = &chapter[start + heading.len()..];
    let end = body.find("\n#").unwrap_or(body.len());
    body[..end].to_string()
}

/// Whether `body` names rule `number`: `(rule 13`, or the rule's constant.
fn mentions_rule(body: &str, number: u32) -> bool {
    let cited = format!("rule {number}");
    body.match_indices(&cited)
        .any(|(at, _)| !body[at + cited.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// The tests of `tests/conformance`: each `#[test]` function's name and body (up to the next
/// test).
fn conformance_tests() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&manifest_dir().join("conformance"), &mut files);
    let mut tests = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable test file");
        let parts: Vec<&str> = text.split("#[test]").skip(1).collect();
        for part in parts {
            let Some(after) = part.split_once("fn ").map(|(_, a)| a) else {
                continue;
            };
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            tests.push((name, part.to_string()));
        }
    }
    tests
}
