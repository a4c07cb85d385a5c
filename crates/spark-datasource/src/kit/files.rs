//! Staged file writes: each task attempt writes one part file where no reader looks,
//! `<root>/_staging/<query>/<batch|epoch-N>/`, and the driver's commit publishes the parts in
//! one atomic step of the connector's choosing, usually a [`Manifest`] replaced by one rename.
//!
//! It stands on the two-phase skeleton ([`write`](mod@super::write)), so its rules hold here
//! too: a retried partition is published once or not at all, a failed, aborted or killed
//! attempt removes its part, an abort removes every part. Besides, a commit message names a
//! part of this write's staging and nothing else (messages cross the network), a task that
//! starts after the write was aborted fails rather than leave a part behind, and staging left by
//! a driver that died is removed a day later by the next commit into the same directory.
//!
//! The connector implements [`FileTable`]: its directory, the format of a part, and how a
//! commit publishes the parts; its `Write::Writer` is [`FileWriter<T>`].
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use serde::{Deserialize, Serialize};
//! use spark_datasource::arrow_array::RecordBatch;
//! use spark_datasource::kit::files::{self, FileTable, Manifest, Part, PartOut, StagedFiles};
//! use spark_datasource::{Result, TaskContext, Writer, DataWriter};
//!
//! /// Row counts, one line a batch, listed in `_manifest.json`.
//! #[derive(Clone, Serialize, Deserialize)]
//! struct Counts {
//!     root: PathBuf,
//! }
//!
//! impl FileTable for Counts {
//!     fn root(&self) -> &Path {
//!         &self.root
//!     }
//!     fn extension(&self) -> &str {
//!         "txt"
//!     }
//!     fn write_rows(&self, batch: &RecordBatch, out: &mut PartOut) -> Result<()> {
//!         use std::io::Write as _;
//!         writeln!(out, "{}", batch.num_rows()).map_err(|e| out.error(e))
//!     }
//!     fn publish(&mut self, query: &str, _epoch: Option<u64>, parts: Vec<Part>) -> Result<()> {
//!         let manifest_path = self.root.join("_manifest.json");
//!         let mut manifest = Manifest::load(&manifest_path)?.unwrap_or_default();
//!         for part in parts {
//!             let file = format!("{query}-{}", part.name);
//!             files::rename(&part.path, &self.root.join(&file))?;
//!             manifest.files.push(file);
//!         }
//!         manifest.version += 1;
//!         manifest.publish(&manifest_path)
//!     }
//! }
//!
//! let dir = tempfile::tempdir()?;
//! let mut writer = StagedFiles::writer(Counts { root: dir.path().into() }, "query-1")?;
//! let mut task = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
//! let message = task.commit()?;
//! writer.commit(None, vec![message])?;
//! let manifest = Manifest::load(&dir.path().join("_manifest.json"))?.expect("published");
//! assert_eq!(manifest.files, ["query-1-part-00000-attempt-0-task-0.txt"]);
//! // Nothing is left of the staging.
//! assert!(!dir.path().join(files::STAGING).exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufWriter, ErrorKind, Write as _};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use arrow_array::RecordBatch;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::write::{Staged, TwoPhase};
use crate::{Error, Result, TaskContext};

/// The directory, under a table's root, where writes stage their parts.
pub const STAGING: &str = "_staging";

/// How long the staging of a write that neither committed nor aborted (its driver died) stays:
/// a commit into the same directory removes it after that. No running write leaves its staging
/// untouched so long, and removing it sooner could fail a write that is still running.
const ABANDONED_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Where a part's rows go: its file, buffered.
pub struct PartOut {
    out: BufWriter<File>,
    path: PathBuf,
}

impl PartOut {
    /// The part's file, where it is staged.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The error of a failed write to the part, naming its file.
    pub fn error(&self, error: io::Error) -> Error {
        io_error(format!("cannot write `{}`", self.path.display()), error)
    }
}

impl io::Write for PartOut {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.out.write(bytes)
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The `Write::Writer` of a connector that writes [`FileTable`]s.
pub type FileWriter<T> = Staged<StagedFiles<T>>;

/// A connector's table of files: where it is, what a part holds, how parts are published.
pub trait FileTable: Clone + Serialize + DeserializeOwned + 'static {
    /// The table's directory: staging goes in its `_staging`.
    fn root(&self) -> &Path;

