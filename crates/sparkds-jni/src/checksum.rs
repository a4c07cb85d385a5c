//! SHA-256 in lower-case hex, as `sha256sum` prints it. Nothing is remembered between calls:
//! a size, a modification time or an inode can be set or reused by whoever writes the file, so
//! only the bytes themselves say which build a file holds (what spares reading an unchanged
//! file again is its status-change time too, which only the kernel sets: see [`crate::stamp`]).

use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

/// The SHA-256 of the file at `path` (opened as [`sparkds::open_regular`] opens it).
///
/// # Errors
///
/// When the file cannot be read, or is not a regular file.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut file = sparkds::open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// The SHA-256 of `bytes`.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_hashes_as_sha256sum_prints_it_and_again_after_any_change() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("f");
        std::fs::write(&path, b"abc").expect("written");
        assert_eq!(
            sha256_file(&path).expect("hashed"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // The same size and modification time, other bytes: hashed again, never remembered.
        let modified = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("mtime");
        std::fs::write(&path, b"abd").expect("rewritten");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(modified))
            .expect("mtime set back");
        assert_eq!(sha256_file(&path).expect("hashed"), sha256_bytes(b"abd"));
    }
}
