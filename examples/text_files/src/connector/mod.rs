//! A file data source: a directory of CSV or JSON-lines files, in the spirit of the CSV
//! connector of the Data Source V2 guide ("Building a Connector").
//!
//! - Reads plan byte-range splits from the sizes of the files, never reading data
//!   (`splits`); each task parses its lines (`format`) into batches (`read`), reading only the
//!   columns the query needs and stopping at a pushed limit.
//! - Writes stage one part file per task and publish them all with one atomic rename of a
//!   manifest (`table`, `write`); an overwrite replaces the visible files in the same step.
//! - The schema is the one the query gives (`.schema(...)`) or is inferred from the first
//!   `infer_rows` lines.
//!
//! Options: `path` (required), `format` (`csv` or `jsonl`, default `csv`), `delimiter`
//! (default `,`), `header` (default `true`), `split_bytes` (default 128 MiB), `infer_rows`
//! (default 100).

mod format;
mod read;
mod splits;
mod table;
mod write;

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::{DataType, SchemaRef};
use serde::{Deserialize, Serialize};

use self::format::{Cell, Format};
use spark_datasource::{DataSource, Error, Options, Result};

/// Every option of the data source; Spark adds `checkpointLocation` to some writes.
const OPTIONS: &[&str] = &[
    "path",
    "format",
    "delimiter",
    "header",
    "split_bytes",
    "infer_rows",
    "checkpointLocation",
];

/// The default of `split_bytes`: Spark's default `spark.sql.files.maxPartitionBytes`.
const DEFAULT_SPLIT_BYTES: u64 = 128 * 1024 * 1024;

/// The data source: the options of the query, checked once.
pub struct Source {
    options: Options,
    format: Format,
    split_bytes: u64,
    infer_rows: usize,
}

/// What reads and writes need to know about the table; it travels with readers and writers.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    path: PathBuf,
    format: Format,
    split_bytes: u64,
    infer_rows: usize,
}

impl DataSource for Source {
    fn create(_name: &str, options: Options) -> Result<Self> {
        options.expect_only(OPTIONS)?;
        let format = match options
            .get_or("format", "csv".to_string())?
            .to_ascii_lowercase()
            .as_str()
        {
            "csv" => {
                let delimiter: String = options.get_or("delimiter", ",".to_string())?;
                let mut chars = delimiter.chars();
                let (Some(delimiter), None) = (chars.next(), chars.next()) else {
                    return Err(Error::Option(format!(
                        "option `delimiter` must be one character, such as `,` or `;`, got \
                         `{delimiter}`"
                    )));
                };
                if delimiter == '"' || delimiter == '\n' || delimiter == '\r' {
                    return Err(Error::Option(
                        "option `delimiter` cannot be a quote or a line break".to_string(),
                    ));
                }
                Format::Csv {
                    delimiter,
                    header: options.get_or("header", true)?,
                }
            }
            "jsonl" => {
                if options.get("delimiter").is_some() || options.get("header").is_some() {
                    return Err(Error::Option(
                        "options `delimiter` and `header` apply to format=csv only".to_string(),
                    ));
                }
                Format::JsonLines
            }
            other => {
                return Err(Error::Option(format!(
                    "option `format` must be `csv` or `jsonl`, got `{other}`"
                )))
            }
        };
        let split_bytes = options.get_or("split_bytes", DEFAULT_SPLIT_BYTES)?;
        let infer_rows = options.get_or("infer_rows", 100_usize)?;
        if split_bytes == 0 || infer_rows == 0 {
            return Err(Error::Option(
                "options `split_bytes` and `infer_rows` must be at least 1".to_string(),
            ));
        }
        Ok(Source {
            options,
            format,
            split_bytes,
            infer_rows,
        })
    }

    fn schema(&self) -> Result<SchemaRef> {
        infer(&self.settings()?)
    }
}