    /// The file name extension of a part, without the dot.
    fn extension(&self) -> &str;

    /// What a part holds before its rows, a header for instance; nothing by default.
    ///
    /// # Errors
    /// When it cannot be written.
    fn start_part(&self, _out: &mut PartOut) -> Result<()> {
        Ok(())
    }

    /// Writes a batch's rows to a part, in the table's format.
    ///
    /// # Errors
    /// When a value cannot be written in the format, or the file cannot be written.
    fn write_rows(&self, batch: &RecordBatch, out: &mut PartOut) -> Result<()>;

    /// Publishes the parts of a write (of `epoch` for a streaming write) in one atomic step:
    /// moves them where readers look and replaces what lists them. A streaming query that
    /// restarts replays its last epoch: an epoch already published must publish nothing.
    /// Parts left in the staging are removed afterwards.
    ///
    /// # Errors
    /// When the publication fails; it must then have published nothing.
    fn publish(&mut self, query: &str, epoch: Option<u64>, parts: Vec<Part>) -> Result<()>;
}

/// A part that a commit publishes, checked to be one of this write's.
#[derive(Debug)]
pub struct Part {
    /// Where it is staged.
    pub path: PathBuf,
    /// Its file name: `part-<partition>-attempt-<attempt>-task-<task>.<extension>`.
    pub name: String,
    /// The rows it holds.
    pub rows: u64,
}

/// What a task attempt's part reports to the driver.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartMessage {
    /// The part, relative to the table's directory.
    pub file: String,
    /// The rows it holds.
    pub rows: u64,
}

/// The two-phase steps of a write of files into a [`FileTable`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StagedFiles<T> {
    table: T,
    /// The query's ID, kept to safe characters: it names the staging and, usually, files.
    query: String,
}

impl<T: FileTable> StagedFiles<T> {
    /// The writer of query `query_id` into `table`. It makes the query's staging directory,
    /// here on the driver and once: tasks only add to it, so a task that starts after an abort
    /// removed it fails instead of staging a part that nothing would remove.
    ///
    /// # Errors
    /// When the staging directory cannot be made.
    pub fn writer(table: T, query_id: &str) -> Result<FileWriter<T>> {
        let files = StagedFiles {
            table,
            query: safe_name(query_id),
        };
        create_dir(&files.table.root().join(files.query_staging()))?;
        Ok(Staged::new(files))
    }

    /// The table written.
    pub fn table(&self) -> &T {
        &self.table
    }

    /// The query's ID, as it names files: ASCII letters, digits and `-`, the rest `_`.
    pub fn query(&self) -> &str {
        &self.query
    }

    /// The staging of the whole write, relative to the table's directory.
    fn query_staging(&self) -> PathBuf {
        Path::new(STAGING).join(&self.query)
    }

    /// Where the tasks of `epoch` (or of a batch write) stage, relative to the table.
    fn staging_relative(&self, epoch: Option<u64>) -> PathBuf {
        let epoch = epoch.map_or_else(|| "batch".to_string(), |e| format!("epoch-{e}"));
        self.query_staging().join(epoch)
    }

    fn staging(&self, epoch: Option<u64>) -> PathBuf {
        self.table.root().join(self.staging_relative(epoch))
    }

    /// The part that a commit message names, which must be a file staged by this write (of
    /// this epoch), never a path that leaves the staging.
    fn part(&self, epoch: Option<u64>, message: &PartMessage) -> Result<Part> {
        let file = Path::new(&message.file);
        let plain = file
            .components()
            .all(|part| matches!(part, Component::Normal(_)));
        let name = file.file_name().map(|n| n.to_string_lossy().to_string());
        match name {
            Some(name) if plain && file.parent() == Some(&self.staging_relative(epoch)) => {
                Ok(Part {
                    path: self.table.root().join(file),
                    name,
                    rows: message.rows,
                })
            }
            _ => Err(Error::msg(format!(
                "the commit message names `{}`, which is not a file staged by this write",
                message.file
            ))),
        }
    }

