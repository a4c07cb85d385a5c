//! The chapter "Conformance rules" (`book/src/reference/rules.md`) and the code stay in step:
//! every rule that the code cites has its section, the host's table (`sparkds::rules::RULES`)
//! and the chapter's headings agree. (That a fixture breaks each rule is the conformance
//! suite's own test, `tests/conformance/coverage.rs`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sparkds::rules::{Rule, RULES};

use crate::helpers;

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
