//! Batch reads: the sequence `[0, end)`, or, with the option `path`, the files that writes
//! published there. Conditions on `id` that Spark pushes (`push_filters`) narrow the ids read.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{FieldRef, SchemaRef};
use serde::{Deserialize, Serialize};

use super::sequence::{self, columns_of, project, Column, RowRange};
use super::table::{self, Row};
use super::Source;
use spark_datasource::filters::{Filter, IntegerFilter};
use spark_datasource::{BatchRead, BatchReader, Batches, Error, Result, TaskContext};

// ANCHOR: options
/// The options of a batch read.
const OPTIONS: &[&str] = &["end", "num_partitions", "batch_rows", "path", "prefix"];

/// The longest `prefix`: a label is data that Spark holds in memory, row after row.
const MAX_PREFIX_BYTES: usize = 64;
// ANCHOR_END: options

/// The reader: everything a task needs, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    end: u64,
    num_partitions: u64,
    batch_rows: u64,
    path: Option<PathBuf>,
    /// The text that starts each label (option `prefix`, `row` by default).
    prefix: String,
    /// The columns to read, in Spark's order.
    columns: Vec<Column>,
    /// A limit that `push_limit` accepted.
    limit: Option<u64>,
    /// The ids that the filters `push_filters` accepted keep: every id until then.
    ids: IntegerFilter,
}

/// A task's share of the read.
#[derive(Debug, Serialize, Deserialize)]
pub enum Partition {
    /// Rows of the sequence.
    Rows(RowRange),
    /// Files of the table at `path`.
    Files(Vec<String>),
}

// ANCHOR: reader
impl BatchRead for Source {
    type Reader = Reader;

    fn reader(&self, schema: SchemaRef) -> Result<Reader> {
        self.options.expect_only(OPTIONS)?;
        let num_partitions = self.options.get_or("num_partitions", 2_u64)?;
        let batch_rows = self.options.get_or("batch_rows", sequence::BATCH_ROWS)?;
        if num_partitions == 0 || batch_rows == 0 {
            return Err(Error::Option(
                "options `num_partitions` and `batch_rows` must be at least 1".to_string(),
            ));
        }
        let prefix = self.options.get("prefix").unwrap_or("row").to_string();
        if prefix.is_empty() || prefix.len() > MAX_PREFIX_BYTES {
            return Err(Error::Option(format!(
                "option `prefix` must have 1 to {MAX_PREFIX_BYTES} bytes, got {}",
                prefix.len()
            )));
        }
        Ok(Reader {
            end: self.options.get_or("end", 10_u64)?,
            num_partitions,
            batch_rows,
            path: self.options.optional("path")?,
            prefix,
            columns: columns_of(&schema)?,
            limit: None,
            ids: IntegerFilter::all(),
        })
    }
}
// ANCHOR_END: reader

impl BatchReader for Reader {
    type Partition = Partition;

    // ANCHOR: push_filters
    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        // Comparisons and IN of `id` with integers (and their AND) become bounds and a set of
        // ids, which the plan and `read` keep to; Spark evaluates the others.
        let (ids, accepted) = IntegerFilter::from_filters("id", filters);
        self.ids = ids;
        Ok(accepted)
    }
    // ANCHOR_END: push_filters

    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        self.limit = Some(limit);
        Ok(true)
    }

    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        self.columns = columns_of(&required)?;
        Ok(())
    }

    fn partitions(&self) -> Result<Vec<Partition>> {
        let Some(path) = &self.path else {
            return Ok(self.plan_rows().into_iter().map(Partition::Rows).collect());
        };
        let manifest = table::load(path)?.ok_or_else(|| {
            Error::msg(format!(
                "no data at `{}`: write to it first, or check the option `path`",
                path.display()
            ))
        })?;
        // Deal the files to the partitions in turn; planning reads no data.
        let count = (self.num_partitions as usize).min(manifest.files.len());
        let mut groups = vec![Vec::new(); count];
        for (i, file) in manifest.files.into_iter().enumerate() {
            groups[i % count].push(file);
        }
        Ok(groups.into_iter().map(Partition::Files).collect())
    }

    fn read(&self, partition: Partition, _task: &TaskContext) -> Result<Batches> {
        let batches = match (partition, &self.path) {
            (Partition::Rows(range), _) => {
                // Only the ids that the accepted filters keep, range by range.
                let mut parts = Vec::new();
                for r in self.ids.ranges(range.start as i64, range.end as i64) {
                    let rows = RowRange {
                        start: r.start as u64,
                        end: r.end as u64,
                    };
                    let (columns, prefix) = (&self.columns, &self.prefix);
                    parts.push(sequence::batches(rows, columns, self.batch_rows, prefix)?);
                }
                Batches::new(project(&self.columns)?, parts.into_iter().flatten())
            }
            (Partition::Files(files), Some(root)) => {
                let open = |file: String| -> Result<(String, File)> {
                    let path = root.join(file).display().to_string();
                    let opened = File::open(&path);
                    let file = opened.map_err(|e| Error::io(format!("cannot open `{path}`"), e))?;
                    Ok((path, file))
                };
                let files = files.into_iter().map(open).collect::<Result<_>>()?;
                self.read_files(files)?
            }
            (Partition::Files(_), None) => {
                return Err(Error::msg("a partition of files needs the option `path`"))
            }
        };
        Ok(match self.limit {
            Some(limit) => limit_rows(batches, limit),
            None => batches,
        })
    }
}

