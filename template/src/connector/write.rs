//! Writes, batch and streaming, on the connector kit's staged files (`kit::files`): each task
//! attempt writes its rows to a part file of its own, in the sample's format
//! (`sample::write_lines`); the commit moves the parts of all tasks into `data/` and publishes
//! them with one atomic replacement of the manifest; an abort, or a failed attempt, removes them.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};

use super::table::{self, MANIFEST};
use super::{sample, Source};
use spark_datasource::kit::files::{self, FileTable, FileWriter, Part, PartOut, StagedFiles};
use spark_datasource::kit::schema::check_write;
use spark_datasource::{log, DataSource, Result, Write, WriteInfo, WriteMode};

/// The options of a write; Spark adds `checkpointLocation` to those of a streaming write.
const OPTIONS: &[&str] = &["path", "checkpointLocation"];

/// The table that a query writes, sent to the executors as bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Table {
    path: PathBuf,
    mode: WriteMode,
}

impl Write for Source {
    type Writer = FileWriter<Table>;

    fn writer(&self, info: WriteInfo) -> Result<FileWriter<Table>> {
        self.options.expect_only(OPTIONS)?;
        check_write(self.schema()?.as_ref(), &info.schema)?;
        let table = Table {
            path: self.options.required("path")?,
            mode: info.mode,
        };
        StagedFiles::writer(table, &info.query_id)
    }
}

impl FileTable for Table {
    fn root(&self) -> &Path {
        &self.path
    }

    fn extension(&self) -> &str {
        "jsonl"
    }

    fn write_rows(&self, batch: &RecordBatch, out: &mut PartOut) -> Result<()> {
        // `writer` checked the schema against the source's.
        sample::write_lines(batch, out)
    }

    fn publish(&mut self, query: &str, epoch: Option<u64>, parts: Vec<Part>) -> Result<()> {
        let mut manifest = table::load(&self.path)?.unwrap_or_default();
        if let Some(epoch) = epoch {
            if !manifest.record_epoch(query, epoch) {
                log::info(&format!("epoch {epoch} of {query} is already committed"));
                return Ok(());
            }
        }
        let data = self.path.join("data");
        files::create_dir(&data)?;
        let epoch = epoch.map_or_else(|| "batch".to_string(), |e| e.to_string());
        let mut published = Vec::with_capacity(parts.len());
        for part in parts {
            let file = format!("data/{query}-{epoch}-{}", part.name);
            files::rename(&part.path, &self.path.join(&file))?;
            published.push(file);
        }
        let replaced = match self.mode {
            WriteMode::Append => Vec::new(),
            WriteMode::Truncate => std::mem::take(&mut manifest.files),
        };
        manifest.files.extend(published);
        manifest.version += 1;
        manifest.publish(&self.path.join(MANIFEST))?;
        // The replaced files are invisible now; removing them can fail without harm.
        for file in replaced {
            let _ = files::remove_file(&self.path.join(file));
        }
        Ok(())
    }
}
