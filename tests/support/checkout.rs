//! The copy of this repository that generated projects come from, as a fresh clone has it.
//!
//! A generated project depends on the SDK's crates by path, and cargo tells a path dependency
//! outside the project's workspace by its absolute path: projects generated from two copies of
//! the repository build the SDK's crates twice (debug, check and release), in the same target
//! directory. `cargo suite` makes one copy for the whole run and names it in
//! `SPARKDS_SUITE_CHECKOUT`; every test that generates projects takes it from there, and a test
//! binary run alone makes its own or uses the repository, as before.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable that names the run's copy.
pub const VARIABLE: &str = "SPARKDS_SUITE_CHECKOUT";

/// The name of the copy's directory, as `git clone` names it (the tutorial generates from there).
pub const NAME: &str = "spark-datasource-template";

/// The run's copy, when the runner made one.
pub fn shared() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os(VARIABLE)?);
    path.join("template").is_dir().then_some(path)
}

/// The run's copy, else `root` (this repository).
pub fn shared_or(root: &Path) -> PathBuf {
    shared().unwrap_or_else(|| root.to_path_buf())
}

/// Copies the files of the repository at `root` that git tracks or would add (without build
/// output), as they are in the work tree, to `destination`, with their modification times: cargo
/// tells a workspace's own crates by their path inside the workspace, and rebuilds one whose
/// sources are newer than its last build, so that the copy's builds into the repository's target
/// directory (the JNI library of `cargo sparkds spark`) reuse the repository's.
pub fn copy(root: &Path, destination: &Path) -> Result<(), String> {
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git in {}: {e}", root.display()))?;
    if !listed.status.success() {
        return Err(format!(
            "git ls-files failed in {}: {}",
            root.display(),
            String::from_utf8_lossy(&listed.stderr)
        ));
    }
    for file in listed.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let relative = Path::new(std::str::from_utf8(file).map_err(|e| e.to_string())?);
        let source = root.join(relative);
        let target = destination.join(relative);
        // A symbolic link stays one (cargo-sparkds's embedded/ links to jvm/ and python/).
        #[cfg(unix)]
        if let Ok(link) = std::fs::read_link(&source) {
            std::fs::create_dir_all(target.parent().unwrap_or(destination))
                .and_then(|()| std::os::unix::fs::symlink(&link, &target))
                .map_err(|e| {
                    format!(
                        "cannot link {} to {}: {e}",
                        target.display(),
                        link.display()
                    )
                })?;
            continue;
        }
        if !source.is_file() {
            continue; // deleted in the work tree
        }
        let copied = std::fs::create_dir_all(target.parent().unwrap_or(destination))
            .and_then(|()| std::fs::copy(&source, &target))
            .and_then(|_| std::fs::metadata(&source)?.modified())
            .and_then(|modified| {
                std::fs::File::options()
                    .write(true)
                    .open(&target)?
                    .set_modified(modified)
            });
        copied.map_err(|e| {
            format!(
                "cannot copy {} to {}: {e}",
                source.display(),
                target.display()
            )
        })?;
    }
    Ok(())
}
