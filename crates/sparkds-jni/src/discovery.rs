//! Finding the library of a data source, as the specification's "Finding Native Data Sources"
//! says: the session's packages (the last added first), then the configured packages (only one
//! may provide a name), then the installed libraries by file name, in the native library path.
//! A package's library is read from the package into memory (never extracted to a shared
//! place), and every library is found as a [`Build`]: its bytes and their SHA-256, which is
//! what gets loaded; or, when the file it came from keeps the [`Stamp`] it had then, as the
//! build this JVM loaded from there before, not read again. On an executor, [`locate_build`]
//! finds the driver's build by its checksum.
//! Only absolute directories of the library path are searched: a relative one (`.`, `bin`, an
//! empty entry) would make the current directory of the process decide what runs.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{Read, Seek};
use std::path::{Component, Path, PathBuf};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::SystemTime;

use spark_datasource_core::library_file::{is_valid_data_source_name, Os};
use sparkds_package::{Manifest, Platform, ABI_VERSION, MANIFEST_NAME};
use zip::ZipArchive;

use crate::build::{read_bounded, Build, Origin, MAX_LIBRARY_BYTES};
use crate::error::{Error, ErrorClass, Result};
use crate::loaded::{self, Loaded};
use crate::stamp::Stamp;

/// The largest manifest that a package may hold: bounds what an unreadable or hostile package
/// makes this process allocate.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Where a library was found.
#[derive(Debug)]
pub struct Found {
    /// The build there: read now, or loaded before from the same, unchanged file.
    pub build: Located,
    /// Where it was found, for messages: `session package <path>`, `configured package <path>`
    /// or `library path <dir>`.
    pub place: String,
}

/// The build that a place (a library file, or a package's entry) holds.
#[derive(Debug)]
pub enum Located {
    /// Its bytes, read now, with their SHA-256.
    Read(Build),
    /// The build this JVM loaded from there, whose file still has the stamp it had then.
    Loaded {
        origin: Origin,
        loaded: &'static Loaded,
    },
}

impl Located {
    pub fn origin(&self) -> &Origin {
        match self {
            Located::Read(build) => &build.origin,
            Located::Loaded { origin, .. } => origin,
        }
    }

    pub fn sha256(&self) -> &str {
        match self {
            Located::Read(build) => &build.sha256,
            Located::Loaded { loaded, .. } => &loaded.sha256,
        }
    }

    /// The loaded library: see [`loaded::load_build`] for the arguments, which a build loaded
    /// before does not need.
    ///
    /// # Errors
    ///
    /// As [`loaded::load_build`].
    pub fn load(
        self,
        sha256: Option<&str>,
        private_base: &Path,
        spark_version: &str,
        log_for: impl FnOnce(&str) -> Option<sparkds::LogFunction>,
    ) -> Result<&'static Loaded> {
        match self {
            Located::Read(build) => {
                loaded::load_build(build, sha256, private_base, spark_version, log_for)
            }
            Located::Loaded { origin, loaded } => match sha256 {
                Some(wanted) if !wanted.eq_ignore_ascii_case(&loaded.sha256) => Err(Error::new(
                    ErrorClass::Replaced,
                    format!(
                        "the library {origin} has the SHA-256 {}, but the build {wanted} was asked for",
                        loaded.sha256
                    ),
                )),
                _ => Ok(loaded),
            },
        }
    }

    /// The build of `origin` when its file, open as `file`, is unchanged since this JVM loaded
    /// it; else `read` reads it, stamped.
    fn of<E>(
        origin: Origin,
        file: File,
        read: impl FnOnce(File) -> std::result::Result<Vec<u8>, E>,
    ) -> std::result::Result<Located, E> {
        let stamp = Stamp::of(&file, SystemTime::now());
        if let Some(loaded) = stamp.and_then(|s| loaded::unchanged(&origin, &s)) {
            return Ok(Located::Loaded { origin, loaded });
        }
        Ok(Located::Read(
            Build::new(read(file)?, origin).stamped(stamp),
        ))
    }
}

