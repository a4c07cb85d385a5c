//! The error classes: every class the plugin, the JNI library or the bridge can raise has a row
//! with an anchor in the errors chapter, and the address the plugin's messages end with is the
//! book's.

use std::collections::BTreeSet;
use std::path::Path;

use crate::helpers;

/// The chapter where each class has its row.
const CHAPTER: &str = "book/src/jvm/errors.md";

/// The anchor of a class, as `NativeDataSourceException.link` writes it.
fn anchor(class: &str) -> String {
    class.to_lowercase().replace(['.', '_'], "-")
}

/// The error classes written in the sources under `dir`: `NATIVE_DATA_SOURCE_...` and
/// `INVALID_NATIVE_DATA_SOURCE_LIBRARY.<SUBCLASS>` between quotes.
fn classes_in(dir: &Path, found: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            classes_in(&path, found);
            continue;
        }
        let source = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("rs" | "java" | "py")
        );
        if !source {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for (at, _) in text
            .match_indices("\"NATIVE_DATA_SOURCE_")
            .chain(text.match_indices("\"INVALID_NATIVE_DATA_SOURCE_LIBRARY."))
        {
            let class: String = text[at + 1..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || *c == '_' || *c == '.')
                .collect();
            found.insert(class.trim_end_matches('.').to_string());
        }
    }
}

#[test]
fn every_error_class_has_a_row_with_its_anchor_in_the_errors_chapter() {
    let root = helpers::repo_root();
    let mut classes = BTreeSet::new();
    for dir in [
        "crates/sparkds-jni/src",
        "jvm/src/main",
        "python/spark_native_bridge",
    ] {
        classes_in(&root.join(dir), &mut classes);
    }
    assert!(
        classes.contains("INVALID_NATIVE_DATA_SOURCE_LIBRARY.AMBIGUOUS")
            && classes.contains("NATIVE_DATA_SOURCE_INVALID_OFFSET"),
        "the scan of the sources found too few classes: {classes:?}"
    );
    let chapter = std::fs::read_to_string(root.join(CHAPTER)).expect(CHAPTER);
    let missing: Vec<&String> = classes
        .iter()
        .filter(|class| {
            !chapter.contains(&format!("| <a id=\"{}\"></a>`{class}` |", anchor(class)))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{CHAPTER}: no row `| <a id=\"<anchor>\"></a>`CLASS` | meaning | what to do |` for {missing:?}"
    );
}

#[test]
fn the_plugin_s_messages_link_to_the_book_s_errors_chapter() {
    let java = "jvm/src/main/java/dev/sparkds/spark/NativeDataSourceException.java";
    let text = std::fs::read_to_string(helpers::repo_root().join(java)).expect(java);
    let url = format!(
        "\"{}jvm/errors.html\"",
        sparkds::rules::BOOK_URL.unwrap_or_default()
    );
    assert!(
        text.contains(&url),
        "{java}: ERRORS_URL must be {url}, the errors chapter of the book"
    );
}

#[test]
fn every_package_rule_has_a_row_with_its_anchor_in_the_manifest_chapter() {
    let chapter_path = "book/src/reference/manifest.md";
    let chapter =
        std::fs::read_to_string(helpers::repo_root().join(chapter_path)).expect(chapter_path);
    use sparkds_package::verify::Rule;
    let missing: Vec<&str> = Rule::ALL
        .iter()
        .filter(|rule| {
            !chapter.contains(&format!(
                "| <a id=\"{}\"></a>`{}` |",
                rule.anchor(),
                rule.name()
            ))
        })
        .map(|rule| rule.name())
        .collect();
    assert!(
        missing.is_empty(),
        "{chapter_path}: no row `| <a id=\"package-<name>\"></a>`<name>` | what holds | fix |` for {missing:?}"
    );
    assert_eq!(
        sparkds_package::verify::RULES_URL,
        format!(
            "{}reference/manifest.html",
            sparkds::rules::BOOK_URL.unwrap_or_default()
        )
    );
}
