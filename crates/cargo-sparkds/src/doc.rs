//! `cargo sparkds doc`: the API documentation of the SDK crates a project uses, at the versions
//! its `Cargo.lock` holds. `cargo doc -p sparkds` cannot do it in a generated project: sparkds
//! is a dev-dependency there, and cargo panics documenting one (rust-lang/cargo#11105). So the
//! crates are documented from a manifest of their own, beside the project's build, where they
//! are plain dependencies.

use std::path::{Path, PathBuf};
use std::process::Command;

use sparkds::{Error, Result};

/// The SDK's crates that a project may use, in the order the documentation lists them.
const SDK_CRATES: [&str; 3] = ["spark-datasource", "sparkds", "spark-datasource-http"];

#[derive(Debug, clap::Args)]
pub struct DocArgs {
    /// Open the documentation of `spark-datasource` in a browser once it is built.
    #[arg(long)]
    open: bool,
}

/// Documents the project's SDK crates into its `target/doc` and prints where they are.
///
/// # Errors
/// The current directory has no cargo project, or one without the SDK; `cargo doc` fails.
pub fn run(args: &DocArgs) -> Result<()> {
    let dir = std::env::current_dir().map_err(|e| Error::io("the current directory", e))?;
    let metadata = crate::metadata::of(&dir)?;
    let crates = sdk_crates(&metadata);
    if crates.is_empty() {
        return Err(Error::usage(format!(
            "the project in {} does not depend on spark-datasource or sparkds: run cargo \
             sparkds doc in a project generated from spark-datasource-template",
            dir.display()
        )));
    }
    let target = PathBuf::from(metadata["target_directory"].as_str().unwrap_or("target"));
    let scratch = target.join("sparkds-doc");
    std::fs::create_dir_all(&scratch).map_err(|e| Error::io(scratch.display().to_string(), e))?;
    write(&scratch.join("Cargo.toml"), &manifest(&crates))?;
    write(&scratch.join("lib.rs"), "")?;
    // The project's lock, so that the crates and theirs are the versions the project builds.
    let workspace = Path::new(metadata["workspace_root"].as_str().unwrap_or("."));
    if let Ok(lock) = std::fs::read(workspace.join("Cargo.lock")) {
        write(&scratch.join("Cargo.lock"), &String::from_utf8_lossy(&lock))?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["doc", "--no-deps", "--manifest-path"])
        .arg(scratch.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    for (name, _) in &crates {
        command.args(["-p", name]);
    }
    if args.open {
        command.arg("--open");
    }
    let status = command
        .status()
        .map_err(|e| Error::usage(format!("cannot run cargo doc: {e}")))?;
    if !status.success() {
        return Err(Error::usage("cargo doc failed: its messages are above"));
    }
    for (name, _) in &crates {
        let index = target
            .join("doc")
            .join(name.replace('-', "_"))
            .join("index.html");
        println!("{name}: {}", index.display());
    }
    Ok(())
}

/// The SDK crates in the project's graph, each with the folder of its manifest (a checkout, or
/// cargo's copy of a registry's or a git repository's sources).
fn sdk_crates(metadata: &serde_json::Value) -> Vec<(&'static str, PathBuf)> {
    SDK_CRATES
        .iter()
        .filter_map(|name| {
            let manifest = crate::metadata::package(metadata, name)?["manifest_path"].as_str()?;
            Some((*name, Path::new(manifest).parent()?.to_path_buf()))
        })
        .collect()
}

/// A package that depends on `crates` by path and builds nothing of its own: its own workspace,
/// so that the project's workspace does not take it as a member.
fn manifest(crates: &[(&str, PathBuf)]) -> String {
    let mut text = String::from(
        "# Written by cargo sparkds doc, to document the SDK crates the project uses.\n\
         [package]\nname = \"sparkds-doc\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[lib]\npath = \"lib.rs\"\n\n[workspace]\n\n[dependencies]\n",
    );
    for (name, dir) in crates {
        // A TOML basic string: the folder with its backslashes and quotes escaped.
        let path = dir
            .display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"");
        text.push_str(&format!("{name} = {{ path = \"{path}\" }}\n"));
    }
    text
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io(path.display().to_string(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crates_the_project_uses_are_path_dependencies_of_a_workspace_of_their_own() {
        let metadata = serde_json::json!({"packages": [
            {"name": "my_source", "manifest_path": "/p/Cargo.toml"},
            {"name": "sparkds", "manifest_path": "/reg/sparkds-0.1.0/Cargo.toml"},
            {"name": "spark-datasource", "manifest_path": "/sdk \"x\"/Cargo.toml"},
        ]});
        let crates = sdk_crates(&metadata);
        let names: Vec<&str> = crates.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["spark-datasource", "sparkds"]);
        let text = manifest(&crates);
        assert!(
            text.contains("sparkds = { path = \"/reg/sparkds-0.1.0\" }"),
            "{text}"
        );
        assert!(text.contains("\n[workspace]\n"), "{text}");
        assert!(
            text.contains("spark-datasource = { path = \"/sdk \\\"x\\\"\" }"),
            "{text}"
        );
    }
}
