//! A directory for one run of a test binary, under the target directory.
//!
//! A test binary keeps it in a static, and statics are never dropped, so each run leaves its
//! directory behind: the next run of the same binary removes those older than an hour, which
//! belong to no run in progress.

use std::path::Path;
use std::time::Duration;

/// A new directory named `<prefix><random>` under `parent` (the binary's
/// `CARGO_TARGET_TMPDIR`, or the system's temporary directory), after removing the stale ones
/// of the same prefix.
pub fn new_run_dir(parent: &Path, prefix: &str) -> tempfile::TempDir {
    remove_stale_run_dirs(parent, prefix);
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(parent)
        .unwrap_or_else(|e| panic!("cannot create a directory under {}: {e}", parent.display()))
}

fn remove_stale_run_dirs(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(3600));
        if stale && entry.file_name().to_string_lossy().starts_with(prefix) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