    /// Removes what `epoch` staged; for a batch write, the query's staging too, and `_staging`
    /// when no other write uses it.
    fn finish(&self, epoch: Option<u64>) -> Result<()> {
        remove_dir(&self.staging(epoch))?;
        if epoch.is_none() {
            let root = self.table.root();
            remove_dir(&root.join(self.query_staging()))?;
            // Fails, harmlessly, while another write stages there.
            let _ = fs::remove_dir(root.join(STAGING));
        }
        Ok(())
    }
}

/// The part file of one task attempt, being written.
pub struct PartFile {
    out: PartOut,
    relative: String,
    rows: u64,
}

impl<T: FileTable> TwoPhase for StagedFiles<T> {
    type Stage = PartFile;
    type Message = PartMessage;

    fn begin(&self, task: &TaskContext, epoch: Option<u64>) -> Result<PartFile> {
        let staging = self.staging(epoch);
        match fs::create_dir(&staging) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::msg(format!(
                    "the write was aborted or committed before this task started: `{}` is gone",
                    self.table.root().join(self.query_staging()).display()
                )))
            }
            Err(e) if e.kind() != ErrorKind::AlreadyExists => {
                return Err(io_error(
                    format!("cannot create `{}`", staging.display()),
                    e,
                ))
            }
            _ => {}
        }
        // Named after the task attempt: a retried attempt writes a part of its own, and only
        // the one whose message reaches the commit is published.
        let name = format!(
            "part-{:05}-attempt-{}-task-{}.{}",
            task.partition_id(),
            task.attempt_number(),
            task.task_id(),
            self.table.extension()
        );
        let path = staging.join(&name);
        let file = File::create(&path)
            .map_err(|e| io_error(format!("cannot create `{}`", path.display()), e))?;
        let relative = self.staging_relative(epoch).join(&name);
        let mut part = PartFile {
            out: PartOut {
                out: BufWriter::new(file),
                path,
            },
            relative: relative.to_string_lossy().replace('\\', "/"),
            rows: 0,
        };
        if let Err(e) = self.table.start_part(&mut part.out) {
            self.discard_stage(part);
            return Err(e);
        }
        Ok(part)
    }

    fn write(&self, part: &mut PartFile, batch: RecordBatch) -> Result<()> {
        let rows = batch.num_rows() as u64;
        self.table.write_rows(&batch, &mut part.out)?;
        part.rows += rows;
        Ok(())
    }

    fn finish(&self, part: PartFile) -> Result<PartMessage> {
        let PartFile {
            out: PartOut { out, path },
            relative,
            rows,
        } = part;
        // The part must be on disk before the driver publishes it.
        let synced = out
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
            .and_then(|file| file.sync_all());
        if let Err(e) = synced {
            let _ = fs::remove_file(&path);
            return Err(io_error(format!("cannot write `{}`", path.display()), e));
        }
        Ok(PartMessage {
            file: relative,
            rows,
        })
    }

    fn discard_stage(&self, part: PartFile) {
        let PartOut { out, path } = part.out;
        drop(out);
        let _ = fs::remove_file(path);
    }

    fn publish(&mut self, epoch: Option<u64>, staged: Vec<PartMessage>) -> Result<()> {
        let parts = staged
            .iter()
            .map(|message| self.part(epoch, message))
            .collect::<Result<Vec<_>>>()?;
        let query = self.query.clone();
        self.table.publish(&query, epoch, parts)?;
        remove_abandoned(&self.table.root().join(STAGING), &query);
        self.finish(epoch)
    }

    fn discard(&mut self, epoch: Option<u64>, staged: Vec<PartMessage>) -> Result<()> {
        for message in &staged {
            remove_file(&self.part(epoch, message)?.path)?;
        }
        // Attempts that did not report may have left parts: the staging holds them all.
        self.finish(epoch)
    }
}

/// The list of a table's visible files, which a commit replaces in one rename.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Incremented by every commit.
    pub version: u64,
    /// The visible files, relative to the table's directory.
    pub files: Vec<String>,
    /// The last epoch that each streaming query published, so that an epoch replayed after a
    /// restart is not published twice.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub epochs: BTreeMap<String, u64>,
}

