//! What says that a file is unchanged since this process read it, so that a query does not read
//! and hash a library (or a package) that it read and loaded before: the file's device, inode,
//! size, modification time and status-change time (`ctime`).
//!
//! A writer can set a file's size and modification time, and a new file can reuse an inode, but
//! only the kernel sets `ctime`: any write, rename onto the path or `utimensat` moves it to the
//! present. A stamp is only given for a file whose times are older than [`SETTLED`]: a file
//! changed within the same tick of a coarse clock (a file system of one-second times) would keep
//! its stamp, and so is read every time until it has settled. Windows exposes no `ctime` to the
//! standard library, so there every query reads the file, as before.

use std::fs::File;
use std::time::{Duration, SystemTime};

/// How long a file must have stayed unchanged before its stamp stands for its bytes: more than
/// the coarsest clock of a file system a library is installed on (FAT's two seconds).
pub const SETTLED: Duration = Duration::from_secs(3);

/// A file's identity and times, as `fstat` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    device: u64,
    inode: u64,
    size: u64,
    modified_ns: i128,
    changed_ns: i128,
}

impl Stamp {
    /// The stamp of the open `file`, or `None` when it changed less than [`SETTLED`] before
    /// `now`, when its times cannot be read, or off Unix.
    pub fn of(file: &File, now: SystemTime) -> Option<Stamp> {
        Self::read(file).filter(|stamp| stamp.settled(now))
    }

    #[cfg(unix)]
    fn read(file: &File) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        Some(Stamp {
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.size(),
            modified_ns: ns(meta.mtime(), meta.mtime_nsec()),
            changed_ns: ns(meta.ctime(), meta.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn read(_file: &File) -> Option<Stamp> {
        None
    }

    fn settled(&self, now: SystemTime) -> bool {
        let Ok(since_epoch) = now.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let before = since_epoch.saturating_sub(SETTLED).as_nanos() as i128;
        self.modified_ns < before && self.changed_ns < before
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    fn later() -> SystemTime {
        SystemTime::now() + SETTLED + Duration::from_secs(1)
    }

    #[test]
    fn a_file_keeps_its_stamp_until_it_is_written_or_replaced() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("lib.so");
        std::fs::write(&path, b"one").expect("written");
        let stamp = || Stamp::of(&File::open(&path).expect("opened"), later());
        let first = stamp().expect("settled by then");
        assert_eq!(stamp(), Some(first));

        // The same size and modification time written back: ctime still moves.
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all(b"two").unwrap();
        file.set_modified(modified).unwrap();
        drop(file);
        let rewritten = stamp().expect("settled by then");
        assert_ne!(rewritten, first);

        // Replaced by a rename: another inode, or at least another ctime.
        std::thread::sleep(Duration::from_millis(20));
        let other = dir.path().join("new.so");
        std::fs::write(&other, b"two").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_ne!(stamp(), Some(rewritten));
    }

    #[test]
    fn a_file_changed_within_the_settling_time_has_no_stamp() {
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join("lib.so");
        std::fs::write(&path, b"fresh").expect("written");
        let file = File::open(&path).expect("opened");
        assert_eq!(Stamp::of(&file, SystemTime::now()), None);
        assert!(Stamp::of(&file, later()).is_some());
    }
}
