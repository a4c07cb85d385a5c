//! The chapter "Conformance rules" (`book/src/reference/rules.md`) and the code stay in step:
//! every rule that the code cites has its section, the host's table (`sparkds::rules::RULES`)
//! and the chapter's headings agree, and every rule that a host can check has a fixture of
//! `tests/conformance` that breaks it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sparkds::rules::{Rule, RULES};

use crate::helpers;

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

fn chapter() -> String {
    std::fs::read_to_string(helpers::src_dir().join("reference/rules.md"))
        .expect("book/src/reference/rules.md is readable")
}

/// The headings of the chapter's rules: (number, title, anchor), from `### Rule N: title {#id}`.
fn rule_headings(chapter: &str) -> Vec<(u32, String, String)> {
    helpers::prose_lines(chapter)
        .into_iter()
        .filter_map(|(_, line)| {
            let heading = line.strip_prefix("### Rule ")?;
            let id = helpers::heading_id(heading)?;
            let (title, _) = heading.rsplit_once(" {#")?;
            let (number, title) = title.split_once(": ")?;
            Some((number.parse().ok()?, title.to_string(), id.to_string()))
        })
        .collect()
}

#[test]
fn the_chapter_has_a_section_for_each_rule_of_the_host_with_its_title_and_anchor() {
    let headings = rule_headings(&chapter());
    let expected: Vec<(u32, String, String)> = RULES
        .iter()
        .map(|rule: &Rule| (rule.number, rule.title.to_string(), rule.anchor()))
        .collect();
    assert_eq!(
        headings, expected,
        "book/src/reference/rules.md: one `### Rule N: title {{#rule-N}}` per rule of \
         sparkds::rules::RULES, in order, with the same title"
    );
    for rule in RULES {
        assert_eq!(
            rule.link(),
            format!(
                "{}reference/rules.html#rule-{}",
                sparkds::rules::BOOK_URL.unwrap_or_default(),
                rule.number
            ),
            "the chapter moved: the messages point to {}",
            rule.link()
        );
    }
    // The Python bridge cites rules on its own (it has no Rust to call): the same address.
    let bridge =
        std::fs::read_to_string(helpers::repo_root().join("python/spark_native_bridge/_native.py"))
            .expect("python/spark_native_bridge/_native.py");
    let rules_url = format!(
        "RULES_URL = \"{}reference/rules.html\"",
        sparkds::rules::BOOK_URL.unwrap_or_default()
    );
    assert!(
        bridge.contains(&rules_url),
        "python/spark_native_bridge/_native.py: the bridge's rule citations must read `{rules_url}`"
    );
}

#[test]
fn every_rule_that_the_code_cites_has_a_section_in_the_chapter() {
    let sections: BTreeSet<u32> = rule_headings(&chapter()).iter().map(|h| h.0).collect();
    let root = helpers::repo_root();
    let mut problems = Vec::new();
    let mut cited = 0;
    for file in sources(&root) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (line, number) in citations(&text) {
            cited += 1;
            if !sections.contains(&number) {
                problems.push(format!(
                    "{}:{line}: rule {number} has no section `{{#rule-{number}}}` in \
                     book/src/reference/rules.md (nor an entry in sparkds::rules::RULES)",
                    file.strip_prefix(&root).unwrap_or(&file).display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(cited > 50, "the scan found only {cited} citations of rules");
}

/// The code that names rules: the crates, the Python bridge and the JVM plugin. The table of
/// rules itself (`rules.rs`) is checked against the chapter by the test above.
fn sources(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["crates", "python/spark_native_bridge", "jvm/src"] {
        walk(&root.join(dir), &mut files);
    }
    files.retain(|f| {
        f.extension()
            .is_some_and(|e| e == "rs" || e == "py" || e == "java" || e == "c" || e == "h")
            && !f.ends_with("crates/sparkds/src/rules.rs")
    });
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n != "target" && n != "build")
            {
                walk(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

/// The rules that `text` cites, with their lines: `rule 13`, `rules 1-4`, `rules 11 to 17`,
/// `rules 7, 8`, `Rules 14 and 12`, the second argument of `Violation::new(function, 13, ...)`
/// and of `fail(13, ...)`, and constants `RULE...: u32 = 13`.
fn citations(text: &str) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        for (at, _) in lower.match_indices("rule") {
            let rest = &lower[at + 4..];
            let rest = rest.strip_prefix('s').unwrap_or(rest);
            if let Some(list) = rest.strip_prefix(' ') {
                out.extend(numbers_of_a_list(list).into_iter().map(|n| (i + 1, n)));
            }
            if let Some((_, value)) = rest.split_once(": u32 = ") {
                out.extend(leading_number(value).map(|n| (i + 1, n)));
            }
        }
        for call in ["fail(", "violation("] {
            for (at, _) in line.match_indices(call) {
                out.extend(leading_number(&line[at + call.len()..]).map(|n| (i + 1, n)));
            }
        }
    }
    // `Violation::new(function, 13, ...)`, whose arguments may span lines.
    for (at, _) in text.match_indices("Violation::new(") {
        let args = &text[at + "Violation::new(".len()..];
        let Some((first, rest)) = args.split_once(',') else {
            continue;
        };
        if first.contains('(') {
            continue;
        }
        if let Some(n) = leading_number(rest.trim_start()) {
            out.push((text[..at].lines().count(), n));
        }
    }
    out
}

/// The number at the start of `s`, followed by a `,`, `)` or white space.
fn leading_number(s: &str) -> Option<u32> {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    let after = s[digits.len()..].chars().next();
    if digits.is_empty() || !after.is_none_or(|c| matches!(c, ',' | ')' | ';' | ' ' | '\n')) {
        return None;
    }
    digits.parse().ok()
}

/// `13`, `1-4`, `11 to 17`, `7, 8`, `14 and 12` at the start of `s`.
fn numbers_of_a_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(first) = digits.parse::<u32>() else {
            return out;
        };
        rest = &rest[digits.len()..];
        let range_end = rest
            .strip_prefix('-')
            .or_else(|| rest.strip_prefix(" to "))
            .and_then(|r| {
                let d: String = r.chars().take_while(char::is_ascii_digit).collect();
                Some((d.parse::<u32>().ok()?, &r[d.len()..]))
            });
        match range_end {
            Some((last, after)) => {
                out.extend(first..=last);
                rest = after;
            }
            None => out.push(first),
        }
        match rest
            .strip_prefix(", ")
            .or_else(|| rest.strip_prefix(" and "))
        {
            Some(next) if next.starts_with(|c: char| c.is_ascii_digit()) => rest = next,
            _ => return out,
        }
    }
}

#[test]
fn citations_are_read_in_each_form_the_code_uses() {
    let text =
        "checks (rule 13)\n// rules 1-4 and rules 11 to 12\n/// Rules 14 and 12, rules 7, 8.\n\
                return self.fail(20, m);\nconst RULE_ROWS: u32 = 31;\n\
                Violation::new(\n    \"read\",\n    25,\n    m)\nthe rules of verify\n";
    let numbers: Vec<u32> = citations(text).into_iter().map(|(_, n)| n).collect();
    assert_eq!(numbers, [13, 1, 2, 3, 4, 11, 12, 14, 12, 7, 8, 20, 31, 25]);
}

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
    let chapter = chapter();
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
    walk(&helpers::repo_root().join("tests/conformance"), &mut files);
    let mut tests = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
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
