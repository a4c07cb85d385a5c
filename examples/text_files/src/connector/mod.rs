//! A file data source: a directory of CSV or JSON-lines files, in the spirit of the CSV
//! connector of the Data Source V2 guide ("Building a Connector"), that reads what Spark's own
//! CSV and JSON readers read, with the same schema and values.
//!
//! - Reads plan byte-range splits from the sizes of the files, never reading data
//!   (`splits`); each task parses its records (`format`), converts their values (`values`)
//!   into batches (`read`), reading only the columns the query needs and stopping at a pushed
//!   limit. Malformed records are handled as the option `mode` says.
//! - The schema is the one the query gives (`.schema(...)`), or is inferred on the driver as
//!   Spark infers it (`infer`): from every record, or a sample (`samplingRatio`), of every
//!   file.
//! - Writes stage one part file per task and publish them all with one atomic rename of a
//!   manifest (`table`, `write`); an overwrite replaces the visible files in the same step.
//!
//! The options are Spark's, under Spark's names (see `OPTIONS` and the README), plus `path`,
//! `format` (`csv` or `jsonl`) and `split_bytes`.

mod datetime;
mod flat_json;
mod format;
mod infer;
mod json_schema;
mod read;
mod splits;
mod table;
mod values;
mod words;
mod write;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use self::format::{CsvSyntax, Format, OpenQuote};
use self::infer::{Inferred, Sampler};
use self::values::{Cell, ValueOptions};
use spark_datasource::{DataSource, Error, Options, Result};

/// Every option of the data source; Spark adds `checkpointLocation` to some writes.
const OPTIONS: &[&str] = &[
    "path",
    "format",
    "split_bytes",
    "header",
    "sep",
    "delimiter",
    "quote",
    "escape",
    "comment",
    "ignoreLeadingWhiteSpace",
    "ignoreTrailingWhiteSpace",
    "nullValue",
    "emptyValue",
    "nanValue",
    "positiveInf",
    "negativeInf",
    "dateFormat",
    "timestampFormat",
    "timeZone",
    "inferSchema",
    "samplingRatio",
    "mode",
    "columnNameOfCorruptRecord",
    "multiLine",
    "encoding",
    "charset",
    "checkpointLocation",
];

/// Options that apply to CSV only.
const CSV_ONLY: &[&str] = &[
    "header",
    "sep",
    "delimiter",
    "quote",
    "escape",
    "comment",
    "ignoreLeadingWhiteSpace",
    "ignoreTrailingWhiteSpace",
    "nullValue",
    "emptyValue",
    "nanValue",
    "positiveInf",
    "negativeInf",
    "inferSchema",
    "multiLine",
];

/// The default of `split_bytes`: Spark's default `spark.sql.files.maxPartitionBytes`.
const DEFAULT_SPLIT_BYTES: u64 = 128 * 1024 * 1024;

/// What Spark does with a malformed record: the option `mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Reads what it can: the values that do not convert are null, and the record's text goes
    /// to the `columnNameOfCorruptRecord` column, if the schema has one.
    Permissive,
    /// Leaves the record out.
    DropMalformed,
    /// Fails the query, naming the file and the line.
    FailFast,
}

/// The data source: the options of the query, checked once.
pub struct Source {
    options: Options,
    settings: Settings,
}

/// What reads and writes need to know about the table; it travels with readers and writers.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    /// `None` until a read or a write needs it (see [`Source::settings`]).
    path: Option<PathBuf>,
    format: Format,
    values: ValueOptions,
    split_bytes: u64,
    infer_schema: bool,
    sampling_ratio: f64,
    mode: Mode,
    corrupt_column: String,
    multi_line: bool,
}

impl DataSource for Source {
    fn create(_name: &str, options: Options) -> Result<Self> {
        if options.get("infer_rows").is_some() {
            return Err(Error::Option(
                "option `infer_rows` is gone: the schema is inferred from every record, as \
                 Spark does; set `samplingRatio` (such as 0.1) to infer from a sample"
                    .to_string(),
            ));
        }
        options.expect_only(OPTIONS)?;
        let settings = settings(&options)?;
        Ok(Source { options, settings })
    }

    fn schema(&self) -> Result<SchemaRef> {
        infer(&self.settings()?)
    }
}

