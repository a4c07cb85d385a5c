//! Opening a file that is about to be hashed, checked or loaded, without waiting on what is not
//! a regular file: the host, the package format and the JVM plugin's JNI library read
//! libraries and packages that anyone may have put where they look.

use std::fs::File;
use std::path::Path;

/// Opens the file at `path` for reading, as a library or a package that is about to be hashed,
/// checked or loaded: without waiting (a named pipe opens at once instead of blocking until a
/// writer comes; a device does not become the process's terminal), then checked on the open
/// descriptor itself, so that what is read is the regular file that was checked. Links are
/// followed: an installed library is often one.
///
/// # Errors
///
/// When the file cannot be opened, or is not a regular file: the message says what it is (`it
/// is a named pipe (FIFO), not a regular file`), and the caller names the path.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    let file = options.open(path)?;
    let file_type = file.metadata()?.file_type();
    if file_type.is_file() {
        return Ok(file);
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file", file_kind(&file_type)),
    ))
}

/// What a file that is not a regular file is, for messages.
fn file_kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "neither a file nor a directory"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_refused_as_what_it_is() {
        let error = open_regular(Path::new(env!("CARGO_MANIFEST_DIR"))).expect_err("a directory");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(error.to_string(), "it is a directory, not a regular file");
    }
}