/// The places to search, in the order of the specification.
#[derive(Debug, Clone, Default)]
pub struct Search {
    /// `.sparkpkg` files that the session added, in the order it added them.
    pub session_packages: Vec<PathBuf>,
    /// `.sparkpkg` files, and directories holding them, of `spark.sql.dataSource.native.paths`.
    pub configured_packages: Vec<PathBuf>,
    /// The native library path, in order; relative entries are ignored.
    pub library_dirs: Vec<PathBuf>,
}

/// The directories of `dirs` that are absolute, in order.
pub fn absolute_dirs(dirs: &[PathBuf]) -> impl Iterator<Item = &PathBuf> {
    dirs.iter().filter(|d| d.is_absolute())
}

/// The data source name as Spark looks it up: lower case, and a valid file name part.
///
/// # Errors
///
/// A name that no library file can carry.
pub fn data_source_name(name: &str) -> Result<String> {
    let lower = name.to_lowercase();
    if !is_valid_data_source_name(&lower) {
        return Err(Error::argument(format!(
            "`{name}` is not a data source name: a name is a letter then letters, digits or `_`, such as `c_range`"
        )));
    }
    Ok(lower)
}

/// A package that could not serve the data source, and why.
struct Skipped {
    package: PathBuf,
    /// Whether its manifest lists the data source: its error is then the query's, when no other
    /// place provides the name.
    lists_name: bool,
    class: ErrorClass,
    reason: String,
}

/// Finds the library of data source `name`. Packages skipped on the way are passed to `log`
/// (level, message).
///
/// # Errors
///
/// NOT_FOUND naming every place searched and the fix; AMBIGUOUS when several configured
/// packages provide `name`; the error of a package that lists `name` but cannot serve it, when
/// nothing else provides it.
pub fn resolve(name: &str, search: &Search, log: &dyn Fn(i32, &str)) -> Result<Found> {
    let name = data_source_name(name)?;
    let platform = Platform::current();
    let mut skipped: Vec<Skipped> = Vec::new();
    let mut found = in_session_packages(&name, search, platform, &mut skipped);
    if found.is_none() {
        found = in_configured_packages(&name, search, platform, &mut skipped)?;
    }
    report(&skipped, log);
    if found.is_none() {
        found = in_library_path(&name, search)?;
    }
    found.ok_or_else(|| not_provided(&name, search, &skipped))
}

/// The session's packages: the one added last wins.
fn in_session_packages(
    name: &str,
    search: &Search,
    platform: Option<Platform>,
    skipped: &mut Vec<Skipped>,
) -> Option<Found> {
    for package in search.session_packages.iter().rev() {
        match provider(package, name, platform) {
            Ok(Some(entry)) => match read_entry(package, &entry) {
                Ok(build) => {
                    return Some(Found {
                        build,
                        place: format!("session package {}", package.display()),
                    })
                }
                Err(reason) => skipped.push(Skipped {
                    package: package.clone(),
                    lists_name: true,
                    class: ErrorClass::InitFailed,
                    reason,
                }),
            },
            Ok(None) => {}
            Err(s) => skipped.push(s),
        }
    }
    None
}

/// The configured packages: more than one providing the name is an error.
fn in_configured_packages(
    name: &str,
    search: &Search,
    platform: Option<Platform>,
    skipped: &mut Vec<Skipped>,
) -> Result<Option<Found>> {
    let mut providers = Vec::new();
    for package in configured_package_files(&search.configured_packages, skipped) {
        match provider(&package, name, platform) {
            Ok(Some(entry)) => providers.push((package, entry)),
            Ok(None) => {}
            Err(s) => skipped.push(s),
        }
    }
    if providers.len() > 1 {
        let list: Vec<String> = providers
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect();
        return Err(Error::new(
            ErrorClass::Ambiguous,
            format!(
                "native data source `{name}` is provided by {} configured packages: {}; keep one of them in spark.sql.dataSource.native.paths",
                providers.len(),
                list.join(", ")
            ),
        ));
    }
    let Some((package, entry)) = providers.pop() else {
        return Ok(None);
    };
    match read_entry(&package, &entry) {
        Ok(build) => Ok(Some(Found {
            build,
            place: format!("configured package {}", package.display()),
        })),
        Err(reason) => {
            skipped.push(Skipped {
                package,
                lists_name: true,
                class: ErrorClass::InitFailed,
                reason,
            });
            Ok(None)
        }
    }
}