/// The settings of `options`, each checked with a message that names the option.
fn settings(options: &Options) -> Result<Settings> {
    let option = |message: String| Error::Option(message);
    let text = |key: &str, default: &str| options.get_or(key, default.to_string());
    let format = match text("format", "csv")?.to_ascii_lowercase().as_str() {
        "csv" => Format::Csv(CsvSyntax {
            delimiter: character("sep", options.get("sep").or(options.get("delimiter")))?
                .unwrap_or(','),
            quote: match options.get("quote") {
                // Spark turns quoting off with an empty `quote`.
                Some("") => None,
                other => Some(character("quote", other)?.unwrap_or('"')),
            },
            escape: character("escape", options.get("escape"))?.unwrap_or('\\'),
            comment: character("comment", options.get("comment"))?,
            header: options.get_or("header", true)?,
            trim_leading: options.get_or("ignoreLeadingWhiteSpace", false)?,
            trim_trailing: options.get_or("ignoreTrailingWhiteSpace", false)?,
        }),
        "jsonl" => {
            if let Some(key) = CSV_ONLY.iter().find(|k| options.get(k).is_some()) {
                return Err(option(format!(
                    "option `{key}` applies to format=csv only: JSON lines are read as Spark's \
                     JSON reader reads them, inferring every column"
                )));
            }
            Format::JsonLines
        }
        other => {
            return Err(option(format!(
                "option `format` must be `csv` or `jsonl`, got `{other}`"
            )))
        }
    };
    if let Format::Csv(syntax) = &format {
        if matches!(syntax.delimiter, '\n' | '\r') || Some(syntax.delimiter) == syntax.quote {
            return Err(option(
                "option `sep` cannot be a line break or the quote character".to_string(),
            ));
        }
    }
    let encoding = options
        .get("encoding")
        .or(options.get("charset"))
        .unwrap_or("UTF-8");
    if !matches!(
        encoding.to_ascii_uppercase().replace('_', "-").as_str(),
        "UTF-8" | "UTF8"
    ) {
        return Err(option(format!(
            "option `encoding` must be UTF-8, got `{encoding}`: this source reads UTF-8 only; \
             convert the files first, such as with `iconv -f {encoding} -t UTF-8`"
        )));
    }
    let pattern = |key: &str| -> Result<Option<datetime::Pattern>> {
        options
            .get(key)
            .map(|p| datetime::Pattern::parse(key, p).map_err(Error::Option))
            .transpose()
    };
    let values = ValueOptions {
        null_value: text("nullValue", "")?,
        empty_value: text("emptyValue", "")?,
        nan_value: text("nanValue", "NaN")?,
        positive_inf: text("positiveInf", "Inf")?,
        negative_inf: text("negativeInf", "-Inf")?,
        date_format: pattern("dateFormat")?,
        timestamp_format: pattern("timestampFormat")?,
        zone: datetime::zone(&text("timeZone", "UTC")?).map_err(Error::Option)?,
    };
    let mode = match text("mode", "PERMISSIVE")?.to_ascii_uppercase().as_str() {
        "PERMISSIVE" => Mode::Permissive,
        "DROPMALFORMED" => Mode::DropMalformed,
        "FAILFAST" => Mode::FailFast,
        other => {
            return Err(option(format!(
                "option `mode` must be PERMISSIVE, DROPMALFORMED or FAILFAST, got `{other}`"
            )))
        }
    };
    let sampling_ratio: f64 = match options.get("samplingRatio") {
        None => 1.0,
        Some(ratio) => match ratio.trim().parse::<f64>() {
            Ok(r) if r > 0.0 && r <= 1.0 => r,
            _ => {
                return Err(option(format!(
                    "option `samplingRatio` must be a number in (0, 1], such as 0.1, got \
                     `{ratio}`"
                )))
            }
        },
    };
    let split_bytes = options.get_or("split_bytes", DEFAULT_SPLIT_BYTES)?;
    if split_bytes == 0 {
        return Err(option(
            "option `split_bytes` must be at least 1".to_string(),
        ));
    }
    Ok(Settings {
        path: None,
        format,
        values,
        split_bytes,
        infer_schema: options.get_or("inferSchema", true)?,
        sampling_ratio,
        mode,
        corrupt_column: text("columnNameOfCorruptRecord", "_corrupt_record")?,
        multi_line: options.get_or("multiLine", false)?,
    })
}

/// One character of the option `key`; Spark's `\t` spelled as two characters is a tab.
fn character(key: &str, value: Option<&str>) -> Result<Option<char>> {
    let Some(value) = value else { return Ok(None) };
    if value == "\\t" {
        return Ok(Some('\t'));
    }
    let mut chars = value.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(Some(c)),
        _ => Err(Error::Option(format!(
            "option `{key}` must be one character, such as `,` or `;`, got `{value}`"
        ))),
    }
}

impl Source {
    /// What reads and writes need. The option `path` is checked here rather than in `create`,
    /// so that Spark (and the capabilities test) can create the source without options.
    fn settings(&self) -> Result<Settings> {
        Ok(Settings {
            path: Some(self.options.required("path")?),
            ..self.settings.clone()
        })
    }
}

impl Settings {
    /// The directory of the table; [`Source::settings`] sets it.
    fn root(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new("."))
    }
}

