//! The directory of a table: which files are visible, and how a write makes its files visible
//! all at once.
//!
//! ```text
//! <path>/*.csv | *.jsonl          data files, read by their extension
//! <path>/_manifest.json           once a write committed: the data files that are visible
//! <path>/_staging/<query>/...     files of running tasks, never read
//! ```
//! A directory that no write committed to is read as it is: every data file in it, so the
//! source reads files written by other tools. The first commit lists them in a manifest, and
//! from then on only the files the manifest lists are visible: publishing a write is one atomic
//! rename of the manifest, so a reader sees all of a commit or none of it.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use super::splits::SizedFile;
use spark_datasource::kit::files::Manifest;
use spark_datasource::{Error, Result};

/// The file name of the manifest.
pub const MANIFEST: &str = "_manifest.json";

/// The manifest of the table at `root`, or `None` where no write has committed yet.
///
/// # Errors
/// An unreadable or corrupt manifest.
pub fn manifest(root: &Path) -> Result<Option<Manifest>> {
    let path = root.join(MANIFEST);
    Manifest::load(&path).map_err(|e| {
        Error::msg(format!(
            "{e}: remove it to read every file of the directory"
        ))
    })
}

/// The data files of a directory that no write committed to: the files with `extension`,
/// except hidden ones (`_` or `.` first, as Hadoop hides them), sorted by name.
///
/// # Errors
/// A directory that cannot be listed.
pub fn listed(root: &Path, extension: &str) -> Result<Vec<String>> {
    let entries = match fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(format!("cannot list `{}`", root.display()), e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("cannot list `{}`", root.display()), e))?;
        let name = entry.file_name().to_string_lossy().to_string();
        let path = entry.path();
        if name.starts_with(['_', '.'])
            || path.extension().is_none_or(|e| e != extension)
            || !path.is_file()
        {
            continue;
        }
        files.push(name);
    }
    files.sort();
    Ok(files)
}

/// The visible data files of the table at `root`, with their sizes.
///
/// # Errors
/// A directory that cannot be listed, or a listed file that is missing.
pub fn visible(root: &Path, extension: &str) -> Result<Vec<SizedFile>> {
    let names = match manifest(root)? {
        Some(manifest) => manifest.files,
        None => listed(root, extension)?,
    };
    names
        .into_iter()
        .map(|name| {
            let path = root.join(&name);
            let metadata = fs::metadata(&path).map_err(|e| {
                Error::io(
                    format!(
                        "cannot read the size of `{}`, which the table lists",
                        path.display()
                    ),
                    e,
                )
            })?;
            Ok(SizedFile {
                name,
                size: metadata.len(),
            })
        })
        .collect()
}
