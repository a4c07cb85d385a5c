//! Batch reads: byte-range splits planned from file sizes, each read line by line into batches
//! of the columns the query needs, up to a pushed limit.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde::{Deserialize, Serialize};

use super::format::{self, ColumnBuilder, Format};
use super::splits::{self, SplitLines};
use super::{field_count, malformed, table, Settings, Source};
use spark_datasource::{BatchRead, BatchReader, Batches, Error, Result, TaskContext};

/// The rows of a batch: bounded, so that a task's memory does not grow with its split.
const BATCH_ROWS: usize = 4096;

/// The reader, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    settings: Settings,
    /// The columns of the files, in the order of a CSV line.
    columns: Vec<Column>,
    /// The columns to read, as indices into `columns`, in Spark's order.
    projection: Vec<usize>,
    /// A limit that `push_limit` accepted: each partition reads at most that many rows.
    limit: Option<u64>,
}

/// A column, in a form that serializes (Arrow's `Schema` does not, without arrow-schema's
/// `serde` feature).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Column {
    name: String,
    kind: Kind,
    nullable: bool,
}

/// The types that text is read as (`format::READABLE_TYPES`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Int64,
    Int32,
    Float64,
    Boolean,
    Utf8,
    Timestamp(Option<String>),
}

impl Column {
    fn of(field: &Field) -> Result<Column> {
        let kind = match field.data_type() {
            DataType::Int64 => Kind::Int64,
            DataType::Int32 => Kind::Int32,
            DataType::Float64 => Kind::Float64,
            DataType::Boolean => Kind::Boolean,
            DataType::Utf8 => Kind::Utf8,
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                Kind::Timestamp(tz.as_ref().map(|tz| tz.to_string()))
            }
            other => {
                return Err(Error::msg(format!(
                    "column `{}` is {other}, which this data source cannot read from text; use \
                     one of: {}",
                    field.name(),
                    format::READABLE_TYPES
                )))
            }
        };
        Ok(Column {
            name: field.name().clone(),
            kind,
            nullable: field.is_nullable(),
        })
    }

    fn field(&self) -> Field {
        let data_type = match &self.kind {
            Kind::Int64 => DataType::Int64,
            Kind::Int32 => DataType::Int32,
            Kind::Float64 => DataType::Float64,
            Kind::Boolean => DataType::Boolean,
            Kind::Utf8 => DataType::Utf8,
            Kind::Timestamp(tz) => {
                DataType::Timestamp(TimeUnit::Microsecond, tz.as_deref().map(Arc::from))
            }
        };
        Field::new(&self.name, data_type, self.nullable)
    }
}

impl BatchRead for Source {
    type Reader = Reader;

    fn reader(&self, schema: SchemaRef) -> Result<Reader> {
        let columns = schema
            .fields()
            .iter()
            .map(|field| Column::of(field))
            .collect::<Result<Vec<_>>>()?;
        Ok(Reader {
            settings: self.settings()?,
            projection: (0..columns.len()).collect(),
            columns,
            limit: None,
        })
    }
}

impl Reader {
    /// The schema of what a task returns: the projected columns.
    fn output(&self) -> SchemaRef {
        let fields: Vec<Field> = self
            .projection
            .iter()
            .map(|&i| self.columns[i].field())
            .collect();
        Arc::new(Schema::new(fields))
    }
}

impl BatchReader for Reader {
    type Partition = Vec<splits::Split>;

    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        self.limit = Some(limit);
        Ok(true)
    }

    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        self.projection = required
            .fields()
            .iter()
            .map(|field| {
                // By name and type: the read returns its own nullability, which Spark gave.
                self.columns
                    .iter()
                    .position(|c| {
                        c.name == *field.name() && c.field().data_type() == field.data_type()
                    })
                    .ok_or_else(|| {
                        Error::msg(format!(
                            "cannot prune to the column `{}` ({}): the read's schema has no such \
                             column",
                            field.name(),
                            field.data_type()
                        ))
                    })
            })
            .collect::<Result<_>>()?;
        Ok(())
    }

    fn partitions(&self) -> Result<Vec<Vec<splits::Split>>> {
        let files = table::visible(&self.settings.path, self.settings.format.extension())?;
        Ok(splits::plan(&files, self.settings.split_bytes))
    }

    fn read(&self, partition: Vec<splits::Split>, _task: &TaskContext) -> Result<Batches> {
        let output = self.output();
        let builders = output
            .fields()
            .iter()
            .map(|field| ColumnBuilder::new(field.clone()).map_err(Error::msg))
            .collect::<Result<Vec<_>>>()?;
        let rows = PartitionRows {
            root: self.settings.path.clone(),
            format: self.settings.format,
            names: self.columns.iter().map(|c| c.name.clone()).collect(),
            projection: self.projection.clone(),
            output: output.clone(),
            builders,
            splits: partition.into(),
            current: None,
            remaining: self.limit,
            failed: false,
        };
        Ok(Batches::new(output, rows))
    }
}

