//! `cargo metadata` of the project in a folder: where its SDK crates come from and where it
//! builds, for the commands that work beside the project (`spark`'s plugin, `doc`).

use std::path::Path;
use std::process::Command;

use sparkds::{Error, Result};

/// The output of `cargo metadata --format-version 1` in `dir`.
///
/// # Errors
/// Cargo cannot run, or fails (no `Cargo.toml` there, a manifest it cannot read).
pub fn of(dir: &Path) -> Result<serde_json::Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(dir)
        .output()
        .map_err(|e| Error::usage(format!("cannot run cargo metadata: {e}")))?;
    if !output.status.success() {
        return Err(Error::usage(format!(
            "cargo metadata failed in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| Error::usage(format!("cannot read cargo metadata's output: {e}")))
}

/// The package named `name` in `metadata`'s graph, if the project depends on it.
pub fn package<'m>(metadata: &'m serde_json::Value, name: &str) -> Option<&'m serde_json::Value> {
    metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == name))
}