impl Reader {
    /// The rows to read: from the first id that the accepted filters keep to the last (under
    /// a limit, the `limit`-th), split among the partitions that hold one.
    fn plan_rows(&self) -> Vec<RowRange> {
        let ranges = self.ids.ranges(0, self.end.try_into().unwrap_or(i64::MAX));
        let start = ranges.first().map_or(0, |r| r.start);
        let (mut left, mut end) = (self.limit.unwrap_or(u64::MAX), start);
        for r in &ranges {
            let rows = left.min((r.end - r.start) as u64);
            if rows == 0 {
                break;
            }
            (left, end) = (left - rows, r.start + rows as i64);
        }
        let parts = sequence::split(start as u64..end as u64, self.num_partitions);
        let matches = |r: &RowRange| !self.ids.ranges(r.start as i64, r.end as i64).is_empty();
        parts.into_iter().filter(matches).collect()
    }

    /// The rows of the JSON-lines `files` whose id the accepted filters keep, read lazily, in
    /// batches of at most `batch_rows`.
    fn read_files(&self, files: Vec<(String, File)>) -> Result<Batches> {
        let (output, ids) = (project(&self.columns)?, self.ids.clone());
        let batch_rows = usize::try_from(self.batch_rows).unwrap_or(usize::MAX);
        let rows = files.into_iter().flat_map(|(name, file)| {
            BufReader::new(file).lines().map(move |line| {
                let line = line.map_err(|e| Error::io(format!("cannot read `{name}`"), e))?;
                let row: Row = serde_json::from_str(&line).map_err(|e| {
                    Error::msg(format!("`{name}` has a line that is not a row: {e}"))
                })?;
                Ok((row.id, row.label.map(Cow::into_owned)))
            })
        });
        // An error is kept, to fail the read.
        let mut rows = rows.filter(move |row| !matches!(row, Ok((id, _)) if !ids.contains(*id)));
        let schema = output.clone();
        let batches =
            std::iter::from_fn(move || next_batch(&mut rows, &schema, batch_rows).transpose());
        Ok(Batches::new(output, batches))
    }
}

/// The next batch of at most `batch_rows` of `rows`, with the columns of `schema`.
fn next_batch(
    rows: &mut impl Iterator<Item = Result<(i64, Option<String>)>>,
    schema: &SchemaRef,
    batch_rows: usize,
) -> Result<Option<RecordBatch>> {
    let (mut ids, mut labels) = (Int64Builder::new(), StringBuilder::new());
    for row in rows.take(batch_rows) {
        let (id, label) = row?;
        ids.append_value(id);
        labels.append_option(label);
    }
    let (ids, labels): (ArrayRef, ArrayRef) = (Arc::new(ids.finish()), Arc::new(labels.finish()));
    let column = |field: &FieldRef| Arc::clone(if field.name() == "id" { &ids } else { &labels });
    let columns = schema.fields().iter().map(column).collect();
    // The row count is given: a read of no column (`count(*)`) still counts the rows.
    let options = RecordBatchOptions::new().with_row_count(Some(ids.len()));
    let batch = RecordBatch::try_new_with_options(schema.clone(), columns, &options)?;
    Ok((batch.num_rows() > 0).then_some(batch))
}

/// At most `limit` rows of `batches`.
fn limit_rows(batches: Batches, limit: u64) -> Batches {
    let schema = batches.schema();
    let mut remaining = limit as usize;
    let limited = batches.map_while(move |batch| {
        if remaining == 0 {
            return None;
        }
        Some(batch.map(|batch: RecordBatch| {
            let rows = batch.num_rows().min(remaining);
            remaining -= rows;
            batch.slice(0, rows)
        }))
    });
    Batches::new(schema, limited)
}
