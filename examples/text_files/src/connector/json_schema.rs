//! The schema of JSON lines, inferred as Spark's JSON reader infers it: every key of every
//! object (or of a `samplingRatio` sample) becomes a column, typed by `infer`, the columns
//! ordered by name.
//!
//! Spark infers from every record with a job over the files' splits; so does this, with a
//! thread per core over byte ranges of the files (the merge of types does not depend on
//! their order). A sample, which must be the same from run to run, is drawn in one pass.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::sync::Arc;

use arrow_schema::{Field, Schema, SchemaRef};

use super::flat_json::{self, Member};
use super::infer::{self, Inferred, JsonType, Sampler};
use super::splits::{self, SizedFile, Split, SplitLines};
use super::{each_record, format, malformed, Mode, Settings};
use spark_datasource::{Error, Result};

/// The least data for a range of its own: below it, a thread costs more than it saves.
const RANGE_BYTES: u64 = 16 * 1024 * 1024;

/// The types of the keys seen so far, and whether a malformed record was seen.
#[derive(Default)]
struct Seen {
    types: BTreeMap<String, JsonType>,
    corrupt: bool,
    /// Reused from record to record.
    members: Vec<Member>,
}

/// The schema of the JSON lines `files` (under the table's root).
pub fn infer(settings: &Settings, files: &[SizedFile]) -> Result<SchemaRef> {
    let mut seen = if settings.sampling_ratio >= 1.0 && !settings.multi_line {
        side_by_side(settings, files)?
    } else {
        sampled(settings, files)?
    };
    if seen.corrupt {
        seen.types
            .entry(settings.corrupt_column.clone())
            .or_insert(JsonType::Scalar(Inferred::String));
    }
    let fields: Vec<Field> = seen
        .types
        .iter()
        .filter_map(|(name, t)| Some(Field::new(name, t.data_type()?, true)))
        .collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// Every record, the files cut into a range per core, typed side by side and merged. A
/// FAILFAST error is the first range's that has one: the first malformed line of the files.
fn side_by_side(settings: &Settings, files: &[SizedFile]) -> Result<Seen> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let total: u64 = files.iter().map(|f| f.size).sum();
    let range_bytes = total.div_ceil(cores).max(RANGE_BYTES);
    let ranges = splits::plan(files, range_bytes);
    let results: Vec<Result<Seen>> = std::thread::scope(|scope| {
        let threads: Vec<_> = ranges
            .iter()
            .map(|range| scope.spawn(|| of_range(settings, range)))
            .collect();
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(Error::msg("schema inference failed (a panic)")))
            })
            .collect()
    });
    let mut merged = Seen::default();
    for seen in results {
        let seen = seen?;
        merged.corrupt |= seen.corrupt;
        for (key, t) in seen.types {
            merged.merge(key.as_str(), t);
        }
    }
    Ok(merged)
}

/// The types of the records that begin in the splits of `range`.
fn of_range(settings: &Settings, range: &[Split]) -> Result<Seen> {
    let root = settings.root();
    let mut seen = Seen::default();
    let mut record = String::new();
    for split in range {
        let path = root.join(&split.file);
        let cannot_read = |e| Error::io(format!("cannot read `{}`", path.display()), e);
        let file = File::open(&path)
            .map_err(|e| Error::io(format!("cannot open `{}`", path.display()), e))?;
        let mut lines = SplitLines::new(file, split).map_err(cannot_read)?;
        loop {
            record.clear();
            let Some(position) = lines.next_line_into(&mut record).map_err(cannot_read)? else {
                break;
            };
            let text = match position {
                0 => record.trim_start_matches('\u{feff}'),
                _ => record.as_str(),
            };
            if settings.format.skips(text) {
                continue;
            }
            if let Err(reason) = seen.record(text) {
                match settings.mode {
                    Mode::FailFast => {
                        let file = File::open(&path).map_err(cannot_read)?;
                        let line = splits::line_number(BufReader::new(file), position)
                            .map_err(cannot_read)?;
                        return Err(malformed(&path, line, &reason));
                    }
                    Mode::DropMalformed => {}
                    Mode::Permissive => seen.corrupt = true,
                }
            }
        }
    }
    Ok(seen)
}

/// The records that `samplingRatio` keeps, file after file (and with `multiLine`, whole).
fn sampled(settings: &Settings, files: &[SizedFile]) -> Result<Seen> {
    let mut seen = Seen::default();
    let mut sampler = Sampler::new(settings.sampling_ratio);
    for file in files {
        let path = settings.root().join(&file.name);
        each_record(settings, &path, |line, record| {
            if !sampler.keep() {
                return Ok(true);
            }
            if let Err(reason) = seen.record(record) {
                match settings.mode {
                    Mode::FailFast => return Err(malformed(&path, line, &reason)),
                    Mode::DropMalformed => {}
                    Mode::Permissive => seen.corrupt = true,
                }
            }
            Ok(true)
        })?;
    }
    Ok(seen)
}

impl Seen {
    /// Types the keys of one record, or says why it is not a JSON object.
    fn record(&mut self, record: &str) -> std::result::Result<(), format::LineError> {
        // A flat object (nearly every line) is typed from its text, with no JSON value.
        let mut members = std::mem::take(&mut self.members);
        if flat_json::flat_members(record, &mut members) {
            for member in &members {
                let seen = infer::json_text(&record[member.value.clone()]);
                self.merge(&record[member.key.clone()], JsonType::Scalar(seen));
            }
            self.members = members;
            return Ok(());
        }
        self.members = members;
        for (key, value) in format::parse_json(record)? {
            self.merge(&key, JsonType::of(&value));
        }
        Ok(())
    }

    fn merge(&mut self, key: &str, seen: JsonType) {
        match self.types.get_mut(key) {
            Some(t) => *t = std::mem::replace(t, JsonType::Scalar(Inferred::Null)).merge(seen),
            None => {
                self.types.insert(key.to_string(), seen);
            }
        }
    }
}
