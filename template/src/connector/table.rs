//! The files that writes publish and that reads with the option `path` read: a directory of
//! JSON-lines files and a manifest, `_table.json`, listing the files that are visible.
//!
//! ```text
//! <path>/_table.json           {"version": 2, "files": ["data/...jsonl"], "epochs": {...}}
//! <path>/data/*.jsonl          published data files, in the sample's format
//! <path>/_staging/<query>/...  files of running tasks, invisible until a commit lists them
//! ```
//! Replacing the manifest is one atomic rename, so a reader sees all of a commit or none of it.

use std::path::Path;

use spark_datasource::kit::files::Manifest;
use spark_datasource::Result;

/// The file name of the manifest.
pub const MANIFEST: &str = "_table.json";

/// The manifest of the table at `root`, or `None` where no write has committed yet.
pub fn load(root: &Path) -> Result<Option<Manifest>> {
    Manifest::load(&root.join(MANIFEST))
}