/// The installed libraries, by file name, in the first directory of the library path that
/// has one.
fn in_library_path(name: &str, search: &Search) -> Result<Option<Found>> {
    let file = Os::current().library_file_name(name);
    // Whatever has the library's name counts: a named pipe or a directory there is refused by
    // its name, rather than passed over for a library further down the path.
    let Some(dir) = absolute_dirs(&search.library_dirs).find(|dir| dir.join(&file).exists()) else {
        return Ok(None);
    };
    let path = dir.join(&file);
    let build = library_file(&path).map_err(|e| crate::build::unreadable(&path, &e))?;
    Ok(Some(Found {
        build,
        place: format!("library path {}", dir.display()),
    }))
}

/// The build of the library file at `path` (opened as [`sparkds::open_regular`] opens it).
fn library_file(path: &Path) -> std::io::Result<Located> {
    let file = sparkds::open_regular(path)?;
    let what = path.display().to_string();
    Located::of(Origin::File(path.to_path_buf()), file, |file| {
        read_bounded(file, &what)
    })
}

/// Nothing provides `name`: a package that lists it but cannot provide it says why, else the
/// places that were searched.
fn not_provided(name: &str, search: &Search, skipped: &[Skipped]) -> Error {
    if let Some(s) = skipped.iter().find(|s| s.lists_name) {
        return Error::new(
            s.class,
            format!(
                "native data source `{name}`: the package {} lists it but cannot provide it: {}",
                s.package.display(),
                s.reason
            ),
        );
    }
    not_found(
        name,
        &Os::current().library_file_name(name),
        search,
        skipped,
    )
}

/// Logs the packages skipped on the way, as warnings: the specification ignores them, and logs
/// them.
fn report(skipped: &[Skipped], log: &dyn Fn(i32, &str)) {
    for s in skipped {
        log(
            2,
            &format!("skipped the package {}: {}", s.package.display(), s.reason),
        );
    }
}

fn not_found(name: &str, file: &str, search: &Search, skipped: &[Skipped]) -> Error {
    let dirs: Vec<String> = absolute_dirs(&search.library_dirs)
        .map(|d| d.display().to_string())
        .collect();
    let packages: Vec<String> = search
        .session_packages
        .iter()
        .rev()
        .map(|p| format!("{} (session)", p.display()))
        .chain(
            search
                .configured_packages
                .iter()
                .map(|p| format!("{} (spark.sql.dataSource.native.paths)", p.display())),
        )
        .collect();
    let mut message = format!(
        "no native data source `{name}`: no {file} in the native library path ({})",
        if dirs.is_empty() {
            "empty".to_string()
        } else {
            dirs.join(", ")
        }
    );
    if packages.is_empty() {
        message.push_str(", and no package");
    } else {
        message.push_str(&format!(
            ", and no package that provides it among {}",
            packages.join(", ")
        ));
    }
    if !skipped.is_empty() {
        let reasons: Vec<String> = skipped
            .iter()
            .map(|s| format!("{}: {}", s.package.display(), s.reason))
            .collect();
        message.push_str(&format!(" (skipped {})", reasons.join("; ")));
    }
    message.push_str(&format!(
        "; copy {file} into one of these directories, or set spark.driver.extraLibraryPath and spark.executor.extraLibraryPath to its directory, or add a .sparkpkg that provides `{name}` (spark.sql.dataSource.native.paths or a session artifact)"
    ));
    Error::new(ErrorClass::NotFound, message)
}

