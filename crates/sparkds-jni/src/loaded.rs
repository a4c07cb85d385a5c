//! Libraries loaded by this JVM, each build once, by its SHA-256. A build is loaded from a
//! private copy of the bytes that were hashed ([`crate::private_copy`]), so the checksum that
//! the driver registers is the checksum of what runs. Each place a build came from (a library
//! file, or a package's entry) is remembered with its checksum: another build found there later
//! is REPLACED, since mixing two builds in one application would hand one build the partitions
//! and states of the other. A place whose file keeps the [`Stamp`] it had when its build was
//! read is not read again ([`unchanged`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use sparkds::{HostOptions, Library, LogFunction};

use crate::build::{Build, Origin};
use crate::error::{Error, ErrorClass, Result};
use crate::private_copy::PrivateCopy;
use crate::stamp::Stamp;

/// A library loaded by this JVM, never unloaded.
#[derive(Debug)]
pub struct Loaded {
    pub library: &'static Library,
    /// Where its bytes came from, the first time it was loaded (made absolute).
    pub path: PathBuf,
    /// The SHA-256 of the bytes that were loaded.
    pub sha256: String,
    /// The data source name of its file name, for messages.
    pub name: String,
}

#[derive(Default)]
struct Registry {
    /// Every build loaded, by checksum.
    by_sha256: HashMap<String, &'static Loaded>,
    /// The checksum of the build loaded from each place.
    by_origin: HashMap<Origin, String>,
    /// The stamp of each place's file when its build was read, with that build's checksum.
    by_stamp: HashMap<Origin, (Stamp, String)>,
}

static LOADED: Mutex<Option<Registry>> = Mutex::new(None);

/// The build with checksum `sha256` when this JVM loaded it already: the cache that spares an
/// executor reading and hashing the library for every task. Keyed by content, so no file on
/// disk is trusted for it.
pub fn by_checksum(sha256: &str) -> Option<&'static Loaded> {
    let registry = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    registry
        .as_ref()
        .and_then(|r| r.by_sha256.get(&sha256.to_ascii_lowercase()).copied())
}

/// The build this JVM loaded from `origin` when the file there still has `stamp`, the stamp it
/// had when that build was read: the cache that spares the driver reading and hashing a library
/// (or a package) for every query.
pub fn unchanged(origin: &Origin, stamp: &Stamp) -> Option<&'static Loaded> {
    let registry = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = registry.as_ref()?;
    let (then, sha256) = registry.by_stamp.get(origin)?;
    (then == stamp)
        .then(|| registry.by_sha256.get(sha256).copied())
        .flatten()
}

/// Reads the library at `path` and loads it as [`load_build`] does, its private copy in the
/// system's temporary directory.
///
/// # Errors
///
/// NOT_FOUND when there is no file at `path`; otherwise as [`load_build`].
pub fn load(
    path: &Path,
    sha256: Option<&str>,
    spark_version: &str,
    log_for: impl FnOnce(&str) -> Option<LogFunction>,
) -> Result<&'static Loaded> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if !path.exists() {
        return Err(Error::new(
            ErrorClass::NotFound,
            format!(
                "there is no library at {}; install it there, or resolve the data source again",
                path.display()
            ),
        ));
    }
    let build = Build::read_file(&path).map_err(|e| crate::build::unreadable(&path, &e))?;
    load_build(build, sha256, Path::new(""), spark_version, log_for)
}

/// Loads `build` once per process, from a private copy under `private_base`, with
/// `spark_version` in its `SparkDsHost` and the log function that `log_for` makes for its data
/// source name. A build this JVM loaded already is returned as it is.
///
/// # Errors
///
/// REPLACED when the build is not the one `sha256` asks for, or when another build came from
/// the same place before; INIT_FAILED when no private copy can be written, or when the library
/// breaks the loading rules (UNSUPPORTED_ABI_VERSION for another version).
pub fn load_build(
    build: Build,
    sha256: Option<&str>,
    private_base: &Path,
    spark_version: &str,
    log_for: impl FnOnce(&str) -> Option<LogFunction>,
) -> Result<&'static Loaded> {
    if let Some(wanted) = sha256
        .map(str::to_ascii_lowercase)
        .filter(|w| *w != build.sha256)
    {
        return Err(replaced(format!(
            "the library {} has the SHA-256 {}, but the build {wanted} was asked for: it was replaced after it was found; run the query again, or install the same build on every node",
            build.origin, build.sha256
        )));
    }
    let mut registry = LOADED.lock().unwrap_or_else(PoisonError::into_inner);
    let registry = registry.get_or_insert_with(Registry::default);
    if let Some(then) = registry.by_origin.get(&build.origin) {
        if *then != build.sha256 {
            return Err(replaced(format!(
                "the library {} was replaced since this JVM loaded it (SHA-256 {then} then, {} now); restart the application to use the new build",
                build.origin, build.sha256
            )));
        }
    }
    if let Some(stamp) = build.stamp {
        registry
            .by_stamp
            .insert(build.origin.clone(), (stamp, build.sha256.clone()));
    }
    if let Some(known) = registry.by_sha256.get(&build.sha256).copied() {
        registry
            .by_origin
            .insert(build.origin, known.sha256.clone());
        return Ok(known);
    }
    let name = build.data_source_name();
    let copy = PrivateCopy::write(&build, private_base).map_err(|e| {
        Error::new(
            ErrorClass::InitFailed,
            format!("the library {} cannot be loaded: {e}", build.origin),
        )
    })?;
    let options = HostOptions {
        spark_version: Some(spark_version.to_string()),
        log: log_for(&name),
        observer: None,
    };
    let library = Library::load_with(copy.path(), options)
        .map_err(|e| Error::from_load(build.origin.path(), e))?;
    copy.loaded();
    let entry: &'static Loaded = Box::leak(Box::new(Loaded {
        library: Box::leak(Box::new(library)),
        path: build.origin.path().to_path_buf(),
        sha256: build.sha256.clone(),
        name,
    }));
    registry.by_sha256.insert(build.sha256.clone(), entry);
    registry.by_origin.insert(build.origin, build.sha256);
    Ok(entry)
}

fn replaced(message: String) -> Error {
    Error::new(ErrorClass::Replaced, message)
}
