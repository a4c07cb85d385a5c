//! The crate graph of the maintainers' chapter (`book/src/maintainers/crates.md`) is the graph
//! of the manifests: each crate of `crates/` depends only on the workspace crates that its row
//! says it may import, and the table names every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use crate::helpers::repo_root;

/// Each workspace crate of `crates/` and the workspace crates among its normal and build
/// dependencies, from `cargo metadata`.
fn manifest_graph() -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let crates_dir = repo_root().join("crates");
    let ours: BTreeSet<String> = packages
        .iter()
        .filter(|p| {
            p["manifest_path"]
                .as_str()
                .unwrap_or("")
                .starts_with(crates_dir.to_str().unwrap())
        })
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .filter(|p| ours.contains(p["name"].as_str().unwrap()))
        .map(|p| {
            let imports = p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|name| ours.contains(name))
                .collect();
            (p["name"].as_str().unwrap().to_string(), imports)
        })
        .collect()
}

/// The rows of the book's table: crate -> what it may import.
fn book_graph() -> BTreeMap<String, BTreeSet<String>> {
    let page = std::fs::read_to_string(repo_root().join("book/src/maintainers/crates.md"))
        .expect("book/src/maintainers/crates.md");
    let table = page
        .split("<!-- crate-graph: the test reads this table -->")
        .nth(1)
        .expect("the page marks its crate table");
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    table
        .lines()
        .skip_while(|line| line.trim().is_empty())
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.trim_matches('|').split('|').collect();
            let name = cells[0].trim().trim_matches('`').to_string();
            (name, names(cells.last().expect("a May import cell")))
        })
        .collect()
}

#[test]
fn each_crate_imports_only_what_the_maintainers_chapter_allows() {
    let manifests = manifest_graph();
    let book = book_graph();
    assert_eq!(
        manifests.keys().collect::<Vec<_>>(),
        book.keys().collect::<Vec<_>>(),
        "the crates of crates/ and the rows of book/src/maintainers/crates.md differ"
    );
    for (name, imports) in &manifests {
        let allowed = &book[name];
        let extra: Vec<_> = imports.difference(allowed).collect();
        assert!(
            extra.is_empty(),
            "{name} depends on {extra:?}, which its row in book/src/maintainers/crates.md does \
             not allow: change the dependency, or the table (and the chapter's reasons) with it"
        );
    }
}

#[test]
fn the_allowed_imports_have_no_circle() {
    let book = book_graph();
    // Each crate's row may only name crates of earlier rows: the table is in import order.
    let mut seen = BTreeSet::new();
    let order: Vec<&String> = {
        let page = std::fs::read_to_string(repo_root().join("book/src/maintainers/crates.md"))
            .expect("the page");
        let mut rows: Vec<(usize, &String)> = book
            .keys()
            .map(|name| (page.find(&format!("| `{name}` |")).expect("row"), name))
            .collect();
        rows.sort();
        rows.into_iter().map(|(_, name)| name).collect()
    };
    for name in order {
        let later: Vec<_> = book[name].difference(&seen).collect();
        assert!(
            later.is_empty(),
            "{name} may import {later:?}, which come after it: a circle is possible"
        );
        seen.insert(name.clone());
    }
}
