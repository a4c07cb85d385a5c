//! The files that writes publish and that reads with the option `path` read: a directory of
//! JSON-lines files and a manifest, `_table.json`, listing the files that are visible.
//!
//! ```text
//! <path>/_table.json           {"version": 2, "files": ["data/...jsonl"], "epochs": {...}}
//! <path>/data/*.jsonl          published data files, in the sample's format
//! <path>/_staging/<query>/...  files of running tasks, invisible until a commit lists them
//! ```
//! Replacing the manifest is one atomic rename, so a reader sees all of a commit or none of it.

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use serde::{Deserialize, Serialize};

use spark_datasource::{Error, Result};

/// The file name of the manifest.
pub const MANIFEST: &str = "_table.json";

/// The visible state of a table.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Incremented by every commit.
    pub version: u64,
    /// The visible data files, relative to the table's directory.
    pub files: Vec<String>,
    /// The last epoch that each streaming query committed, so that an epoch replayed after a
    /// restart is not written twice.
    pub epochs: BTreeMap<String, u64>,
}

/// The manifest of the table at `root`, or `None` where no write has committed yet.
pub fn load(root: &Path) -> Result<Option<Manifest>> {
    let path = root.join(MANIFEST);
    match fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            Error::msg(format!(
                "the manifest `{}` is not valid: {e}; it is written by this data source only",
                path.display()
            ))
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read `{}`", path.display()), e)),
    }
}
