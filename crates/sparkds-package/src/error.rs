//! The one error type of the crate: what stops writing a package or checking one, as a usage
//! error naming what was wrong and the fix, or an I/O error naming the file; and the
//! constructors of each message. A package that opens but breaks a rule is not an error:
//! `verify` reports those as findings, all of them.

use std::path::PathBuf;

/// What stops `package` or `verify`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller gave something that cannot be used: the message names it and the fix.
    #[error("{0}")]
    Usage(String),
    /// An I/O operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// The result of the crate's functions.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// `n` and `noun`, plural when `n` is not 1: "1 component", "3 components".
pub fn count(n: impl Into<i128>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// An I/O error on `path`.
pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::io(path.display().to_string(), source)
}

/// A package that cannot be opened as a zip archive.
pub(crate) fn zip_read(path: impl Into<PathBuf>) -> impl FnOnce(zip::result::ZipError) -> Error {
    let path = path.into();
    move |e| {
        Error::usage(format!(
            "{}: not a readable zip archive ({e}); a `.sparkpkg` is a zip file",
            path.display()
        ))
    }
}