/// The records of a file, in order, each with the number of its first line: blank lines and
/// comments are skipped, a UTF-8 byte order mark is dropped, and with `multi_line` a CSV
/// record whose quoted value is open continues on the next line.
fn each_record(
    settings: &Settings,
    path: &Path,
    mut f: impl FnMut(u64, &str) -> Result<bool>,
) -> Result<()> {
    // `f` says whether to go on.
    let input =
        File::open(path).map_err(|e| Error::io(format!("cannot open `{}`", path.display()), e))?;
    let mut input = BufReader::with_capacity(256 * 1024, input);
    // One buffer for the lines of the file; a record that spans lines is gathered apart.
    let mut buffer = String::new();
    let mut pending: Option<(u64, String)> = None;
    let mut number = 0u64;
    loop {
        buffer.clear();
        number += 1;
        let read = input.read_line(&mut buffer).map_err(|e| {
            Error::io(
                format!(
                    "cannot read `{}` as UTF-8 text (line {number})",
                    path.display()
                ),
                e,
            )
        })?;
        if read == 0 {
            break;
        }
        let mut line = buffer.strip_suffix('\n').unwrap_or(&buffer);
        line = line.trim_end_matches('\r');
        if number == 1 {
            line = line.trim_start_matches('\u{feff}');
        }
        let go_on = match pending.take() {
            Some((first, mut record)) => {
                record.push('\n');
                record.push_str(line);
                if is_open(settings, &record) {
                    pending = Some((first, record));
                    continue;
                }
                f(first, &record)?
            }
            None if settings.format.skips(line) => continue,
            None if settings.multi_line && is_open(settings, line) => {
                pending = Some((number, line.to_string()));
                continue;
            }
            None => f(number, line)?,
        };
        if !go_on {
            return Ok(());
        }
    }
    if let Some((first, record)) = pending {
        f(first, &record)?;
    }
    Ok(())
}

/// Whether a CSV record ends inside a quoted value.
fn is_open(settings: &Settings, record: &str) -> bool {
    match &settings.format {
        Format::Csv(syntax) => format::split_csv(record, syntax, &settings.values).is_err(),
        Format::JsonLines => false,
    }
}

/// The schema of the table, inferred as Spark infers it.
fn infer(settings: &Settings) -> Result<SchemaRef> {
    let root = settings.root();
    let files = table::visible(root, settings.format.extension())?;
    if files.iter().all(|f| f.size == 0) {
        return Err(Error::msg(format!(
            "no `.{}` data in `{}` to infer the schema from: give the schema with \
             .schema(\"id bigint, name string\"), or write to the path first",
            settings.format.extension(),
            root.display()
        )));
    }
    let paths: Vec<PathBuf> = files.iter().map(|f| root.join(&f.name)).collect();
    match &settings.format {
        Format::Csv(syntax) => infer_csv(settings, syntax, &paths),
        Format::JsonLines => json_schema::infer(settings, &files),
    }
}

fn infer_csv(settings: &Settings, syntax: &CsvSyntax, paths: &[PathBuf]) -> Result<SchemaRef> {
    let mut names: Vec<String> = Vec::new();
    let mut types: Vec<Inferred> = Vec::new();
    let mut sampler = Sampler::new(settings.sampling_ratio);
    for path in paths {
        let mut first = true;
        each_record(settings, path, |_line, record| {
            // Spark reads an open quoted value to the end of the record.
            let cells = format::split_csv(record, syntax, &settings.values)
                .unwrap_or_else(|OpenQuote(cells)| cells);
            let header = std::mem::replace(&mut first, false) && syntax.header;
            if names.is_empty() {
                names = if header {
                    header_names(&cells)
                } else {
                    (0..cells.len()).map(|i| format!("_c{i}")).collect()
                };
                types = vec![Inferred::Null; names.len()];
            }
            if !settings.infer_schema {
                // Every column is a string: the first record gave the names.
                return Ok(false);
            }
            if header || !sampler.keep() {
                return Ok(true);
            }
            // A record with more cells than columns is inferred from its first cells, as
            // Spark does; reads treat it as the mode says.
            for (t, cell) in types.iter_mut().zip(&cells) {
                let text = match cell {
                    Cell::Text(text) => Some(text.as_ref()),
                    _ => None,
                };
                *t = infer::csv_field(*t, text, &settings.values);
            }
            Ok(true)
        })?;
        if !settings.infer_schema && !names.is_empty() {
            break;
        }
    }
    let fields: Vec<Field> = names
        .iter()
        .zip(&types)
        .map(|(name, t)| Field::new(name, t.data_type(), true))
        .collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// The column names of a CSV header as Spark makes them: an empty or null cell is `_c<i>`,
/// and a name that appears twice (in any case) gets its position appended.
fn header_names(cells: &[Cell]) -> Vec<String> {
    let texts: Vec<Option<&str>> = cells
        .iter()
        .map(|cell| match cell {
            Cell::Text(text) if !text.is_empty() => Some(text.as_ref()),
            _ => None,
        })
        .collect();
    let lower: Vec<Option<String>> = texts.iter().map(|t| t.map(str::to_lowercase)).collect();
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| match text {
            None => format!("_c{i}"),
            Some(name) => {
                let twice = lower.iter().filter(|l| *l == &lower[i]).count() > 1;
                if twice {
                    format!("{name}{i}")
                } else {
                    name.to_string()
                }
            }
        })
        .collect()
}

/// Why a CSV record with `found` cells does not fit the columns `names`.
fn field_count(found: usize, names: &[&str]) -> String {
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

/// The arrow type of a column that holds the text of malformed records.
fn is_text(data_type: &DataType) -> bool {
    matches!(data_type, DataType::Utf8)
}
