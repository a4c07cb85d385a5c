//! Batch writes, append or overwrite, on the connector kit's staged files (`kit::files`): each
//! task attempt writes its own part file under `_staging/`; the commit moves the parts into the
//! directory and publishes them with one atomic rename of the manifest (`table`); an abort, or
//! a failed attempt, removes them.

use std::io::Write as _;
use std::path::Path;

use arrow_array::{Array, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_json::LineDelimitedWriter;
use serde::{Deserialize, Serialize};

use super::format::{self, CsvSyntax, Format};
use super::table::{self, MANIFEST};
use super::{Settings, Source};
use spark_datasource::kit::files::{
    self, FileTable, FileWriter, Manifest, Part, PartOut, StagedFiles,
};
use spark_datasource::{log, Error, Result, Write, WriteInfo, WriteMode};

/// The table that a query writes, sent to the executors as bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Table {
    settings: Settings,
    mode: WriteMode,
    /// The column names, for the header of CSV part files.
    names: Vec<String>,
}

impl Write for Source {
    type Writer = FileWriter<Table>;

    fn writer(&self, info: WriteInfo) -> Result<FileWriter<Table>> {
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
        let names = info.schema.fields().iter().map(|f| f.name().clone());
        let table = Table {
            settings,
            mode: info.mode,
            names: names.collect(),
        };
        StagedFiles::writer(table, &info.query_id)
    }
}

impl FileTable for Table {
    fn root(&self) -> &Path {
        self.settings.root()
    }

    fn extension(&self) -> &str {
        self.settings.format.extension()
    }

    fn start_part(&self, out: &mut PartOut) -> Result<()> {
        if let Format::Csv(syntax @ CsvSyntax { header: true, .. }) = &self.settings.format {
            let names: Vec<Option<&str>> = self.names.iter().map(|n| Some(n.as_str())).collect();
            let line = format::join_csv(&names, syntax)
                .map_err(|reason| Error::msg(format!("a column name {reason}")))?;
            write_line(out, &line)?;
        }
        Ok(())
    }

    fn write_rows(&self, batch: &RecordBatch, out: &mut PartOut) -> Result<()> {
        match &self.settings.format {
            Format::JsonLines => {
                let mut writer = LineDelimitedWriter::new(out);
                writer.write(batch)?;
                writer.finish()?;
            }
            Format::Csv(syntax) => write_csv(batch, syntax, out)?,
        }
        Ok(())
    }

    fn publish(&mut self, query: &str, _epoch: Option<u64>, parts: Vec<Part>) -> Result<()> {
        let root = self.root().to_path_buf();
        let mut manifest = match table::manifest(&root)? {
            Some(manifest) => manifest,
            None => {
                // The first commit: list the files already there, and publish that listing
                // before any part moves in, so that a reader never sees a part early.
                let existing = Manifest {
                    files: table::listed(&root, self.extension())?,
                    ..Manifest::default()
                };
                existing.publish(&root.join(MANIFEST))?;
                existing
            }
        };
        let mut published = Vec::with_capacity(parts.len());
        // A task with no rows leaves no file behind: the staging, removed after, holds it.
        for part in parts.into_iter().filter(|part| part.rows > 0) {
            let file = format!("{query}-{}", part.name);
            files::rename(&part.path, &root.join(&file))?;
            published.push(file);
        }
        let replaced = match self.mode {
            WriteMode::Append => Vec::new(),
            WriteMode::Truncate => std::mem::take(&mut manifest.files),
        };
        manifest.files.extend(published);
        manifest.version += 1;
        manifest.publish(&root.join(MANIFEST))?;
        // The replaced files are invisible now: removing them can fail without harm.
        for file in replaced {
            if let Err(e) = files::remove_file(&root.join(&file)) {
                log::warn(&format!("an overwritten file stays behind: {e}"));
            }
        }
        Ok(())
    }
}

/// A batch's rows as CSV lines in `syntax`; a value that the syntax cannot hold names its
/// column.
fn write_csv(batch: &RecordBatch, syntax: &CsvSyntax, out: &mut PartOut) -> Result<()> {
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
        let line = format::join_csv(&cells, syntax).map_err(|reason| {
            let column = cells
                .iter()
                .position(|c| c.is_some_and(|t| t.contains(['\n', '\r'])))
                .map_or("?", |i| batch.schema_ref().field(i).name().as_str())
                .to_string();
            Error::msg(format!("the value of column `{column}` {reason}"))
        })?;
        write_line(out, &line)?;
    }
    Ok(())
}

fn write_line(out: &mut PartOut, line: &str) -> Result<()> {
    out.write_all(line.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .map_err(|e| out.error(e))
}
