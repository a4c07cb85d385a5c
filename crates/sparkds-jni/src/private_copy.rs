//! The private copy that a build is loaded from. `dlopen` takes a path, and a path that another
//! user (or another process) can write to can be replaced between the check of its SHA-256 and
//! the load. So the bytes that were hashed are written into a directory that this process
//! creates (a fresh name, mode 0700 on Unix, owner and mode checked after creation), and the
//! library is loaded from there. On Unix the copy is removed as soon as it is loaded: the
//! mapping stays, and nothing is left on disk.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::build::Build;

/// A loadable private copy of a build; dropping it removes what can be removed.
pub struct PrivateCopy {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl PrivateCopy {
    /// Writes `build`'s bytes into a new private directory under `base` (the system's
    /// temporary directory when `base` is empty or does not exist), under the library's own
    /// file name, so that its data source name reads as the original's.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created, is not private after its creation, or the copy
    /// cannot be written.
    pub fn write(build: &Build, base: &Path) -> Result<PrivateCopy, String> {
        let base = if base.as_os_str().is_empty() || !base.is_dir() {
            std::env::temp_dir()
        } else {
            base.to_path_buf()
        };
        // A random name, created with mkdir (which fails rather than reuse a directory that
        // exists), mode 0700 from the start.
        let mut builder = tempfile::Builder::new();
        builder.prefix("sparkds-load-");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let dir = builder.tempdir_in(&base).map_err(|e| {
            format!(
                "cannot create a private directory in {}: {e}",
                base.display()
            )
        })?;
        check_private(dir.path())?;
        let path = dir.path().join(build.origin.file_name());
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o700);
        options
            .open(&path)
            .and_then(|mut file| file.write_all(&build.bytes).and_then(|()| file.sync_all()))
            .map_err(|e| format!("cannot write the private copy {}: {e}", path.display()))?;
        Ok(PrivateCopy {
            dir: Some(dir),
            path,
        })
    }

    /// Where the copy is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Called once the library is loaded from the copy: on Unix the file and its directory are
    /// removed (the loaded mapping stays valid); on Windows a loaded DLL cannot be removed, so
    /// the directory is kept.
    pub fn loaded(mut self) {
        if cfg!(windows) {
            if let Some(dir) = self.dir.take() {
                let _ = dir.keep();
            }
        }
    }
}

/// Checks that `dir` is a directory (not a link), owned by this process's user and closed to
/// every other user.
///
/// # Errors
///
/// Naming what is wrong.
pub fn check_private(dir: &Path) -> Result<(), String> {
    let metadata = fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read the private directory {}: {e}", dir.display()))?;
    if !metadata.is_dir() {
        return Err(format!(
            "{} is not a directory of its own (a link or a file)",
            dir.display()
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let user = unsafe { libc::geteuid() };
        if metadata.uid() != user {
            return Err(format!(
                "the private directory {} belongs to user {}, not to this process's user {user}",
                dir.display(),
                metadata.uid()
            ));
        }
        if metadata.mode() & 0o077 != 0 {
            return Err(format!(
                "the private directory {} has mode {:o}: other users could replace the library in it",
                dir.display(),
                metadata.mode() & 0o777
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::Origin;

    #[test]
    fn a_copy_is_written_in_a_fresh_private_directory_and_removed_once_loaded() {
        let base = tempfile::tempdir().expect("a base");
        let build = Build::new(
            b"library bytes".to_vec(),
            Origin::File("/somewhere/libspark_datasource_x.so".into()),
        );
        let copy = PrivateCopy::write(&build, base.path()).expect("written");
        assert_eq!(fs::read(copy.path()).expect("read"), b"library bytes");
        assert_eq!(
            copy.path().file_name().expect("a name"),
            "libspark_datasource_x.so"
        );
        let dir = copy.path().parent().expect("a directory").to_path_buf();
        check_private(&dir).expect("private");
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            assert_eq!(fs::metadata(&dir).expect("dir").mode() & 0o777, 0o700);
        }
        // A second copy of the same build gets a directory of its own.
        let other = PrivateCopy::write(&build, base.path()).expect("written again");
        assert_ne!(other.path(), copy.path());
        copy.loaded();
        if cfg!(unix) {
            assert!(!dir.exists(), "the copy is removed once loaded");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_that_others_can_write_is_not_private() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().expect("a base");
        let open = base.path().join("open");
        fs::create_dir(&open).expect("created");
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).expect("chmod");
        let e = check_private(&open).expect_err("open to all");
        assert!(
            e.ends_with("has mode 777: other users could replace the library in it"),
            "{e}"
        );
        let link = base.path().join("link");
        std::os::unix::fs::symlink(base.path(), &link).expect("a link");
        let e = check_private(&link).expect_err("a link");
        assert!(
            e.ends_with("is not a directory of its own (a link or a file)"),
            "{e}"
        );
    }
}
