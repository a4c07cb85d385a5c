//! Batch reads: the sample's rows `[0, end)`, or, with the option `path`, the files that
//! writes published there. Conditions on the sample's key column that Spark pushes
//! (`push_filters`) narrow the rows read. The columns and the limit are the kit's `Scan`, which
//! keeps to whatever schema the source has.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

use super::sample::{self, RowRange};
use super::table;
use super::Source;
use spark_datasource::filters::{Filter, IntegerFilter};
use spark_datasource::kit::schema::Scan;
use spark_datasource::{BatchRead, BatchReader, Batches, DataSource, Error, Result, TaskContext};

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
    /// The source's columns, those Spark reads, and the limit that `push_limit` accepted.
    scan: Scan,
    /// The keys that the filters `push_filters` accepted keep: every key until then.
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
        let batch_rows = self.options.get_or("batch_rows", sample::BATCH_ROWS)?;
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
            scan: Scan::new(self.schema()?, schema)?,
            ids: IntegerFilter::all(),
        })
    }
}

// ANCHOR_END: reader

impl BatchReader for Reader {
    type Partition = Partition;

    // ANCHOR: push_filters
    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        // Comparisons and IN of the key with integers (and their AND) become bounds and a set
        // of keys, which the plan and `read` keep to; Spark evaluates the others.
        let (ids, accepted) = IntegerFilter::from_filters(sample::KEY, filters);
        self.ids = ids;
        Ok(accepted)
    }
    // ANCHOR_END: push_filters

    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        self.scan.limit = Some(limit);
        Ok(true)
    }

    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        self.scan.prune(required)
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
                    let (schema, prefix) = (&self.scan.read, &self.prefix);
                    parts.push(sample::batches(rows, schema, self.batch_rows, prefix)?);
                }
                Batches::new(self.scan.read.clone(), parts.into_iter().flatten())
            }
            (Partition::Files(files), Some(root)) => {
                let open = |file: String| -> Result<(String, BufReader<File>)> {
                    let path = root.join(file).display().to_string();
                    let opened = File::open(&path);
                    let file = opened.map_err(|e| Error::io(format!("cannot open `{path}`"), e))?;
                    Ok((path, BufReader::new(file)))
                };
                let files = files.into_iter().map(open).collect::<Result<_>>()?;
                let (ids, batch_rows) = (self.ids.clone(), self.batch_rows as usize);
                sample::read_lines(files, &self.scan.read, batch_rows, move |id| {
                    ids.contains(id)
                })
            }
            (Partition::Files(_), None) => {
                return Err(Error::msg("a partition of files needs the option `path`"))
            }
        };
        Ok(self.scan.limited(batches))
    }
}

impl Reader {
    /// The rows to read: from the first id that the accepted filters keep to the last (under
    /// a limit, the `limit`-th), split among the partitions that hold one.
    fn plan_rows(&self) -> Vec<RowRange> {
        let ranges = self.ids.ranges(0, self.end.try_into().unwrap_or(i64::MAX));
        let start = ranges.first().map_or(0, |r| r.start);
        let (mut left, mut end) = (self.scan.limit.unwrap_or(u64::MAX), start);
        for r in &ranges {
            let rows = left.min((r.end - r.start) as u64);
            if rows == 0 {
                break;
            }
            (left, end) = (left - rows, r.start + rows as i64);
        }
        let parts = sample::split(start as u64..end as u64, self.num_partitions);
        let matches = |r: &RowRange| !self.ids.ranges(r.start as i64, r.end as i64).is_empty();
        parts.into_iter().filter(matches).collect()
    }
}
