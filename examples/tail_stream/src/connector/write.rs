//! Streaming writes: each epoch (micro-batch) of a query becomes one JSON-lines file,
//! `<query>-<epoch>.jsonl`, in the directory `path`. Tasks stage parts under `_staging/`; the
//! commit of an epoch joins them into a hidden file and renames it into place, so the epoch
//! appears whole or not at all (a tail_stream reader of the same directory never sees half of
//! it). An epoch that a restarted query replays finds its file and writes nothing: every row is
//! written exactly once.

use std::fs::{self, File};
use std::io::{self, BufWriter, ErrorKind};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_json::LineDelimitedWriter;
use serde::{Deserialize, Serialize};

use super::Source;
use spark_datasource::{log, DataWriter, Error, Result, TaskContext, Write, WriteInfo, Writer};

/// The writer of a streaming query, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct EpochWriter {
    path: PathBuf,
    query_id: String,
}

/// What a task staged: its part file, relative to the directory, and its row count.
#[derive(Debug, Serialize, Deserialize)]
pub struct Staged {
    pub file: String,
    pub rows: u64,
}

impl Write for Source {
    type Writer = EpochWriter;

    fn writer(&self, info: WriteInfo) -> Result<EpochWriter> {
        if !info.streaming {
            return Err(Error::msg(
                "tail_stream writes streaming queries only: use df.writeStream",
            ));
        }
        // The query ID names the files, and stays the same when the query restarts, which is
        // what lets a replayed epoch find its file.
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
        Ok(EpochWriter {
            path: self.options.required("path")?,
            query_id,
        })
    }
}

impl EpochWriter {
    fn epoch(epoch: Option<u64>) -> Result<u64> {
        epoch.ok_or_else(|| Error::msg("a streaming write needs an epoch; Spark passed none"))
    }

    fn staging(&self, epoch: u64) -> PathBuf {
        self.path
            .join("_staging")
            .join(&self.query_id)
            .join(format!("epoch-{epoch}"))
    }

    /// The file of an epoch: its name sorts in epoch order.
    fn published(&self, epoch: u64) -> PathBuf {
        self.path
            .join(format!("{}-{epoch:010}.jsonl", self.query_id))
    }
}

impl Writer for EpochWriter {
    type Message = Staged;
    type DataWriter = PartWriter;

    fn data_writer(&self, task: &TaskContext, epoch: Option<u64>) -> Result<PartWriter> {
        let staging = self.staging(Self::epoch(epoch)?);
        fs::create_dir_all(&staging)
            .map_err(|e| Error::io(format!("cannot create `{}`", staging.display()), e))?;
        let name = format!(
            "part-{:05}-attempt-{}.jsonl",
            task.partition_id(),
            task.attempt_number()
        );
        let path = staging.join(&name);
        let file = File::create(&path)
            .map_err(|e| Error::io(format!("cannot create `{}`", path.display()), e))?;
        let relative = path
            .strip_prefix(&self.path)
            .map_err(|_| Error::msg("a staged file lies outside the directory"))?
            .to_string_lossy()
            .replace('\\', "/");
        Ok(PartWriter {
            writer: Some(LineDelimitedWriter::new(BufWriter::new(file))),
            path,
            relative,
            rows: 0,
        })
    }

    fn commit(&mut self, epoch: Option<u64>, messages: Vec<Staged>) -> Result<()> {
        let epoch = Self::epoch(epoch)?;
        let published = self.published(epoch);
        if published.exists() {
            log::info(&format!(
                "epoch {epoch} of {} is already written to `{}`: the replay writes nothing",
                self.query_id,
                published.display()
            ));
            return remove_dir(&self.staging(epoch));
        }
        if messages.iter().all(|m| m.rows == 0) {
            // An empty epoch leaves no file: replaying it writes nothing either.
            return remove_dir(&self.staging(epoch));
        }
        // Join the parts into a hidden file, then rename it into place in one step.
        let temporary = self.staging(epoch).join("epoch.jsonl.tmp");
        let joined = File::create(&temporary)
            .map_err(|e| Error::io(format!("cannot create `{}`", temporary.display()), e))?;
        let mut out = BufWriter::new(joined);
        for staged in &messages {
            let part = self.path.join(&staged.file);
            let mut input = File::open(&part)
                .map_err(|e| Error::io(format!("cannot open `{}`", part.display()), e))?;
            io::copy(&mut input, &mut out)
                .map_err(|e| Error::io(format!("cannot copy `{}`", part.display()), e))?;
        }
        out.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|file| file.sync_all())
            .map_err(|e| Error::io(format!("cannot write `{}`", temporary.display()), e))?;
        fs::rename(&temporary, &published).map_err(|e| {
            Error::io(
                format!("cannot publish epoch {epoch} as `{}`", published.display()),
                e,
            )
        })?;
        remove_dir(&self.staging(epoch))
    }

    fn abort(&mut self, epoch: Option<u64>, _messages: Vec<Option<Staged>>) -> Result<()> {
        // Every part of the epoch, committed by its task or not, is in its staging directory.
        remove_dir(&self.staging(Self::epoch(epoch)?))
    }
}

/// The writer of one task attempt of an epoch.
pub struct PartWriter {
    writer: Option<LineDelimitedWriter<BufWriter<File>>>,
    path: PathBuf,
    relative: String,
    rows: u64,
}

impl DataWriter for PartWriter {
    type Message = Staged;

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let writer = self
            .writer
            .as_mut()
            .ok_or_else(|| Error::msg("write after commit or abort"))?;
        writer.write(&batch)?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    fn commit(&mut self) -> Result<Staged> {
        let mut writer = self
            .writer
            .take()
            .ok_or_else(|| Error::msg("commit after commit or abort"))?;
        writer.finish()?;
        let file = writer.into_inner().into_inner().map_err(|e| {
            Error::io(
                format!("cannot write `{}`", self.path.display()),
                e.into_error(),
            )
        })?;
        file.sync_all()
            .map_err(|e| Error::io(format!("cannot sync `{}`", self.path.display()), e))?;
        Ok(Staged {
            file: self.relative.clone(),
            rows: self.rows,
        })
    }

    fn abort(&mut self) -> Result<()> {
        self.writer = None;
        match fs::remove_file(&self.path) {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io(
                format!("cannot remove `{}`", self.path.display()),
                e,
            )),
            _ => Ok(()),
        }
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
