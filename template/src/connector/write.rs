//! Writes, batch and streaming: each task attempt writes its rows to its own staged file, in
//! the sample's format (`sample::write_lines`); `commit` moves the staged files of all tasks
//! into the table and publishes them with one atomic replacement of the manifest; `abort`
//! removes them.

use std::fs::{self, File};
use std::io::{BufWriter, ErrorKind, Write as _};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::table::{self, Manifest, MANIFEST};
use super::{sample, Source};
use spark_datasource::kit::schema::check_write;
use spark_datasource::{
    log, DataSource, DataWriter, Error, Result, TaskContext, Write, WriteInfo, WriteMode, Writer,
};

/// The options of a write; Spark adds `checkpointLocation` to those of a streaming write.
const OPTIONS: &[&str] = &["path", "checkpointLocation"];

/// The writer of a query, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct TableWriter {
    path: PathBuf,
    query_id: String,
    mode: WriteMode,
}

/// What a task staged: its file, relative to the table's directory, and its row count.
#[derive(Debug, Serialize, Deserialize)]
pub struct Staged {
    pub file: String,
    pub rows: u64,
}

impl Write for Source {
    type Writer = TableWriter;

    fn writer(&self, info: WriteInfo) -> Result<TableWriter> {
        self.options.expect_only(OPTIONS)?;
        let path: PathBuf = self.options.required("path")?;
        check_write(self.schema()?.as_ref(), &info.schema)?;
        // Query IDs name staging directories: keep them to safe characters.
        let query_id = info
            .query_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let writer = TableWriter {
            path,
            query_id,
            mode: info.mode,
        };
        // Made here, once: tasks only add their folder to it, so a task that starts after an
        // `abort` removed it fails instead of staging files that nothing would remove.
        create_dir(&writer.path.join(writer.query_staging()))?;
        Ok(writer)
    }
}

impl TableWriter {
    /// Where the tasks of `epoch` stage their files.
    fn staging(&self, epoch: Option<u64>) -> PathBuf {
        self.path.join(self.staging_relative(epoch))
    }

    fn staging_relative(&self, epoch: Option<u64>) -> PathBuf {
        let epoch = epoch.map_or_else(|| "batch".to_string(), |e| format!("epoch-{e}"));
        self.query_staging().join(epoch)
    }

    /// The staging directory of the whole write, relative to the table's directory.
    fn query_staging(&self) -> PathBuf {
        Path::new("_staging").join(&self.query_id)
    }

    /// The path of a file that a commit message names. Messages cross the network: a message
    /// must name a file staged by this write, never a path that leaves the staging directory.
    fn staged(&self, epoch: Option<u64>, staged: &Staged) -> Result<PathBuf> {
        let file = Path::new(&staged.file);
        let plain = file
            .components()
            .all(|part| matches!(part, Component::Normal(_)));
        if !plain || !file.starts_with(self.staging_relative(epoch)) {
            return Err(Error::msg(format!(
                "the commit message names `{}`, which is not a file staged by this write",
                staged.file
            )));
        }
        Ok(self.path.join(file))
    }
}

impl Writer for TableWriter {
    type Message = Staged;
    type DataWriter = TaskWriter;

    fn data_writer(&self, task: &TaskContext, epoch: Option<u64>) -> Result<TaskWriter> {
        let staging = self.staging(epoch);
        match fs::create_dir(&staging) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::msg("the write was aborted before this task started"))
            }
            Err(e) if e.kind() != ErrorKind::AlreadyExists => {
                return Err(Error::io(
                    format!("cannot create `{}`", staging.display()),
                    e,
                ))
            }
            _ => {}
        }
        // Named after the task attempt: a retried attempt writes a file of its own, and only
        // the one whose message reaches `commit` is published.
        let name = format!(
            "part-{:05}-attempt-{}-task-{}.jsonl",
            task.partition_id(),
            task.attempt_number(),
            task.task_id()
        );
        let path = staging.join(name);
        let file = File::create(&path)
            .map_err(|e| Error::io(format!("cannot create `{}`", path.display()), e))?;
        Ok(TaskWriter {
            writer: Some(BufWriter::new(file)),
            relative: path
                .strip_prefix(&self.path)
                .map_err(|_| Error::msg("a staged file lies outside the table"))?
                .to_string_lossy()
                .replace('\\', "/"),
            path,
            rows: 0,
        })
    }

    fn commit(&mut self, epoch: Option<u64>, messages: Vec<Staged>) -> Result<()> {
        let mut manifest = table::load(&self.path)?.unwrap_or_default();
        if let Some(epoch) = epoch {
            if manifest
                .epochs
                .get(&self.query_id)
                .is_some_and(|&last| last >= epoch)
            {
                // A restarted query replays its last epoch: it is already published.
                log::info(&format!(
                    "epoch {epoch} of {} is already committed",
                    self.query_id
                ));
                return remove_dir(&self.staging(Some(epoch)));
            }
            manifest.epochs.insert(self.query_id.clone(), epoch);
        }
        let data = self.path.join("data");
        create_dir(&data)?;
        let mut published = Vec::with_capacity(messages.len());
        for staged in &messages {
            let name = Path::new(&staged.file).file_name().ok_or_else(|| {
                Error::msg(format!("the staged file `{}` has no name", staged.file))
            })?;
            let file = format!(
                "data/{}-{}-{}",
                self.query_id,
                epoch.map_or_else(|| "batch".to_string(), |e| e.to_string()),
                name.to_string_lossy()
            );
            rename(&self.staged(epoch, staged)?, &self.path.join(&file))?;
            published.push(file);
        }
        let replaced = match self.mode {
            WriteMode::Append => Vec::new(),
            WriteMode::Truncate => std::mem::take(&mut manifest.files),
        };
        manifest.files.extend(published);
        manifest.version += 1;
        publish(&self.path, &manifest)?;
        // The replaced files are invisible now; removing them can fail without harm.
        for file in replaced {
            let _ = fs::remove_file(self.path.join(file));
        }
        remove_abandoned(&self.path, &self.query_id);
        self.finish(epoch)
    }

    fn abort(&mut self, epoch: Option<u64>, messages: Vec<Option<Staged>>) -> Result<()> {
        for staged in messages.into_iter().flatten() {
            remove_file(&self.staged(epoch, &staged)?)?;
        }
        // Tasks that did not commit may have left files: the staging directory holds them all.
        self.finish(epoch)
    }
}