/// The rows of a partition's splits, read lazily, a batch at a time.
struct PartitionRows {
    root: PathBuf,
    format: Format,
    /// The names of all the columns of the files.
    names: Vec<String>,
    projection: Vec<usize>,
    output: SchemaRef,
    builders: Vec<ColumnBuilder>,
    splits: VecDeque<splits::Split>,
    /// The split being read: its file's path, whether it starts the file, and its lines.
    current: Option<(PathBuf, bool, SplitLines<BufReader<File>>)>,
    /// The rows left under a pushed limit.
    remaining: Option<u64>,
    failed: bool,
}

impl PartitionRows {
    /// The next line of the partition, with its file, or `None` at the end.
    fn next_line(&mut self) -> Result<Option<(PathBuf, splits::Line)>> {
        loop {
            if self.current.is_none() {
                let Some(split) = self.splits.pop_front() else {
                    return Ok(None);
                };
                let path = self.root.join(&split.file);
                let file = File::open(&path)
                    .map_err(|e| Error::io(format!("cannot open `{}`", path.display()), e))?;
                let lines = SplitLines::new(BufReader::new(file), &split)
                    .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?;
                self.current = Some((path, split.start == 0, lines));
            }
            let Some((path, first, lines)) = &mut self.current else {
                continue;
            };
            match lines
                .next_line()
                .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?
            {
                Some(line) if line.position == 0 && *first && self.format.has_header() => {}
                Some(line) if line.text.trim().is_empty() => {}
                Some(line) => return Ok(Some((path.clone(), line))),
                None => self.current = None,
            }
        }
    }

    /// Parses `line` into the builders, or says why it cannot be.
    fn append(&mut self, text: &str) -> std::result::Result<(), String> {
        let mut cells = match self.format {
            Format::Csv { delimiter, .. } => {
                let cells = format::split_csv(text, delimiter)?;
                if cells.len() != self.names.len() {
                    return Err(field_count(cells.len(), &self.names));
                }
                cells
            }
            Format::JsonLines => {
                let mut object = format::parse_json(text)?;
                let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
                format::json_cells(&mut object, &names)
            }
        };
        for (builder, &index) in self.builders.iter_mut().zip(&self.projection) {
            builder.append(std::mem::replace(&mut cells[index], format::Cell::Null))?;
        }
        Ok(())
    }

    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let mut rows = 0;
        while rows < BATCH_ROWS && self.remaining != Some(0) {
            let Some((path, line)) = self.next_line()? else {
                break;
            };
            if let Err(reason) = self.append(&line.text) {
                return Err(at_line(&path, line.position, &reason));
            }
            rows += 1;
            if let Some(remaining) = &mut self.remaining {
                *remaining -= 1;
            }
        }
        if rows == 0 {
            return Ok(None);
        }
        let columns = self.builders.iter_mut().map(|b| b.finish()).collect();
        Ok(Some(RecordBatch::try_new(self.output.clone(), columns)?))
    }
}

/// The error of a malformed line, with its line number, counted only now that it is needed.
fn at_line(path: &Path, position: u64, reason: &str) -> Error {
    let line =
        File::open(path).and_then(|file| splits::line_number(BufReader::new(file), position));
    match line {
        Ok(line) => malformed(path, line, reason),
        Err(_) => Error::msg(format!("`{}` at byte {position}: {reason}", path.display())),
    }
}

impl Iterator for PartitionRows {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        if self.failed {
            return None;
        }
        let next = self.next_batch();
        self.failed = next.is_err();
        next.transpose()
    }
}
