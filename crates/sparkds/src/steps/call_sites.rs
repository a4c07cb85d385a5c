//! The steps are the one place of this crate that calls a function of the library's table:
//! each function is read from the table at one site (a presence check, `is_some()`, is not a
//! call). The whole-protocol runs, the JNI library and `cargo sparkds bench` (which sums the
//! time of each call with a `CallObserver`) drive the protocol through them.

use std::collections::BTreeMap;
use std::path::Path;

/// The functions of `SparkDsLibrary`, and the file that calls each: the steps, else the
/// loader (`create`, `last_error`, the `close` functions when a handle drops) and the calls
/// shared by the steps (`schema`, `read`). The filter extension's `push_filters` is called by
/// `calls::push_filters` alone.
const FUNCTIONS: [(&str, &str); 28] = [
    ("last_error", "library.rs"),
    ("create", "library.rs"),
    ("schema", "calls.rs"),
    ("create_reader", "steps/driver.rs"),
    ("create_stream_reader", "steps/driver.rs"),
    ("create_writer", "steps/driver.rs"),
    ("close", "library.rs"),
    ("push_limit", "steps/driver.rs"),
    ("prune_columns", "steps/driver.rs"),
    ("partitions", "steps/driver.rs"),
    ("serialize_reader", "steps/driver.rs"),
    ("close_reader", "library.rs"),
    ("initial_offset", "steps/driver.rs"),
    ("latest_offset", "steps/driver.rs"),
    ("stream_partitions", "steps/driver.rs"),
    ("serialize_stream_reader", "steps/driver.rs"),
    ("commit_offset", "steps/driver.rs"),
    ("close_stream_reader", "library.rs"),
    ("read", "calls.rs"),
    ("serialize_writer", "steps/driver.rs"),
    ("commit", "steps/driver.rs"),
    ("abort", "steps/driver.rs"),
    ("close_writer", "library.rs"),
    ("create_data_writer", "steps/executor.rs"),
    ("write", "steps/executor.rs"),
    ("commit_data_writer", "steps/executor.rs"),
    ("abort_data_writer", "steps/executor.rs"),
    ("close_data_writer", "library.rs"),
];

fn sources(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("the crate's sources are readable") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .strip_prefix(root)
            .expect("under src")
            .to_string_lossy();
        let name = name.replace('\\', "/");
        if path.is_dir() {
            sources(&path, root, out);
        } else if name.ends_with(".rs") && name != "steps/call_sites.rs" {
            let text = std::fs::read_to_string(&path).expect("a source file is readable");
            out.push((name, text));
        }
    }
}

/// The sites that read `function` from the table, `table.f` or `table().f` not followed by
/// more of a name, outside presence checks and comments.
fn sites(function: &str, files: &[(String, String)]) -> Vec<String> {
    let patterns = [format!("table.{function}"), format!("table().{function}")];
    let mut found = Vec::new();
    for (name, text) in files {
        for (number, line) in text.lines().enumerate() {
            let presence = ["is_some()", "is_none()", "Some(_)"]
                .iter()
                .any(|p| line.contains(p));
            let code = line.trim_start();
            if presence || code.starts_with("//") {
                continue;
            }
            for pattern in &patterns {
                let mut rest = line;
                while let Some(at) = rest.find(pattern.as_str()) {
                    let after = &rest[at + pattern.len()..];
                    let whole = !after.starts_with(|c: char| c == '_' || c.is_alphanumeric());
                    if whole {
                        found.push(format!("{name}:{}", number + 1));
                    }
                    rest = after;
                }
            }
        }
    }
    found
}

#[test]
fn every_header_function_is_called_from_one_site() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let mut wrong = BTreeMap::new();
    for (function, file) in FUNCTIONS {
        let found = sites(function, &files);
        let one_in_place = found.len() == 1 && found[0].starts_with(&format!("{file}:"));
        if !one_in_place {
            wrong.insert(function, found);
        }
    }
    assert!(
        wrong.is_empty(),
        "each function of the table is called from one site, in the file named in FUNCTIONS \
         (call it through the steps instead of from the table): {wrong:#?}"
    );
}
