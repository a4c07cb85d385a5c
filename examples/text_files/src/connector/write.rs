//! Batch writes, append or overwrite, with the two-phase protocol: each task attempt writes its
//! own part file under `_staging/`; `commit` moves the parts into the directory and publishes
//! them with one atomic rename of the manifest (`table`); `abort` removes them.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use arrow_array::{Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_json::LineDelimitedWriter;
use serde::{Deserialize, Serialize};

use super::format::{self, CsvSyntax, Format};
use super::table::{self, Manifest};
use super::{Settings, Source};
use spark_datasource::{
    log, DataWriter, Error, Result, TaskContext, Write, WriteInfo, WriteMode, Writer,
};

/// The writer of a query, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct TableWriter {
    settings: Settings,
    query_id: String,
    mode: WriteMode,
    /// The column names, for the header of CSV part files.
    names: Vec<String>,
}

/// What a task staged: its part file, relative to the table's directory, and its row count.
#[derive(Debug, Serialize, Deserialize)]
pub struct Staged {
    pub file: String,
    pub rows: u64,
}

impl Write for Source {
    type Writer = TableWriter;

    fn writer(&self, info: WriteInfo) -> Result<TableWriter> {
        let settings = self.settings()?;
        if let Format::Csv { .. } = settings.format {
            if let Some(field) = info
                .schema
                .fields()
                .iter()
                .find(|f| f.data_type().is_nested())
            {
                return Err(Error::msg(format!(
                    "column `{}` is {}, which a CSV cell cannot hold: write it with \
                     format=jsonl, or select flat columns",
                    field.name(),
                    field.data_type()
                )));
            }
        }
        // Query IDs name staging directories and files: keep them to safe characters.
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
            settings,
            query_id,
            mode: info.mode,
            names: info
                .schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect(),
        };
        // The driver makes the staging directory, and tasks only add to it: a task that starts
        // after `abort` removed it fails instead of leaving a part behind.
        table::create_dir(&writer.staging())?;
        Ok(writer)
    }
}

impl TableWriter {
    fn root(&self) -> &Path {
        self.settings.root()
    }

    /// Removes this write's staging directory, and `_staging` when no other write uses it.
    fn clean_staging(&self) -> Result<()> {
        table::remove_dir(&self.staging())?;
        // Fails, harmlessly, while another write stages its parts there.
        let _ = std::fs::remove_dir(self.root().join("_staging"));
        Ok(())
    }

    /// Where the tasks of this write stage their part files.
    fn staging(&self) -> PathBuf {
        self.root().join("_staging").join(&self.query_id)
    }
}

impl Writer for TableWriter {
    type Message = Staged;
    type DataWriter = PartWriter;

    fn data_writer(&self, task: &TaskContext, _epoch: Option<u64>) -> Result<PartWriter> {
        let staging = self.staging();
        if !staging.is_dir() {
            return Err(Error::msg(format!(
                "the staging directory `{}` is gone: the write was aborted or committed before \
                 this task started",
                staging.display()
            )));
        }
        // Named after the task attempt: a retried attempt writes a part of its own, and only
        // the one whose message reaches `commit` is published.
        let name = format!(
            "part-{:05}-attempt-{}-task-{}.{}",
            task.partition_id(),
            task.attempt_number(),
            task.task_id(),
            self.settings.format.extension()
        );
        let path = staging.join(&name);
        let file = File::create(&path)
            .map_err(|e| Error::io(format!("cannot create `{}`", path.display()), e))?;
        let mut writer = PartWriter {
            out: Some(BufWriter::new(file)),
            relative: format!("_staging/{}/{name}", self.query_id),
            path,
            format: self.settings.format.clone(),
            rows: 0,
        };
        if let Format::Csv(syntax @ CsvSyntax { header: true, .. }) = &self.settings.format {
            let names: Vec<Option<&str>> = self.names.iter().map(|n| Some(n.as_str())).collect();
            let line = format::join_csv(&names, syntax)
                .map_err(|reason| Error::msg(format!("a column name {reason}")))?;
            writer.line(&line)?;
        }
        Ok(writer)
    }

