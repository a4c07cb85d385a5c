//! Libraries loaded by this JVM: each path once, with the checksum it had then. A later load
//! of the same path returns the same library, unless the file changed since (REPLACED): mixing
//! two builds in one application would hand one build the partitions and states of the other.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use sparkds::{HostOptions, Library, LogFunction};

use crate::checksum::sha256_file;
use crate::error::{Error, ErrorClass, Result};

/// A library loaded by this JVM, never unloaded.
#[derive(Debug)]
pub struct Loaded {
    pub library: &'static Library,
    /// The path it was loaded from, as given (made absolute).
    pub path: PathBuf,
    /// The SHA-256 of the file when it was loaded.
    pub sha256: String,
    /// The data source name of its file name, for messages.
    pub name: String,
}

static LOADED: Mutex<Option<HashMap<PathBuf, &'static Loaded>>> = Mutex::new(None);

/// Loads the library at `path` once per process, with `spark_version` in its `SparkDsHost` and
/// the log function that `log_for` makes for its data source name.
///
/// # Errors
///
/// NOT_FOUND when there is no file at `path`; REPLACED when the file changed since this process
/// loaded it, or does not have the checksum `sha256`; INIT_FAILED or UNSUPPORTED_ABI_VERSION
/// when the library breaks the loading rules.
pub fn load(
    path: &Path,
    sha256: Option<&str>,
    spark_version: &str,
    log_for: impl FnOnce(&str) -> Option<LogFunction>,
) -> Result<&'static Loaded> {
    // Not canonicalized: a symbolic link moved to a new build is a new build at the same path.
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if !path.is_file() {
        return Err(Error::new(
            ErrorClass::NotFound,
            format!(
                "there is no library at {}; install it there, or resolve the data source again",
                path.display()
            ),
        ));
    }
    let now = sha256_file(&path).map_err(|e| {
        Error::new(
            ErrorClass::NotFound,
            format!("cannot read the library {}: {e}", path.display()),
        )
    })?;
    let wanted = sha256.map(str::to_ascii_lowercase);
    let mut loaded = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    let loaded = loaded.get_or_insert_with(HashMap::new);
    if let Some(known) = loaded.get(&path) {
        if now != known.sha256 {
            return Err(replaced(format!(
                "the library {} was replaced since this JVM loaded it (SHA-256 {} then, {now} now); restart the application to use the new build",
                path.display(),
                known.sha256
            )));
        }
        if let Some(wanted) = wanted.filter(|w| *w != known.sha256) {
            return Err(replaced(format!(
                "this JVM loaded the build {} of {}, but the build {wanted} was asked for; restart the application so that it loads one build",
                known.sha256,
                path.display()
            )));
        }
        return Ok(known);
    }
    if let Some(wanted) = wanted.filter(|w| *w != now) {
        return Err(replaced(format!(
            "the library {} has the SHA-256 {now}, but the build {wanted} was asked for: it was replaced after it was found; run the query again, or install the same build on every node",
            path.display()
        )));
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_prefix("lib").unwrap_or(&name);
    let name = stem
        .strip_prefix("spark_datasource_")
        .unwrap_or(stem)
        .to_lowercase();
    let options = HostOptions {
        spark_version: Some(spark_version.to_string()),
        log: log_for(&name),
    };
    let library = Library::load_with(&path, options).map_err(|e| Error::from_load(&path, e))?;
    let entry: &'static Loaded = Box::leak(Box::new(Loaded {
        library: Box::leak(Box::new(library)),
        path: path.clone(),
        sha256: now,
        name,
    }));
    loaded.insert(path, entry);
    Ok(entry)
}

fn replaced(message: String) -> Error {
    Error::new(ErrorClass::Replaced, message)
}
