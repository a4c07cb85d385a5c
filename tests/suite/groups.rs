//! The groups of the suite: every test binary of the workspace, as `cargo test --no-run` builds
//! them, and the doc tests, longest first.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The groups by how long they take, longest first (seconds on two quiet cores, roughly): the
/// longest start first so that the workers end close together. A group not listed runs after
/// these, in cargo's order.
const LONGEST_FIRST: &[&str] = &[
    "book",
    "lines",
    "examples",
    "cluster",
    "spark_command",
    "jvm",
    "hardening",
    "spark",
    "postgres_example/spark",
    "template",
    "connect",
    "text_files/library",
    "packaging",
    "doc-tests",
    "conformance",
];

/// A group: one process, run in its package's directory as `cargo test` runs it.
pub struct Group {
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub directory: PathBuf,
    pub env: Vec<(String, String)>,
}

/// Builds every test binary of the workspace (the compiler's messages go to the terminal) and
/// returns the groups in the order they should start.
pub fn build_all() -> Result<Vec<Group>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut child = Command::new(&cargo)
        .args(["test", "--workspace", "--locked", "--no-run"])
        .args(["--message-format", "json-render-diagnostics"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{cargo} test --no-run`: {e}"))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let mut groups = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| format!("reading cargo's messages: {e}"))?;
        if let Some(group) = test_binary(&line) {
            groups.push(group);
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`cargo test --workspace --locked --no-run` failed ({status})"
        ));
    }
    groups.push(Group {
        name: "doc-tests".to_string(),
        program: PathBuf::from(&cargo),
        args: ["test", "--workspace", "--locked", "--doc"]
            .map(String::from)
            .to_vec(),
        directory: std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?,
        env: Vec::new(),
    });
    let rank: HashMap<&str, usize> = LONGEST_FIRST
        .iter()
        .enumerate()
        .map(|(i, name)| (*name, i))
        .collect();
    groups.sort_by_key(|g| rank.get(g.name.as_str()).copied().unwrap_or(usize::MAX));
    Ok(groups)
}

/// The group of a `compiler-artifact` message of a test binary; `None` for any other message.
fn test_binary(line: &str) -> Option<Group> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
        return None;
    }
    let executable = PathBuf::from(message["executable"].as_str()?);
    let manifest = PathBuf::from(message["manifest_path"].as_str()?);
    let directory = manifest.parent()?.to_path_buf();
    let package = package_name(message["package_id"].as_str()?)?;
    let target = message["target"]["name"].as_str()?;
    let is_lib = message["target"]["kind"]
        .as_array()?
        .iter()
        .any(|k| k == "lib" || k == "cdylib" || k == "rlib");
    let name = if package == "template-tests" {
        target.to_string()
    } else if is_lib {
        package.clone()
    } else {
        format!("{package}/{target}")
    };
    let env = vec![
        (
            "CARGO_MANIFEST_DIR".to_string(),
            directory.display().to_string(),
        ),
        ("CARGO_PKG_NAME".to_string(), package),
    ];
    Some(Group {
        name,
        program: executable,
        args: Vec::new(),
        directory,
        env,
    })
}

/// The package's name in a package id: `path+file:///dir/tests#template-tests@0.1.0`, or
/// `path+file:///dir/crates/sparkds#0.1.0` when the directory is named after the package.
fn package_name(id: &str) -> Option<String> {
    let (url, fragment) = id.split_once('#')?;
    match fragment.split_once('@') {
        Some((name, _)) => Some(name.to_string()),
        None => url.rsplit('/').next().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_named_by_its_id_with_or_without_a_name_in_the_fragment() {
        let named = "path+file:///work/tests#template-tests@0.1.0";
        assert_eq!(package_name(named).as_deref(), Some("template-tests"));
        let by_directory = "path+file:///work/crates/sparkds#0.1.0";
        assert_eq!(package_name(by_directory).as_deref(), Some("sparkds"));
        assert_eq!(package_name("registry+https://x/y"), None);
    }

    #[test]
    fn a_test_binary_of_the_suite_is_named_by_its_target_and_others_by_their_package() {
        let message = |package: &str, target: &str, kind: &str| {
            serde_json::json!({
                "reason": "compiler-artifact",
                "package_id": package,
                "manifest_path": "/work/tests/Cargo.toml",
                "target": {"name": target, "kind": [kind]},
                "profile": {"test": true},
                "executable": "/work/target/debug/deps/x-0123",
            })
            .to_string()
        };
        let jvm = test_binary(&message(
            "path+file:///work/tests#template-tests@0.1.0",
            "jvm",
            "test",
        ))
        .expect("a group");
        assert_eq!(jvm.name, "jvm");
        let unit = test_binary(&message(
            "path+file:///work/crates/sparkds#0.1.0",
            "sparkds",
            "lib",
        ))
        .expect("a group");
        assert_eq!(unit.name, "sparkds");
        let postgres = "path+file:///work/examples/postgres#postgres_example@0.1.0";
        let spark = test_binary(&message(postgres, "spark", "test")).expect("a group");
        assert_eq!(spark.name, "postgres_example/spark");
        let library = "{\"reason\":\"compiler-artifact\",\"profile\":{\"test\":false}}";
        assert!(test_binary(library).is_none());
    }
}