/// The `.sparkpkg` files of the configured paths: files as given, directories by their
/// `.sparkpkg` entries in name order. A path that does not exist is skipped; one that is not a
/// regular file (a named pipe) is kept, and skipped with that reason when it is opened.
fn configured_package_files(paths: &[PathBuf], skipped: &mut Vec<Skipped>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut in_dir: Vec<PathBuf> = fs::read_dir(path)
                .map(|entries| {
                    entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.extension().is_some_and(|e| e == "sparkpkg") && !p.is_dir())
                        .collect()
                })
                .unwrap_or_default();
            in_dir.sort();
            files.extend(in_dir);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            skipped.push(Skipped {
                package: path.clone(),
                lists_name: false,
                class: ErrorClass::NotFound,
                reason: "no such file or directory".into(),
            });
        }
    }
    files
}

/// The entry of the library of `name` for `platform` in `package`: `Ok(None)` when the
/// manifest does not list `name`, an error when the package cannot be read or cannot serve it.
fn provider(
    package: &Path,
    name: &str,
    platform: Option<Platform>,
) -> std::result::Result<Option<String>, Skipped> {
    let skip = |lists_name: bool, class: ErrorClass, reason: String| Skipped {
        package: package.to_path_buf(),
        lists_name,
        class,
        reason,
    };
    let manifest = read_manifest(package).map_err(|r| skip(false, ErrorClass::InitFailed, r))?;
    let lists_name = manifest.data_sources.iter().any(|d| d == name);
    if manifest.abi_version != ABI_VERSION {
        return Err(skip(
            lists_name,
            ErrorClass::UnsupportedAbi,
            format!(
                "its abiVersion is {}, and this plugin supports version {ABI_VERSION} only; use a package built against version {ABI_VERSION} of spark_datasource.h",
                manifest.abi_version
            ),
        ));
    }
    if !lists_name {
        return Ok(None);
    }
    let Some(platform) = platform else {
        return Err(skip(
            true,
            ErrorClass::NotFound,
            format!(
                "this platform ({} {}) has no key in a manifest; install the library by file name instead",
                std::env::consts::OS,
                std::env::consts::ARCH
            ),
        ));
    };
    let Some(entry) = manifest.libraries.get(platform.key()) else {
        let keys: Vec<&str> = manifest.libraries.keys().map(String::as_str).collect();
        return Err(skip(
            true,
            ErrorClass::NotFound,
            format!(
                "it has no library for {platform} (it has {}); add one built for {}",
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                },
                platform.rust_target()
            ),
        ));
    };
    if let Some(problem) = unsafe_entry(entry) {
        return Err(skip(
            true,
            ErrorClass::InitFailed,
            format!("the library entry `{entry}` is refused: {problem}"),
        ));
    }
    Ok(Some(entry.clone()))
}

/// Opens a package without waiting on a named pipe, and only a regular file: see
/// [`sparkds::open_regular`].
fn open_package(package: &Path) -> std::result::Result<File, String> {
    sparkds::open_regular(package).map_err(|e| format!("cannot open it: {e}"))
}

/// The zip archive of an open package, after its structure is checked as `sparkds verify`
/// checks it, so that a hostile package (a zip bomb, thousands of entries, colliding or
/// overlapping entries) is refused before anything is decompressed. What is checked is what is
/// read: the same open file.
fn checked_archive(mut file: File) -> std::result::Result<ZipArchive<File>, String> {
    let findings = sparkds_package::verify::check_open_structure(
        &mut file,
        &sparkds_package::verify::Limits::default(),
    )
    .map_err(|e| format!("cannot read it: {e}"))?;
    if let Some(finding) = findings.first() {
        return Err(format!(
            "`sparkds verify` refuses it: {}: {}",
            finding.file, finding.message
        ));
    }
    file.rewind().map_err(|e| format!("cannot read it: {e}"))?;
    ZipArchive::new(file).map_err(|e| format!("it is not a zip archive: {e}"))
}

