//! The messages of what stops writing a package: a usage error naming the argument and the
//! fix, or an I/O error naming the file.

use std::path::{Path, PathBuf};

pub(crate) use crate::error::io;
use crate::error::Error;

/// `--library` was not `<platform>=<path>`.
pub(crate) fn library_argument(arg: &str) -> Error {
    Error::usage(format!("`--library {arg}` must be `<platform>=<path>`, e.g. `linux-x86_64=target/release/libspark_datasource_my_source.so`"))
}

/// A platform key Spark does not know.
pub(crate) fn unknown_platform(key: &str, known: &str) -> Error {
    Error::usage(format!("unknown platform `{key}`: use one of {known}"))
}

/// The same platform was given twice.
pub(crate) fn duplicate_platform(key: &str) -> Error {
    Error::usage(format!(
        "platform `{key}` is given twice: a package holds one library per platform"
    ))
}

/// An invalid data source name.
pub(crate) fn data_source_name(name: &str) -> Error {
    Error::usage(format!("data source name `{name}` is invalid: use lower case letters, digits and `_`, starting with a letter"))
}

/// A library whose file name is not the one Spark looks for.
pub(crate) fn library_file_name(path: &Path, platform: &str, expected: &str) -> Error {
    Error::usage(format!(
        "library `{}` for {platform} must be named {expected}: Spark finds a library by this name",
        path.display()
    ))
}

/// Nothing to package.
pub(crate) fn no_library() -> Error {
    Error::usage("no library to package: pass `--library <platform>=<path>` or `--dir <directory>` with one `<platform>/` directory per library")
}

/// A platform directory of `--dir` that does not hold exactly one file.
pub(crate) fn platform_directory(dir: &Path) -> Error {
    Error::usage(format!(
        "`{}` must hold exactly one library file",
        dir.display()
    ))
}

/// A version that cannot be part of a file name.
pub(crate) fn version(version: &str) -> Error {
    Error::usage(format!(
        "version `{version}` is invalid: use letters, digits, `.`, `-` and `+`, e.g. `0.1.0`"
    ))
}

/// The manifest could not be serialized (it only holds strings and integers).
pub(crate) fn manifest(e: serde_json::Error) -> Error {
    Error::usage(format!("cannot write the manifest: {e}"))
}

/// A package that cannot be written.
pub(crate) fn zip_write(path: impl Into<PathBuf>) -> impl FnOnce(zip::result::ZipError) -> Error {
    let path = path.into();
    move |e| Error::usage(format!("{}: cannot write the package: {e}", path.display()))
}

/// `cargo metadata` or `cargo tree` failed, online and offline.
pub(crate) fn cargo_metadata(command: &str, manifest_path: &Path, stderr: &str) -> Error {
    Error::usage(format!(
        "`cargo {command}` failed for `{}`, whose dependency graph the third-party notices and the SBOM are made from: {}; fix it, or pass --no-notices to package without them",
        manifest_path.display(),
        stderr.trim()
    ))
}

/// The output of `cargo metadata` did not parse.
pub(crate) fn metadata(manifest_path: &Path, e: &serde_json::Error) -> Error {
    Error::usage(format!(
        "cannot read the output of `cargo metadata` for `{}`: {e}",
        manifest_path.display()
    ))
}

/// `cargo metadata` gave no dependency graph.
pub(crate) fn metadata_without_resolve(manifest_path: &Path) -> Error {
    Error::usage(format!(
        "`cargo metadata` for `{}` gave no dependency graph (`resolve`)",
        manifest_path.display()
    ))
}

/// No package of the workspace builds the library.
pub(crate) fn no_library_package(manifest_path: &Path, libraries: &[String]) -> Error {
    let libraries: Vec<String> = libraries.iter().map(|l| format!("`{l}`")).collect();
    Error::usage(format!(
        "no package of the cargo workspace of `{}` builds the cdylib {}: pass --manifest-path with the Cargo.toml of the library's package",
        manifest_path.display(),
        libraries.join(" or ")
    ))
}

/// A notices or SBOM file given with `--notices` or `--sbom` that breaks a rule of `verify`.
pub(crate) fn attachment(path: &Path, problems: &[String]) -> Error {
    Error::usage(format!(
        "`{}` cannot go into the package: {}",
        path.display(),
        problems.join("; ")
    ))
}
