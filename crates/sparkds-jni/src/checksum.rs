//! SHA-256 of files, remembered per file while its size, modification time and identity stay
//! the same: executors check the driver's build on every task, and hashing a library of
//! megabytes each time would cost more than the task.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// What identifies the content of a file without reading it.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// Device, inode and status change time: `cp -p` over a file keeps its size and
    /// modification time, but not its change time, which no one can set.
    #[cfg(unix)]
    inode: (u64, u64, i64, i64),
}

fn stamp(metadata: &fs::Metadata) -> Stamp {
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    Stamp {
        len: metadata.len(),
        modified: metadata.modified().ok(),
        #[cfg(unix)]
        inode: (
            metadata.dev(),
            metadata.ino(),
            metadata.ctime(),
            metadata.ctime_nsec(),
        ),
    }
}

static KNOWN: Mutex<Option<HashMap<PathBuf, (Stamp, String)>>> = Mutex::new(None);

/// The SHA-256 of the file at `path`, in lower-case hex as `sha256sum` prints it.
///
/// # Errors
///
/// When the file cannot be read.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let metadata = fs::metadata(path)?;
    let now = stamp(&metadata);
    let mut known = KNOWN.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((was, sum)) = known.get_or_insert_with(HashMap::new).get(path) {
        if *was == now {
            return Ok(sum.clone());
        }
    }
    drop(known);
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    let sum = hex(&hasher.finalize());
    // The stamp read before the hash: a file changed meanwhile gets another stamp, so a later
    // call hashes it again rather than trusting this sum.
    KNOWN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(path.to_path_buf(), (now, sum.clone()));
    Ok(sum)
}

/// The SHA-256 of `bytes`, in lower-case hex.
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
    fn a_file_hashes_as_sha256sum_prints_it_and_again_after_a_change() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("f");
        fs::write(&path, b"abc").expect("written");
        assert_eq!(
            sha256_file(&path).expect("hashed"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        fs::write(&path, b"abcd").expect("rewritten");
        assert_eq!(sha256_file(&path).expect("hashed"), sha256_bytes(b"abcd"));
    }
}