/// The manifest of each package read, with the package's stamp then: a query does not check
/// and parse again a package that is unchanged (see [`Stamp`]).
static MANIFESTS: LazyLock<Mutex<HashMap<PathBuf, (Stamp, Manifest)>>> =
    LazyLock::new(Mutex::default);

fn read_manifest(package: &Path) -> std::result::Result<Manifest, String> {
    let file = open_package(package)?;
    let stamp = Stamp::of(&file, SystemTime::now());
    let known = |manifests: &HashMap<PathBuf, (Stamp, Manifest)>| {
        let (then, manifest) = manifests.get(package)?;
        (Some(*then) == stamp).then(|| manifest.clone())
    };
    if let Some(manifest) = known(&MANIFESTS.lock().unwrap_or_else(PoisonError::into_inner)) {
        return Ok(manifest);
    }
    let mut archive = checked_archive(file)?;
    let entry = archive
        .by_name(MANIFEST_NAME)
        .map_err(|_| format!("it has no {MANIFEST_NAME} at its root"))?;
    let mut bytes = Vec::new();
    entry
        .take(MAX_MANIFEST_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read its manifest: {e}"))?;
    let manifest =
        Manifest::parse(&bytes).map_err(|e| format!("its manifest is not valid: {e}"))?;
    if let Some(stamp) = stamp {
        MANIFESTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(package.to_path_buf(), (stamp, manifest.clone()));
    }
    Ok(manifest)
}

/// Why an entry name could point outside the package's root, if it could: such a manifest is
/// refused, as `sparkds verify` refuses it.
fn unsafe_entry(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("the path is empty");
    }
    if name.contains('\\') || name.as_bytes().get(1) == Some(&b':') {
        return Some("the path has a backslash or a drive: paths in a package use `/`");
    }
    for component in Path::new(name).components() {
        match component {
            Component::Normal(_) => {}
            Component::CurDir => {}
            Component::ParentDir => {
                return Some("the path contains `..`: paths in a package stay inside it")
            }
            Component::RootDir | Component::Prefix(_) => {
                return Some("the path is absolute: paths in a package are relative to its root")
            }
        }
    }
    None
}

/// The library `entry` of `package`: read into memory after the checks of [`checked_archive`],
/// unless the package is unchanged since this JVM loaded that entry.
fn read_entry(package: &Path, entry: &str) -> std::result::Result<Located, String> {
    let origin = Origin::Package {
        package: package.to_path_buf(),
        entry: entry.to_string(),
    };
    Located::of(origin, open_package(package)?, |file| {
        let mut archive = checked_archive(file)?;
        let file = archive.by_name(entry).map_err(|_| {
            format!("the manifest names the library `{entry}`, which the package does not hold")
        })?;
        if file.size() > MAX_LIBRARY_BYTES {
            return Err(format!(
                "the library `{entry}` is {} bytes, more than the {MAX_LIBRARY_BYTES} a library may have",
                file.size()
            ));
        }
        read_bounded(file, &format!("the library `{entry}`"))
            .map_err(|e| format!("cannot read the library `{entry}`: {e}"))
    })
}

/// Where an executor looks for the driver's build.
#[derive(Debug, Clone, Default)]
pub struct DriverBuild {
    /// The data source name.
    pub name: String,
    /// The SHA-256 of the driver's build.
    pub sha256: String,
    /// The driver's library file, or the driver's package when `entry` is set: only a hint,
    /// since this node may hold something else there.
    pub driver_path: PathBuf,
    /// The package's entry that the driver loaded, for a build that came in a package.
    pub entry: Option<String>,
    /// Copies of the driver's package on this node (the session's files), tried first.
    pub package_files: Vec<PathBuf>,
}

