//! Streaming writes: each epoch (micro-batch) of a query becomes one JSON-lines file,
//! `<query>-<epoch>.jsonl`, in the directory `path`. Tasks stage parts with the connector kit's
//! staged files (`kit::files`); the commit of an epoch joins them into a hidden file and renames
//! it into place, so the epoch appears whole or not at all (a tail_stream reader of the same
//! directory never sees half of it). An epoch that a restarted query replays finds its file and
//! writes nothing: every row is written exactly once.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_json::LineDelimitedWriter;
use serde::{Deserialize, Serialize};

use super::Source;
use spark_datasource::kit::files::{self, FileTable, FileWriter, Part, PartOut, StagedFiles};
use spark_datasource::{log, Error, Result, Write, WriteInfo};

/// The directory that a streaming query writes, sent to the executors as bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Directory {
    path: PathBuf,
}

impl Write for Source {
    type Writer = FileWriter<Directory>;

    fn writer(&self, info: WriteInfo) -> Result<FileWriter<Directory>> {
        if !info.streaming {
            return Err(Error::msg(
                "tail_stream writes streaming queries only: use df.writeStream",
            ));
        }
        // The query ID names the files, and stays the same when the query restarts, which is
        // what lets a replayed epoch find its file.
        let directory = Directory {
            path: self.options.required("path")?,
        };
        StagedFiles::writer(directory, &info.query_id)
    }
}

impl FileTable for Directory {
    fn root(&self) -> &Path {
        &self.path
    }

    fn extension(&self) -> &str {
        "jsonl"
    }

    fn write_rows(&self, batch: &RecordBatch, out: &mut PartOut) -> Result<()> {
        let mut writer = LineDelimitedWriter::new(out);
        writer.write(batch)?;
        writer.finish()?;
        Ok(())
    }

    fn publish(&mut self, query: &str, epoch: Option<u64>, parts: Vec<Part>) -> Result<()> {
        let epoch = epoch
            .ok_or_else(|| Error::msg("a streaming write needs an epoch; Spark passed none"))?;
        // Its name sorts in epoch order.
        let published = self.path.join(format!("{query}-{epoch:010}.jsonl"));
        if published.exists() {
            log::info(&format!(
                "epoch {epoch} of {query} is already written to `{}`: the replay writes nothing",
                published.display()
            ));
            return Ok(());
        }
        if parts.iter().all(|part| part.rows == 0) {
            // An empty epoch leaves no file: replaying it writes nothing either.
            return Ok(());
        }
        // Join the parts into a hidden file beside them, then rename it into place in one step.
        let Some(staging) = parts.first().and_then(|part| part.path.parent()) else {
            return Ok(());
        };
        let temporary = staging.join("epoch.jsonl.tmp");
        let joined = File::create(&temporary)
            .map_err(|e| files::io_error(format!("cannot create `{}`", temporary.display()), e))?;
        let mut out = BufWriter::new(joined);
        for part in &parts {
            let mut input = File::open(&part.path).map_err(|e| {
                files::io_error(format!("cannot open `{}`", part.path.display()), e)
            })?;
            io::copy(&mut input, &mut out).map_err(|e| {
                files::io_error(format!("cannot copy `{}`", part.path.display()), e)
            })?;
        }
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)
            .and_then(|file| file.sync_all())
            .map_err(|e| files::io_error(format!("cannot write `{}`", temporary.display()), e))?;
        files::rename(&temporary, &published)
    }
}
