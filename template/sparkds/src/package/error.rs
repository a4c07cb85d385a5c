//! The errors of `sparkds package` and `sparkds verify` that stop the command: bad arguments and
//! unreadable files. A package that opens but breaks a rule is not an error here: `verify`
//! collects those as findings and reports all of them.

use std::path::PathBuf;

/// What stopped `package` or `verify`. Every message names what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--library` was not `<platform>=<path>`.
    #[error("`--library {0}` must be `<platform>=<path>`, e.g. `linux-x86_64=target/release/libspark_datasource_my_source.so`")]
    LibraryArgument(String),
    /// A platform key Spark does not know.
    #[error("unknown platform `{key}`: use one of {known}")]
    UnknownPlatform {
        /// The key given.
        key: String,
        /// The known keys.
        known: String,
    },
    /// The same platform was given twice.
    #[error("platform `{0}` is given twice: a package holds one library per platform")]
    DuplicatePlatform(String),
    /// An invalid data source name.
    #[error("data source name `{0}` is invalid: use lower case letters, digits and `_`, starting with a letter")]
    DataSourceName(String),
    /// A library whose file name is not the one Spark looks for.
    #[error("library `{path}` for {platform} must be named {expected}: Spark finds a library by this name")]
    LibraryFileName {
        /// The file given.
        path: PathBuf,
        /// Its platform key.
        platform: String,
        /// The accepted names.
        expected: String,
    },
    /// Nothing to package.
    #[error("no library to package: pass `--library <platform>=<path>` or `--dir <directory>` with one `<platform>/` directory per library")]
    NoLibrary,
    /// A platform directory of `--dir` that does not hold exactly one file.
    #[error("`{0}` must hold exactly one library file")]
    PlatformDirectory(PathBuf),
    /// A version that cannot be part of a file name.
    #[error("version `{0}` is invalid: use letters, digits, `.`, `-` and `+`, e.g. `0.1.0`")]
    Version(String),
    /// `--glibc` was not `<major>.<minor>`.
    #[error("`--glibc {0}` must be a glibc version such as `2.28`")]
    GlibcBaseline(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The package could not be written or opened as a zip archive.
    #[error("{path}: not a readable zip archive ({source}); a `.sparkpkg` is a zip file")]
    Zip {
        /// The package.
        path: PathBuf,
        /// The zip error.
        source: zip::result::ZipError,
    },
    /// The manifest could not be serialized.
    #[error("cannot write the manifest: {0}")]
    Manifest(#[from] serde_json::Error),
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }

    /// A zip error on `path`.
    pub fn zip(path: impl Into<PathBuf>) -> impl FnOnce(zip::result::ZipError) -> Error {
        let path = path.into();
        move |source| Error::Zip { path, source }
    }
}