impl Manifest {
    /// The manifest at `path`, or `None` where no write has published one yet.
    ///
    /// # Errors
    /// When it cannot be read or is not a manifest.
    pub fn load(path: &Path) -> Result<Option<Manifest>> {
        match fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                Error::msg(format!(
                    "the manifest `{}` is not valid: {e}; it is written by this data source only",
                    path.display()
                ))
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(format!("cannot read `{}`", path.display()), e)),
        }
    }

    /// Records that `query` published `epoch`; `false` when it already had: a restarted query
    /// replays its last epoch, whose rows are published already.
    pub fn record_epoch(&mut self, query: &str, epoch: u64) -> bool {
        if self.epochs.get(query).is_some_and(|&last| last >= epoch) {
            return false;
        }
        self.epochs.insert(query.to_string(), epoch);
        true
    }

    /// Replaces the manifest at `path` with this one, in one atomic rename.
    ///
    /// # Errors
    /// When it cannot be written or renamed.
    pub fn publish(&self, path: &Path) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| Error::msg(e.to_string()))?;
        publish_file(path, &bytes)
    }
}

/// Writes `bytes` to `path` whole or not at all: to a file beside it, synced, then renamed.
///
/// # Errors
/// When the file cannot be written or renamed.
pub fn publish_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let mut file = File::create(&temporary)
        .map_err(|e| io_error(format!("cannot create `{}`", temporary.display()), e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error(format!("cannot write `{}`", temporary.display()), e))?;
    rename(&temporary, path)
}

/// `query_id` with ASCII letters, digits and `-` kept and the rest `_`, for file names.
pub fn safe_name(query_id: &str) -> String {
    query_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// An I/O error with what was being done.
pub fn io_error(context: impl Into<String>, error: io::Error) -> Error {
    Error::io(context, error)
}

/// Makes `path` and its parents.
///
/// # Errors
/// When it cannot, naming the path.
pub fn create_dir(path: &Path) -> Result<()> {
    fs::create_dir_all(path).map_err(|e| io_error(format!("cannot create `{}`", path.display()), e))
}

/// Moves `from` to `to`.
///
/// # Errors
/// When it cannot, naming both.
pub fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(|e| {
        io_error(
            format!("cannot move `{}` to `{}`", from.display(), to.display()),
            e,
        )
    })
}

/// Removes the file `path`, if it is there.
///
/// # Errors
/// When it is there and cannot be removed.
pub fn remove_file(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            Err(io_error(format!("cannot remove `{}`", path.display()), e))
        }
        _ => Ok(()),
    }
}

/// Removes the directory `path` and all in it, if it is there.
///
/// # Errors
/// When it is there and cannot be removed.
pub fn remove_dir(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            Err(io_error(format!("cannot remove `{}`", path.display()), e))
        }
        _ => Ok(()),
    }
}

