//! The rules that the host checks, by number: the one table that every [`Violation`] cites, and
//! the book's chapter that explains each rule (`book/src/reference/rules.md`, "Conformance
//! rules"), which a test of the book keeps in step with this table.
//!
//! A message names its rule by number and title and points to the rule's section of that
//! chapter, as rustc's `error[E0308]` points to `--explain`: "... (rule 13: offset 0 at every
//! level; see <https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-13>)".
//!
//! [`Violation`]: crate::Violation

/// A rule of the interface: its number, which never changes, and its short title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The number of the rule, from 1; messages and the book name it.
    pub number: u32,
    /// What the rule asks, in a few words.
    pub title: &'static str,
}

/// The root of the published book, ending with `/`: the release workflow publishes it to GitHub
/// Pages (the `homepage` of the workspace's Cargo.toml), and every message gives the full
/// address of its rule's section. `None` would make messages give the chapter's path inside the
/// book instead (what follows the root, such as `reference/rules.html`).
pub const BOOK_URL: Option<&str> = Some("https://sparkds.github.io/spark-datasource-template/");

/// The chapter of the rules, relative to the root of the built book.
pub const CHAPTER: &str = "reference/rules.html";

/// Every rule, in order: `RULES[n - 1]` is rule `n`.
pub const RULES: [Rule; 32] = [
    rule(1, "`spark_ds_init` returns one table"),
    rule(2, "the table's size covers version 1"),
    rule(3, "an ABI version the host supports"),
    rule(4, "declared capabilities are implemented"),
    rule(5, "`SparkDsHost` is read within its size"),
    rule(6, "signatures match the header"),
    rule(7, "a failure sets `last_error`"),
    rule(8, "out-parameters untouched on failure"),
    rule(9, "no panic or exception crosses the interface"),
    rule(10, "sinks are called only during the call"),
    rule(11, "each Arrow struct is released exactly once"),
    rule(12, "batches pass full validation"),
    rule(13, "offset 0 at every level"),
    rule(14, "string and binary offsets start at 0"),
    rule(15, "an exact `null_count`"),
    rule(16, "the batch is a struct without nulls"),
    rule(17, "no null in a non-nullable column"),
    rule(18, "only the types of version 1"),
    rule(19, "the stream's schema is the one asked for"),
    rule(20, "buffers aligned to their element width"),
    rule(21, "each handle is closed exactly once"),
    rule(22, "a pushed limit and a pruned schema are honoured"),
    rule(23, "a killed task stops within one batch"),
    rule(24, "writes are visible only after `commit`"),
    rule(25, "a replayed offset range gives the same rows"),
    rule(26, "an empty projection works"),
    rule(27, "the options Spark adds are accepted"),
    rule(28, "the reader state carries what executors need"),
    rule(29, "a valid filter table"),
    rule(30, "`push_filters` answers once, one byte per filter"),
    rule(31, "returned rows satisfy the accepted filters"),
    rule(32, "a replayed pushdown gets the same answer"),
];

const fn rule(number: u32, title: &'static str) -> Rule {
    Rule { number, title }
}

/// The rule numbered `number`, or `None` when there is no such rule.
///
/// ```
/// let rule = sparkds::rules::rule_numbered(13).expect("rule 13 exists");
/// assert_eq!(rule.title, "offset 0 at every level");
/// ```
pub fn rule_numbered(number: u32) -> Option<&'static Rule> {
    let index = usize::try_from(number).ok()?.checked_sub(1)?;
    RULES.get(index)
}

impl Rule {
    /// The anchor of the rule's section in the chapter: `rule-13`.
    pub fn anchor(&self) -> String {
        format!("rule-{}", self.number)
    }

    /// Where the rule is explained: the address of its section in the published book
    /// ([`BOOK_URL`]), or `reference/rules.html#rule-13` inside the book without one.
    pub fn link(&self) -> String {
        format!("{}{CHAPTER}#{}", BOOK_URL.unwrap_or(""), self.anchor())
    }
}

/// How a message names rule `number`, with the address of its section: "rule 13: offset 0 at
/// every level; see `<BOOK_URL>reference/rules.html#rule-13`". A number without a rule is named
/// alone ("rule 99").
///
/// ```
/// assert_eq!(
///     sparkds::rules::cite(13),
///     "rule 13: offset 0 at every level; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-13"
/// );
/// ```
pub fn cite(number: u32) -> String {
    match rule_numbered(number) {
        Some(rule) if BOOK_URL.is_some() => {
            format!("rule {number}: {}; see {}", rule.title, rule.link())
        }
        Some(rule) => format!(
            "rule {number}: {}; see the book, {}",
            rule.title,
            rule.link()
        ),
        None => format!("rule {number}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_numbered_from_1_in_order() {
        for (i, rule) in RULES.iter().enumerate() {
            assert_eq!(rule.number as usize, i + 1, "{rule:?}");
            assert_eq!(rule_numbered(rule.number), Some(rule));
        }
        assert_eq!(rule_numbered(0), None);
        assert_eq!(rule_numbered(RULES.len() as u32 + 1), None);
    }

    #[test]
    fn a_title_is_short_and_fits_inside_a_message() {
        for rule in RULES {
            assert!(rule.title.len() <= 50, "{rule:?}: shorten the title");
            assert!(!rule.title.contains([';', '(', ')', '.']), "{rule:?}");
            assert!(!rule.title.starts_with(char::is_uppercase), "{rule:?}");
        }
    }

    #[test]
    fn an_unknown_rule_is_named_by_its_number_alone() {
        let unknown = RULES.len() as u32 + 1;
        assert_eq!(cite(unknown), format!("rule {unknown}"));
    }
}