/// On an executor: the driver's build. The candidates are the copies of the driver's package
/// on this node, the driver's path, then the libraries named after the data source in
/// `library_dirs`; each is read and hashed, and only the one whose SHA-256 is the driver's is
/// returned.
///
/// # Errors
///
/// NOT_FOUND, naming the driver's checksum and every candidate seen with its own.
pub fn locate_build(wanted: &DriverBuild, library_dirs: &[PathBuf]) -> Result<Located> {
    let name = data_source_name(&wanted.name)?;
    let sha256 = wanted.sha256.to_ascii_lowercase();
    let mut seen = Vec::new();
    let mut consider = |candidate: std::result::Result<Located, String>,
                        what: &dyn Fn() -> String| {
        match candidate {
            Ok(build) if build.sha256() == sha256 => Some(build),
            Ok(build) => {
                seen.push(format!("{} (SHA-256 {})", build.origin(), build.sha256()));
                None
            }
            Err(reason) => {
                seen.push(format!("{} ({reason})", what()));
                None
            }
        }
    };
    if let Some(entry) = &wanted.entry {
        let packages = wanted.package_files.iter().chain([&wanted.driver_path]);
        // A path that exists but is not a regular file is named in the error with its reason.
        for package in packages.filter(|p| p.exists()) {
            let build = read_entry(package, entry);
            if let Some(build) = consider(build, &|| package.display().to_string()) {
                return Ok(build);
            }
        }
    }
    let file = Os::current().library_file_name(&name);
    let files = wanted
        .entry
        .is_none()
        .then(|| wanted.driver_path.clone())
        .into_iter()
        .chain(absolute_dirs(library_dirs).map(|d| d.join(&file)));
    for path in files.filter(|p| p.exists()) {
        let build = library_file(&path).map_err(|e| format!("unreadable: {e}"));
        if let Some(build) = consider(build, &|| path.display().to_string()) {
            return Ok(build);
        }
    }
    let dirs: Vec<String> = absolute_dirs(library_dirs)
        .map(|d| d.display().to_string())
        .collect();
    Err(Error::new(
        ErrorClass::NotFound,
        format!(
            "native data source `{name}`: this executor has no build with the driver's SHA-256 {sha256}: {}; searched {}{}{} and the native library path ({}); install the driver's build on every node, at the same path or in the native library path, or add it in a package",
            if seen.is_empty() {
                "it has none".to_string()
            } else {
                format!("it has {}", seen.join(", "))
            },
            session_copies(wanted),
            wanted.driver_path.display(),
            wanted.entry.as_ref().map(|e| format!(" (entry `{e}`)")).unwrap_or_default(),
            if dirs.is_empty() { "empty".to_string() } else { dirs.join(", ") },
        ),
    ))
}

/// The session's copies of the driver's package that an executor looked for, as the message of
/// a missing build names them: "the session's copies a, b; ", or "" when there were none.
fn session_copies(wanted: &DriverBuild) -> String {
    if wanted.entry.is_none() || wanted.package_files.is_empty() {
        return String::new();
    }
    let copies: Vec<String> = wanted
        .package_files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    format!("the session's copies {}; ", copies.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_that_escape_are_refused() {
        assert_eq!(unsafe_entry("linux-x86_64/libx.so"), None);
        assert!(unsafe_entry("../libx.so").is_some());
        assert!(unsafe_entry("a/../../libx.so").is_some());
        assert!(unsafe_entry("/etc/libx.so").is_some());
        assert!(unsafe_entry("C:/x.dll").is_some());
        assert!(unsafe_entry("a\\..\\x.dll").is_some());
    }

    #[test]
    fn names_are_looked_up_in_lower_case() {
        assert_eq!(data_source_name("C_Range").expect("valid"), "c_range");
        assert_eq!(
            data_source_name("a/b").expect_err("refused").class,
            ErrorClass::IllegalArgument
        );
        if cfg!(target_os = "linux") {
            assert_eq!(
                Os::current().library_file_name("c_range"),
                "libspark_datasource_c_range.so"
            );
        }
    }
}
