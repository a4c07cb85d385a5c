//! A build of a library: the bytes of the file (or of the package entry) read once, and their
//! SHA-256. What is hashed is what is loaded: [`crate::loaded`] loads these bytes from a private
//! copy ([`crate::private_copy`]), never by opening the original path again, so nothing can
//! replace the file between its check and its `dlopen`.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::checksum::sha256_bytes;
use crate::error::{Error, ErrorClass};
use crate::stamp::Stamp;

/// The largest library that is read: bounds what a hostile file or package entry makes this
/// process allocate. `sparkds verify` accepts entries of at most 512 MiB.
pub const MAX_LIBRARY_BYTES: u64 = 1 << 30;

/// Where the bytes of a build came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// An installed library file.
    File(PathBuf),
    /// The entry `entry` of the package file `package`.
    Package { package: PathBuf, entry: String },
}

impl Origin {
    /// The path a message names: the file, or the package.
    pub fn path(&self) -> &Path {
        match self {
            Origin::File(path) => path,
            Origin::Package { package, .. } => package,
        }
    }

    /// The entry of a package, or `None` for a file.
    pub fn entry(&self) -> Option<&str> {
        match self {
            Origin::File(_) => None,
            Origin::Package { entry, .. } => Some(entry),
        }
    }

    /// The library's file name: the last part of the file's path or of the package entry.
    pub fn file_name(&self) -> String {
        let name = match self {
            Origin::File(path) => path.file_name().map(|n| n.to_string_lossy().into_owned()),
            Origin::Package { entry, .. } => entry.rsplit('/').next().map(str::to_string),
        };
        name.unwrap_or_default()
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::Package { package, entry } => {
                write!(f, "`{entry}` of the package {}", package.display())
            }
        }
    }
}

/// The bytes of a library and their SHA-256.
#[derive(Clone)]
pub struct Build {
    pub bytes: Vec<u8>,
    /// Lower-case hex, as `sha256sum` prints it.
    pub sha256: String,
    pub origin: Origin,
    /// The stamp of the file the bytes were read from (the package's, for an entry), taken
    /// before they were read: while the file keeps it, it holds these bytes.
    pub stamp: Option<Stamp>,
}

impl std::fmt::Debug for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Build")
            .field("bytes", &self.bytes.len())
            .field("sha256", &self.sha256)
            .field("origin", &self.origin)
            .field("stamp", &self.stamp)
            .finish()
    }
}

impl Build {
    /// `bytes` from `origin`, hashed.
    pub fn new(bytes: Vec<u8>, origin: Origin) -> Build {
        Build {
            sha256: sha256_bytes(&bytes),
            bytes,
            origin,
            stamp: None,
        }
    }

    /// The same build, read from a file that had `stamp` before it was read.
    pub fn stamped(self, stamp: Option<Stamp>) -> Build {
        Build { stamp, ..self }
    }

    /// Reads the library file at `path`, once, opened as [`sparkds::open_regular`] opens it:
    /// without waiting on a named pipe, and only if it is a regular file.
    ///
    /// # Errors
    ///
    /// When it cannot be opened or read, is not a regular file, or is larger than
    /// [`MAX_LIBRARY_BYTES`].
    pub fn read_file(path: &Path) -> std::io::Result<Build> {
        let file = sparkds::open_regular(path)?;
        let bytes = read_bounded(file, &path.display().to_string())?;
        Ok(Build::new(bytes, Origin::File(path.to_path_buf())))
    }

    /// The data source name of the library's file name: `libspark_datasource_<name>.so` gives
    /// `<name>`, for messages and its log.
    pub fn data_source_name(&self) -> String {
        spark_datasource_core::library_file::name_for_create(&self.origin.file_name())
    }
}

/// The error of a library file at `path` that [`Build::read_file`] could not read: INIT_FAILED
/// for what is not a regular file (a named pipe, a device, a directory), which no loader can
/// load, NOT_FOUND for a file that cannot be read.
pub fn unreadable(path: &Path, e: &std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::InvalidInput {
        return Error::new(
            ErrorClass::InitFailed,
            format!(
                "the library {} is refused: {e}; put the library's file there, or remove what is there",
                path.display()
            ),
        );
    }
    Error::new(
        ErrorClass::NotFound,
        format!("cannot read the library {}: {e}", path.display()),
    )
}

/// Everything `reader` holds, refusing more than [`MAX_LIBRARY_BYTES`] (`what` names it).
pub fn read_bounded(reader: impl Read, what: &str) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader.take(MAX_LIBRARY_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_LIBRARY_BYTES {
        return Err(std::io::Error::other(format!(
            "{what} is larger than the {MAX_LIBRARY_BYTES} bytes a library may have"
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_names_its_file_and_data_source_wherever_it_came_from() {
        let file = Build::new(
            b"x".to_vec(),
            Origin::File("/lib/libspark_datasource_C_Range.so".into()),
        );
        assert_eq!(file.data_source_name(), "c_range");
        assert_eq!(
            file.sha256,
            "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        );
        let entry = Build::new(
            Vec::new(),
            Origin::Package {
                package: "/p/x.sparkpkg".into(),
                entry: "linux-x86_64/libspark_datasource_x.so".into(),
            },
        );
        assert_eq!(entry.origin.file_name(), "libspark_datasource_x.so");
        assert_eq!(entry.data_source_name(), "x");
        assert_eq!(
            entry.origin.to_string(),
            "`linux-x86_64/libspark_datasource_x.so` of the package /p/x.sparkpkg"
        );
    }
}