    fn commit(&mut self, _epoch: Option<u64>, messages: Vec<Staged>) -> Result<()> {
        let root = self.root().to_path_buf();
        let extension = self.settings.format.extension();
        let mut manifest = match table::manifest(&root)? {
            Some(manifest) => manifest,
            None => {
                // The first commit: list the files already there, and publish that listing
                // before any part moves in, so that a reader never sees a part early.
                let existing = Manifest {
                    version: 0,
                    files: table::listed(&root, extension)?,
                };
                table::publish(&root, &existing)?;
                existing
            }
        };
        let mut published = Vec::with_capacity(messages.len());
        for staged in &messages {
            let from = root.join(&staged.file);
            if staged.rows == 0 {
                // A task with no rows leaves no file behind.
                table::remove_file(&from)?;
                continue;
            }
            let name = Path::new(&staged.file)
                .file_name()
                .ok_or_else(|| {
                    Error::msg(format!("the staged file `{}` has no name", staged.file))
                })?
                .to_string_lossy()
                .to_string();
            let file = format!("{}-{name}", self.query_id);
            table::rename(&from, &root.join(&file))?;
            published.push(file);
        }
        let replaced = match self.mode {
            WriteMode::Append => Vec::new(),
            WriteMode::Truncate => std::mem::take(&mut manifest.files),
        };
        manifest.files.extend(published);
        manifest.version += 1;
        table::publish(&root, &manifest)?;
        // The replaced files are invisible now: removing them can fail without harm.
        for file in replaced {
            if let Err(e) = table::remove_file(&root.join(&file)) {
                log::warn(&format!("an overwritten file stays behind: {e}"));
            }
        }
        self.clean_staging()
    }

    fn abort(&mut self, _epoch: Option<u64>, messages: Vec<Option<Staged>>) -> Result<()> {
        for staged in messages.into_iter().flatten() {
            table::remove_file(&self.root().join(staged.file))?;
        }
        // Tasks that did not commit may have left parts: the staging directory holds them all.
        self.clean_staging()
    }
}

/// The writer of one task attempt: one part file.
pub struct PartWriter {
    out: Option<BufWriter<File>>,
    path: PathBuf,
    relative: String,
    format: Format,
    rows: u64,
}

impl PartWriter {
    fn out(&mut self) -> Result<&mut BufWriter<File>> {
        self.out
            .as_mut()
            .ok_or_else(|| Error::msg("write after commit or abort"))
    }

    fn line(&mut self, line: &str) -> Result<()> {
        let path = self.path.display().to_string();
        let out = self.out()?;
        out.write_all(line.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| Error::io(format!("cannot write `{path}`"), e))
    }
}

impl DataWriter for PartWriter {
    type Message = Staged;

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        match self.format.clone() {
            Format::JsonLines => {
                let mut writer = LineDelimitedWriter::new(self.out()?);
                writer.write(&batch)?;
                writer.finish()?;
            }
            Format::Csv(syntax) => {
                let options = FormatOptions::default();
                let formatters = batch
                    .columns()
                    .iter()
                    .map(|column| ArrayFormatter::try_new(column.as_ref(), &options))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                for row in 0..batch.num_rows() {
                    let texts: Vec<Option<String>> = batch
                        .columns()
                        .iter()
                        .zip(&formatters)
                        .map(|(column, formatter)| {
                            (!column.is_null(row)).then(|| formatter.value(row).to_string())
                        })
                        .collect();
                    let cells: Vec<Option<&str>> = texts.iter().map(Option::as_deref).collect();
                    let line = format::join_csv(&cells, &syntax).map_err(|reason| {
                        let column = cells
                            .iter()
                            .position(|c| c.is_some_and(|t| t.contains(['\n', '\r'])))
                            .map_or("?", |i| batch.schema_ref().field(i).name().as_str())
                            .to_string();
                        Error::msg(format!("the value of column `{column}` {reason}"))
                    })?;
                    self.line(&line)?;
                }
            }
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    fn commit(&mut self) -> Result<Staged> {
        let out = self
            .out
            .take()
            .ok_or_else(|| Error::msg("commit after commit or abort"))?;
        let file = out.into_inner().map_err(|e| {
            Error::io(
                format!("cannot write `{}`", self.path.display()),
                e.into_error(),
            )
        })?;
        // The part must be on disk before the driver publishes it.
        file.sync_all()
            .map_err(|e| Error::io(format!("cannot sync `{}`", self.path.display()), e))?;
        Ok(Staged {
            file: self.relative.clone(),
            rows: self.rows,
        })
    }

    fn abort(&mut self) -> Result<()> {
        self.out = None;
        table::remove_file(&self.path)
    }
}