/// Removes the staging of other queries in `staging` unchanged for `ABANDONED_AFTER`, best
/// effort: what stays is invisible to readers anyway.
fn remove_abandoned(staging: &Path, own_query: &str) {
    let Ok(entries) = fs::read_dir(staging) else {
        return;
    };
    for entry in entries.flatten().filter(|e| e.file_name() != own_query) {
        let age = last_change(&entry.path()).and_then(|t| t.elapsed().ok());
        if age.is_some_and(|age| age > ABANDONED_AFTER) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// The last modification of `path` or of anything under it.
fn last_change(path: &Path) -> Option<SystemTime> {
    let own = fs::symlink_metadata(path).and_then(|m| m.modified()).ok();
    let children = fs::read_dir(path).into_iter().flatten().flatten();
    children
        .filter_map(|e| last_change(&e.path()))
        .chain(own)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataWriter, Writer};
    use std::sync::Arc;

    /// A table of row counts, published by a manifest, whose writes can be made to fail.
    #[derive(Clone, Serialize, Deserialize)]
    struct Counts {
        root: PathBuf,
        fail_publish: bool,
    }

    impl FileTable for Counts {
        fn root(&self) -> &Path {
            &self.root
        }
        fn extension(&self) -> &str {
            "txt"
        }
        fn start_part(&self, out: &mut PartOut) -> Result<()> {
            out.write_all(b"rows\n").map_err(|e| out.error(e))
        }
        fn write_rows(&self, batch: &RecordBatch, out: &mut PartOut) -> Result<()> {
            if batch.num_rows() == 0 {
                return Err(Error::msg("an empty batch"));
            }
            writeln!(out, "{}", batch.num_rows()).map_err(|e| out.error(e))
        }
        fn publish(&mut self, query: &str, epoch: Option<u64>, parts: Vec<Part>) -> Result<()> {
            if self.fail_publish {
                return Err(Error::msg("publication failed"));
            }
            let path = self.root.join("_manifest.json");
            let mut manifest = Manifest::load(&path)?.unwrap_or_default();
            if let Some(epoch) = epoch {
                if !manifest.record_epoch(query, epoch) {
                    return Ok(());
                }
            }
            for part in parts {
                let file = format!("{query}-{}", part.name);
                rename(&part.path, &self.root.join(&file))?;
                manifest.files.push(file);
            }
            manifest.version += 1;
            manifest.publish(&path)
        }
    }

    fn rows(n: usize) -> RecordBatch {
        let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
            "x",
            arrow_schema::DataType::Int64,
            false,
        )]));
        let values = arrow_array::Int64Array::from(vec![1; n]);
        RecordBatch::try_new(schema, vec![Arc::new(values)]).expect("a batch")
    }

    fn table(dir: &tempfile::TempDir) -> Counts {
        Counts {
            root: dir.path().to_path_buf(),
            fail_publish: false,
        }
    }

    /// Every file under `root`, relative to it, sorted.
    fn files(root: &Path) -> Vec<String> {
        fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
            for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, root, out);
                } else if let Ok(relative) = path.strip_prefix(root) {
                    out.push(relative.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let mut out = Vec::new();
        walk(root, root, &mut out);
        out.sort();
        out
    }

    #[test]
    fn a_batch_write_publishes_its_parts_and_leaves_no_staging() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error("tempdir", e))?;
        let mut writer = StagedFiles::writer(table(&dir), "q:1/x")?;
        let mut messages = Vec::new();
        for partition in 0..2 {
            let mut task = writer.data_writer(&TaskContext::for_tests(partition, 0), None)?;
            task.write(rows(3))?;
            messages.push(task.commit()?);
        }
        assert_eq!(messages[0].staged.rows, 3);
        writer.commit(None, messages)?;
        assert_eq!(
            files(dir.path()),
            [
                "_manifest.json",
                "q_1_x-part-00000-attempt-0-task-0.txt",
                "q_1_x-part-00001-attempt-0-task-1.txt"
            ]
        );
        let part = fs::read_to_string(dir.path().join("q_1_x-part-00001-attempt-0-task-1.txt"))
            .map_err(|e| io_error("read", e))?;
        assert_eq!(part, "rows\n3\n");
        assert!(!dir.path().join(STAGING).exists());
        Ok(())
    }

    #[test]
    fn a_commit_message_cannot_name_a_file_outside_the_write_s_staging() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error("tempdir", e))?;
        let writer = StagedFiles::writer(table(&dir), "q1")?;
        let files = writer.connector();
        for file in [
            "_staging/q1/batch/../../../../etc/passwd",
            "/etc/passwd",
            "data/x.txt",
            "_staging/q1/epoch-3/part-00000-attempt-0-task-7.txt",
            "_staging/q2/batch/part-00000-attempt-0-task-7.txt",
        ] {
            let message = PartMessage {
                file: file.to_string(),
                rows: 1,
            };
            let error = files.part(None, &message).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "the commit message names `{file}`, which is not a file staged by this write"
                )
            );
        }
        let staged = PartMessage {
            file: "_staging/q1/epoch-3/part-00000-attempt-0-task-7.txt".to_string(),
            rows: 1,
        };
        let part = files.part(Some(3), &staged)?;
        assert_eq!(part.path, dir.path().join(&staged.file));
        assert_eq!(part.name, "part-00000-attempt-0-task-7.txt");
        Ok(())
    }

    #[test]
    fn failed_dropped_and_aborted_attempts_leave_nothing() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error("tempdir", e))?;
        let mut writer = StagedFiles::writer(table(&dir), "q1")?;
        let mut failed = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
        assert!(failed.write(rows(0)).is_err());
        drop(writer.data_writer(&TaskContext::for_tests(1, 0), None)?);
        let mut aborted = writer.data_writer(&TaskContext::for_tests(2, 0), None)?;
        aborted.write(rows(1))?;
        aborted.abort()?;
        let mut done = writer.data_writer(&TaskContext::for_tests(3, 0), None)?;
        done.write(rows(2))?;
        let message = done.commit()?;
        assert_eq!(files(dir.path()).len(), 1, "{:?}", files(dir.path()));
        writer.abort(None, vec![None, Some(message)])?;
        assert_eq!(files(dir.path()), Vec::<String>::new());
        assert!(!dir.path().join(STAGING).exists());
        // A task that starts after the abort fails, naming the staging that is gone.
        let late = writer
            .data_writer(&TaskContext::for_tests(4, 0), None)
            .map(|_| ())
            .unwrap_err();
        assert!(late
            .to_string()
            .starts_with("the write was aborted or committed before this task started: `"));
        Ok(())
    }

    #[test]
    fn a_failed_publication_keeps_the_parts_staged_for_the_abort() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error("tempdir", e))?;
        let failing = Counts {
            fail_publish: true,
            ..table(&dir)
        };
        let mut writer = StagedFiles::writer(failing, "q1")?;
        let mut task = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
        task.write(rows(1))?;
        let message = task.commit()?;
        let error = writer.commit(None, vec![message.clone()]).unwrap_err();
        assert_eq!(error.to_string(), "publication failed");
        assert_eq!(
            files(dir.path()),
            ["_staging/q1/batch/part-00000-attempt-0-task-0.txt"]
        );
        writer.abort(None, vec![Some(message)])?;
        assert!(files(dir.path()).is_empty());
        Ok(())
    }

    #[test]
    fn a_replayed_epoch_publishes_nothing_and_its_staging_goes() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error("tempdir", e))?;
        let mut writer = StagedFiles::writer(table(&dir), "q1")?;
        for _ in 0..2 {
            let mut task = writer.data_writer(&TaskContext::for_tests(0, 0), Some(7))?;
            task.write(rows(1))?;
            let message = task.commit()?;
            writer.commit(Some(7), vec![message])?;
        }
        let manifest = Manifest::load(&dir.path().join("_manifest.json"))?.expect("published");
        assert_eq!(manifest.version, 1);
        assert_eq!(manifest.epochs.get("q1"), Some(&7));
        assert_eq!(files(dir.path()).len(), 2, "{:?}", files(dir.path()));
        Ok(())
    }

    #[test]
    fn a_manifest_without_epochs_is_read_and_written_without_them() -> Result<()> {
        let manifest: Manifest = serde_json::from_str(r#"{"version": 1, "files": ["a"]}"#)
            .map_err(|e| Error::msg(e.to_string()))?;
        assert!(manifest.epochs.is_empty());
        let written = serde_json::to_string(&manifest).map_err(|e| Error::msg(e.to_string()))?;
        assert_eq!(written, r#"{"version":1,"files":["a"]}"#);
        Ok(())
    }

    #[test]
    fn staging_abandoned_for_a_day_goes_with_the_next_commit() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| io_error("tempdir", e))?;
        let old = dir.path().join(STAGING).join("dead-query").join("batch");
        create_dir(&old)?;
        let file = old.join("part-00000-attempt-0-task-1.txt");
        fs::write(&file, "x").map_err(|e| io_error("write", e))?;
        let long_ago = SystemTime::now() - ABANDONED_AFTER - Duration::from_secs(60);
        for path in [&file, &old, &old.parent().expect("a parent").to_path_buf()] {
            File::open(path)
                .and_then(|f| f.set_modified(long_ago))
                .map_err(|e| io_error("set_modified", e))?;
        }
        let young = dir.path().join(STAGING).join("running-query");
        create_dir(&young)?;
        let mut writer = StagedFiles::writer(table(&dir), "q1")?;
        writer.commit(None, Vec::new())?;
        assert!(!dir.path().join(STAGING).join("dead-query").exists());
        assert!(young.exists());
        Ok(())
    }
}