impl TableWriter {
    /// Removes what `epoch` staged, and for a batch write the query's staging directory.
    fn finish(&self, epoch: Option<u64>) -> Result<()> {
        remove_dir(&self.staging(epoch))?;
        if epoch.is_none() {
            remove_dir(&self.path.join(self.query_staging()))?;
        }
        Ok(())
    }
}

/// How long the staged files of a write that never committed nor aborted (its driver died) stay:
/// a commit removes them after that. No running write leaves its staging directory untouched so
/// long, and removing it sooner could fail a write of another query that is still running.
const ABANDONED_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// Removes the staging directories of other queries unchanged for `ABANDONED_AFTER`, best
/// effort: what stays is invisible to readers anyway.
fn remove_abandoned(root: &Path, own_query: &str) {
    let Ok(entries) = fs::read_dir(root.join("_staging")) else {
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

/// The writer of one task attempt.
pub struct TaskWriter {
    writer: Option<BufWriter<File>>,
    path: PathBuf,
    relative: String,
    rows: u64,
}

impl DataWriter for TaskWriter {
    type Message = Staged;

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| Error::msg("write after commit or abort"))?;
        // `writer` checked the schema against the source's.
        sample::write_lines(&batch, writer)?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    fn commit(&mut self) -> Result<Staged> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| Error::msg("commit after commit or abort"))?;
        let file = writer.into_inner().map_err(|e| {
            Error::io(
                format!("cannot write `{}`", self.path.display()),
                e.into_error(),
            )
        })?;
        // The data must be on disk before the driver publishes it.
        file.sync_all()
            .map_err(|e| Error::io(format!("cannot sync `{}`", self.path.display()), e))?;
        Ok(Staged {
            file: self.relative.clone(),
            rows: self.rows,
        })
    }

    fn abort(&mut self) -> Result<()> {
        self.writer = None;
        remove_file(&self.path)
    }
}

/// Replaces the manifest of the table at `root` in one atomic rename.
fn publish(root: &Path, manifest: &Manifest) -> Result<()> {
    let temporary = root.join(format!("{MANIFEST}.tmp"));
    let bytes = serde_json::to_vec_pretty(manifest).map_err(|e| Error::msg(e.to_string()))?;
    let mut file = File::create(&temporary)
        .map_err(|e| Error::io(format!("cannot create `{}`", temporary.display()), e))?;
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(format!("cannot write `{}`", temporary.display()), e))?;
    rename(&temporary, &root.join(MANIFEST))
}

fn create_dir(path: &Path) -> Result<()> {
    fs::create_dir_all(path)
        .map_err(|e| Error::io(format!("cannot create `{}`", path.display()), e))
}

fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(|e| {
        Error::io(
            format!("cannot move `{}` to `{}`", from.display(), to.display()),
            e,
        )
    })
}

fn remove_file(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            Err(Error::io(format!("cannot remove `{}`", path.display()), e))
        }
        _ => Ok(()),
    }
}

fn remove_dir(path: &Path) -> Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            Err(Error::io(format!("cannot remove `{}`", path.display()), e))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> TableWriter {
        TableWriter {
            path: PathBuf::from("/data/table"),
            query_id: "q1".to_string(),
            mode: WriteMode::Append,
        }
    }

    #[test]
    fn a_commit_message_cannot_name_a_file_outside_the_staging_directory() {
        for file in [
            "_staging/q1/batch/../../../../etc/passwd",
            "/etc/passwd",
            "data/x.jsonl",
        ] {
            let staged = Staged {
                file: file.to_string(),
                rows: 1,
            };
            let error = writer().staged(None, &staged).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "the commit message names `{file}`, which is not a file staged by this write"
                )
            );
        }
    }

    #[test]
    fn a_staged_file_of_the_write_is_accepted() {
        let staged = Staged {
            file: "_staging/q1/epoch-3/part-00000-attempt-0-task-7.jsonl".to_string(),
            rows: 1,
        };
        let path = writer().staged(Some(3), &staged).expect("a staged file");
        assert!(path.starts_with("/data/table/_staging/q1/epoch-3"));
    }
}
