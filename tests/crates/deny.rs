//! `cargo deny` on this repository's workspace and on a generated project: the licences, bans and
//! sources of their dependency graphs against `deny.toml` and `template/deny.toml`, offline. The
//! advisories need the RustSec database from the network: the generated CI checks them.

use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

use crate::helpers::repo_root;
use crate::helpers::workflows::cargo_generate_available;

/// Whether `cargo deny` can be run here (`.ci/install` installs it).
fn cargo_deny_available() -> bool {
    let available = Command::new("cargo")
        .args(["deny", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        assert!(
            std::env::var_os("CI").is_none(),
            "cargo-deny is not installed: CI must install it (.ci/install)"
        );
        eprintln!("cargo-deny is not installed: the dependency policy is not checked");
    }
    available
}

/// Runs `cargo deny --offline --locked check licenses bans sources` in `dir` and returns its
/// report when it fails.
fn deny_offline(dir: &Path) -> Result<(), String> {
    let output = Command::new("cargo")
        .args(["deny", "--offline", "--locked", "--color", "never"])
        .args(["check", "licenses", "bans", "sources"])
        .current_dir(dir)
        .output()
        .expect("cargo deny runs");
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{}{}\n(a crate missing offline: run `cargo fetch --locked` once with the network)",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

#[test]
fn the_workspace_dependencies_pass_the_licence_ban_and_source_policy() {
    if !cargo_deny_available() {
        return;
    }
    if let Err(report) = deny_offline(&repo_root()) {
        panic!("cargo deny check on the workspace, against deny.toml:\n{report}");
    }
}

#[test]
fn a_generated_project_passes_its_own_licence_ban_and_source_policy() {
    if !cargo_deny_available() || !cargo_generate_available() {
        return;
    }
    let dir = TempDir::new().expect("temp dir");
    // Every capability: the most dependencies a generated project starts with.
    let output = Command::new("cargo")
        .args(["generate", "--silent", "--path"])
        .arg(repo_root().join("template"))
        .args(["--name", "demo", "--destination"])
        .arg(dir.path())
        .arg("-d")
        .arg(format!("sdk=path:{}", repo_root().display()))
        .args([
            "-d",
            "capabilities=batch_read,micro_batch_read,batch_write,streaming_write,truncate",
        ])
        .output()
        .expect("cargo generate runs");
    assert!(
        output.status.success(),
        "cargo generate failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let project = dir.path().join("demo");
    assert_eq!(
        std::fs::read_to_string(project.join("deny.toml")).expect("the project has deny.toml"),
        std::fs::read_to_string(repo_root().join("template/deny.toml")).expect("read"),
        "deny.toml is copied as it is"
    );
    if !project.join("Cargo.lock").exists() {
        // The versions this workspace locks, which are those fetched here.
        std::fs::copy(repo_root().join("Cargo.lock"), project.join("Cargo.lock"))
            .expect("copy Cargo.lock");
        let status = Command::new("cargo")
            .args(["update", "--offline", "--workspace", "--quiet"])
            .current_dir(&project)
            .status()
            .expect("cargo update runs");
        assert!(status.success(), "cargo update --offline --workspace");
    }
    if let Err(report) = deny_offline(&project) {
        panic!("cargo deny check on a generated project, against template/deny.toml:\n{report}");
    }
}