impl Source {
    /// What reads and writes need. The option `path` is checked here rather than in `create`,
    /// so that Spark (and the capabilities test) can create the source without options.
    fn settings(&self) -> Result<Settings> {
        Ok(Settings {
            path: self.options.required("path")?,
            format: self.format,
            split_bytes: self.split_bytes,
            infer_rows: self.infer_rows,
        })
    }
}

/// The schema of the table, inferred from its first `infer_rows` lines.
fn infer(settings: &Settings) -> Result<SchemaRef> {
    let root = &settings.path;
    let files = table::visible(root, settings.format.extension())?;
    if files.iter().all(|f| f.size == 0) {
        return Err(Error::msg(format!(
            "no `.{}` data in `{}` to infer the schema from: give the schema with \
             .schema(\"id bigint, name string\"), or write to the path first",
            settings.format.extension(),
            root.display()
        )));
    }
    let mut names: Vec<String> = Vec::new();
    let mut types: Vec<Option<DataType>> = Vec::new();
    let mut rows = 0;
    'files: for file in &files {
        let path = root.join(&file.name);
        let input = File::open(&path)
            .map_err(|e| Error::io(format!("cannot open `{}`", path.display()), e))?;
        for (index, line) in BufReader::new(input).lines().enumerate() {
            let line =
                line.map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?;
            let at = |reason: String| malformed(&path, index as u64 + 1, &reason);
            if line.trim().is_empty() {
                // Reads skip blank lines: so does inference.
                continue;
            }
            match settings.format {
                Format::Csv { delimiter, header } => {
                    let cells =
                        format::split_csv(line.trim_end_matches('\r'), delimiter).map_err(at)?;
                    if index == 0 && header {
                        if names.is_empty() {
                            names = header_names(cells).map_err(at)?;
                            types = vec![None; names.len()];
                        }
                        continue;
                    }
                    if names.is_empty() {
                        // Without a header, the columns are named as Spark names them.
                        names = (0..cells.len()).map(|i| format!("_c{i}")).collect();
                        types = vec![None; names.len()];
                    }
                    if cells.len() != names.len() {
                        return Err(at(field_count(cells.len(), &names)));
                    }
                    for (t, cell) in types.iter_mut().zip(&cells) {
                        *t = format::widen(t.take(), cell);
                    }
                }
                Format::JsonLines => {
                    let object = format::parse_json(&line).map_err(at)?;
                    for (key, value) in object {
                        let position = match names.iter().position(|n| *n == key) {
                            Some(position) => position,
                            None => {
                                names.push(key);
                                types.push(None);
                                names.len() - 1
                            }
                        };
                        let cell = match value {
                            serde_json::Value::Null => Cell::Null,
                            other => Cell::Json(other),
                        };
                        types[position] = format::widen(types[position].take(), &cell);
                    }
                }
            }
            rows += 1;
            if rows >= settings.infer_rows {
                break 'files;
            }
        }
    }
    Ok(Arc::new(format::inferred_schema(&names, &types)))
}

/// The column names of a CSV header: each cell's text, `_c<i>` for an empty one.
fn header_names(cells: Vec<Cell>) -> std::result::Result<Vec<String>, String> {
    let mut seen = HashSet::new();
    cells
        .into_iter()
        .enumerate()
        .map(|(i, cell)| {
            let name = match cell {
                Cell::Text(text) if !text.trim().is_empty() => text.trim().to_string(),
                _ => format!("_c{i}"),
            };
            if !seen.insert(name.clone()) {
                return Err(format!(
                    "the header names the column `{name}` twice: rename one, or read with \
                     header=false"
                ));
            }
            Ok(name)
        })
        .collect()
}

/// Why a CSV line with `found` cells does not fit the columns `names`.
fn field_count(found: usize, names: &[String]) -> String {
    format!(
        "{found} field(s), but the table has {} column(s) ({})",
        names.len(),
        names.join(", ")
    )
}

/// An error about line `line` (1-based) of `path`: what a user needs to find and fix it.
fn malformed(path: &Path, line: u64, reason: &str) -> Error {
    Error::msg(format!("`{}` line {line}: {reason}", path.display()))
}
