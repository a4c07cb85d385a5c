//! Micro-batch reads of the lines appended to the files of a directory.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

use super::offsets::{self, Offset};
use super::{schema, Source};
use spark_datasource::{log, Batches, Error, Result, StreamRead, StreamReader, TaskContext};

/// The lines of a batch: bounded, so that a task's memory does not grow with its range.
const BATCH_ROWS: usize = 4096;

/// Where `commit` records the committed offset, in the directory (hidden from the listing).
pub const COMMITTED: &str = "_committed.json";

/// The reader of the stream, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    path: PathBuf,
    max_lines_per_trigger: Option<u64>,
    delete_consumed: bool,
}

/// What a task reads: the bytes `[start, end)` of a file, complete lines only.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Partition {
    pub file: String,
    pub start: u64,
    pub end: u64,
}

impl StreamRead for Source {
    type Reader = Reader;

    fn stream_reader(&self, requested: SchemaRef) -> Result<Reader> {
        if requested.fields() != schema().fields() {
            return Err(Error::msg(
                "tail_stream reads the columns (file string not null, position bigint not null, \
                 line string not null): drop the schema given with .schema(...)",
            ));
        }
        let max_lines_per_trigger = match self.options.get("max_lines_per_trigger") {
            None => None,
            Some(_) => Some(self.options.required::<u64>("max_lines_per_trigger")?),
        };
        if max_lines_per_trigger == Some(0) {
            return Err(Error::Option(
                "option `max_lines_per_trigger` must be at least 1".to_string(),
            ));
        }
        Ok(Reader {
            path: self.options.required("path")?,
            max_lines_per_trigger,
            delete_consumed: self.options.get_or("delete_consumed", false)?,
        })
    }
}

impl Reader {
    /// The data files of the directory and their sizes, by name: hidden files (`_` or `.`
    /// first) are the source's own or another writer's staging.
    fn sizes(&self) -> Result<BTreeMap<String, u64>> {
        let entries = match fs::read_dir(&self.path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Error::msg(format!(
                    "the directory `{}` does not exist: create it, or check the option `path`",
                    self.path.display()
                )))
            }
            Err(e) => {
                return Err(Error::io(
                    format!("cannot list `{}`", self.path.display()),
                    e,
                ))
            }
        };
        let mut sizes = BTreeMap::new();
        for entry in entries {
            let entry = entry
                .map_err(|e| Error::io(format!("cannot list `{}`", self.path.display()), e))?;
            let name = entry.file_name().to_string_lossy().to_string();
            let metadata = entry
                .metadata()
                .map_err(|e| Error::io(format!("cannot read `{name}`"), e))?;
            if !name.starts_with(['_', '.']) && metadata.is_file() {
                sizes.insert(name, metadata.len());
            }
        }
        Ok(sizes)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl StreamReader for Reader {
    type Offset = Offset;
    type Partition = Partition;

    fn initial_offset(&self) -> Result<Offset> {
        // A new query reads the files from their beginning.
        Ok(Offset::default())
    }

    fn latest_offset(&mut self, start: Offset) -> Result<Offset> {
        let mut budget = self.max_lines_per_trigger;
        let mut end = Offset::default();
        for (name, size) in self.sizes()? {
            let from = start.position(&name);
            if size < from {
                return Err(Error::msg(format!(
                    "`{}` shrank to {size} bytes, but the stream had read {from}: this source \
                     reads append-only files; write to a new file instead of truncating",
                    self.file(&name).display()
                )));
            }
            let to = if budget == Some(0) || size == from {
                from
            } else {
                let path = self.file(&name);
                let mut input = File::open(&path)
                    .map_err(|e| Error::io(format!("cannot open `{}`", path.display()), e))?;
                input
                    .seek(SeekFrom::Start(from))
                    .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?;
                // Only the bytes that were there when listed: a line appended meanwhile waits.
                offsets::complete_lines_end(input.take(size - from), from, budget.as_mut())
                    .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?
            };
            if to > 0 {
                end.files.insert(name, to);
            }
        }
        // A file of `start` that is gone was consumed and deleted: it leaves the offset.
        Ok(end)
    }

    fn partitions(&self, start: Offset, end: Offset) -> Result<Vec<Partition>> {
        let mut partitions = Vec::new();
        for file in end.files.keys() {
            if let Some((from, to)) = offsets::range(file, &start, &end).map_err(Error::msg)? {
                partitions.push(Partition {
                    file: file.clone(),
                    start: from,
                    end: to,
                });
            }
        }
        Ok(partitions)
    }

    fn read(&self, partition: Partition, _task: &TaskContext) -> Result<Batches> {
        let path = self.file(&partition.file);
        let mut input = File::open(&path).map_err(|e| {
            Error::io(
                format!(
                    "cannot open `{}` to read its bytes {} to {}; was it deleted before the \
                     stream committed them?",
                    path.display(),
                    partition.start,
                    partition.end
                ),
                e,
            )
        })?;
        input
            .seek(SeekFrom::Start(partition.start))
            .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?;
        let lines = RangeLines {
            input: BufReader::new(input.take(partition.end - partition.start)),
            path,
            name: partition.file,
            position: partition.start,
            end: partition.end,
            failed: false,
        };
        Ok(Batches::new(schema(), lines))
    }

    fn commit(&mut self, end: Offset) -> Result<()> {
        let record = self.path.join(COMMITTED);
        let bytes = serde_json::to_vec_pretty(&end)
            .map_err(|e| Error::msg(format!("cannot encode the committed offset: {e}")))?;
        let temporary = self.path.join(format!("{COMMITTED}.tmp"));
        fs::write(&temporary, bytes)
            .and_then(|()| fs::rename(&temporary, &record))
            .map_err(|e| Error::io(format!("cannot record `{}`", record.display()), e))?;
        if self.delete_consumed {
            let sizes = self.sizes()?;
            for name in offsets::consumed(&end, &sizes) {
                let path = self.file(name);
                // Spark will never ask for these lines again: the file is no longer needed.
                match fs::remove_file(&path) {
                    Ok(()) => log::info(&format!("deleted `{}`, read to its end", path.display())),
                    Err(e) => log::warn(&format!("cannot delete `{}`: {e}", path.display())),
                }
            }
        }
        Ok(())
    }
}

/// The lines of a byte range of one file, in batches.
struct RangeLines {
    input: BufReader<std::io::Take<File>>,
    path: PathBuf,
    name: String,
    position: u64,
    end: u64,
    failed: bool,
}

impl RangeLines {
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let mut files = StringBuilder::new();
        let mut positions = Int64Builder::new();
        let mut lines = StringBuilder::new();
        let mut rows = 0;
        let mut buffer = Vec::new();
        while rows < BATCH_ROWS {
            buffer.clear();
            let read = self
                .input
                .read_until(b'\n', &mut buffer)
                .map_err(|e| Error::io(format!("cannot read `{}`", self.path.display()), e))?;
            if read == 0 {
                break;
            }
            if buffer.last() != Some(&b'\n') {
                return Err(truncated(&self.path, self.position + read as u64, self.end));
            }
            buffer.pop();
            if buffer.last() == Some(&b'\r') {
                buffer.pop();
            }
            let text = std::str::from_utf8(&buffer).map_err(|_| {
                Error::msg(format!(
                    "`{}`: the line at byte {} is not UTF-8 text",
                    self.path.display(),
                    self.position
                ))
            })?;
            files.append_value(&self.name);
            positions.append_value(i64::try_from(self.position).unwrap_or(i64::MAX));
            lines.append_value(text);
            self.position += read as u64;
            rows += 1;
        }
        if rows == 0 {
            if self.position < self.end {
                return Err(truncated(&self.path, self.position, self.end));
            }
            return Ok(None);
        }
        Ok(Some(RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(files.finish()),
                Arc::new(positions.finish()),
                Arc::new(lines.finish()),
            ],
        )?))
    }
}

/// A file that ends before the range that an offset promised: it was truncated or replaced.
fn truncated(path: &Path, at: u64, end: u64) -> Error {
    Error::msg(format!(
        "`{}` ends at byte {at}, before the end of the range the stream planned, byte {end}: \
         the file was truncated or replaced; this source reads append-only files",
        path.display()
    ))
}

impl Iterator for RangeLines {
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

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;

    use super::*;

    fn reader(dir: &Path, max_lines: Option<u64>, delete_consumed: bool) -> Reader {
        Reader {
            path: dir.to_path_buf(),
            max_lines_per_trigger: max_lines,
            delete_consumed,
        }
    }

    fn append(dir: &Path, file: &str, text: &str) -> std::io::Result<()> {
        fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(file))?
            .write_all(text.as_bytes())
    }

    /// The `(file, position, line)` rows of the micro-batch from `start` to `end`.
    fn rows(reader: &Reader, start: &Offset, end: &Offset) -> Result<Vec<(String, i64, String)>> {
        let mut out = Vec::new();
        for partition in reader.partitions(start.clone(), end.clone())? {
            for batch in reader.read(partition, &TaskContext::for_tests(0, 0))? {
                let batch = batch?;
                for i in 0..batch.num_rows() {
                    out.push((
                        batch.column(0).as_string::<i32>().value(i).to_string(),
                        batch.column(1).as_primitive::<Int64Type>().value(i),
                        batch.column(2).as_string::<i32>().value(i).to_string(),
                    ));
                }
            }
        }
        Ok(out)
    }

    fn row(file: &str, position: i64, line: &str) -> (String, i64, String) {
        (file.to_string(), position, line.to_string())
    }

    #[test]
    fn appended_lines_are_read_once_complete_and_a_range_reads_the_same_rows_again() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let mut reader = reader(dir.path(), None, false);
        append(dir.path(), "a.log", "one\ntw").map_err(|e| Error::io("append", e))?;
        let start = reader.initial_offset()?;
        let first = reader.latest_offset(start.clone())?;
        assert_eq!(rows(&reader, &start, &first)?, vec![row("a.log", 0, "one")]);
        // The line being written completes, another file appears.
        append(dir.path(), "a.log", "o\n").map_err(|e| Error::io("append", e))?;
        append(dir.path(), "b.log", "x\r\n").map_err(|e| Error::io("append", e))?;
        let second = reader.latest_offset(first.clone())?;
        let expected = vec![row("a.log", 4, "two"), row("b.log", 0, "x")];
        assert_eq!(rows(&reader, &first, &second)?, expected);
        // A replay of the same range, after more appends, reads the same rows.
        append(dir.path(), "a.log", "three\n").map_err(|e| Error::io("append", e))?;
        assert_eq!(rows(&reader, &first, &second)?, expected);
        // Nothing new: the latest offset is the start.
        let third = reader.latest_offset(second.clone())?;
        assert_eq!(reader.latest_offset(third.clone())?, third);
        Ok(())
    }

    #[test]
    fn a_trigger_reads_at_most_max_lines_per_trigger() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        append(dir.path(), "a.log", "1\n2\n3\n").map_err(|e| Error::io("append", e))?;
        append(dir.path(), "b.log", "4\n").map_err(|e| Error::io("append", e))?;
        let mut reader = reader(dir.path(), Some(2), false);
        let mut start = reader.initial_offset()?;
        let mut sizes = Vec::new();
        for _ in 0..3 {
            let end = reader.latest_offset(start.clone())?;
            sizes.push(rows(&reader, &start, &end)?.len());
            start = end;
        }
        assert_eq!(sizes, vec![2, 2, 0]);
        Ok(())
    }

    #[test]
    fn commit_records_the_offset_and_deletes_consumed_files_when_asked() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        append(dir.path(), "1.log", "a\n").map_err(|e| Error::io("append", e))?;
        append(dir.path(), "2.log", "b\n").map_err(|e| Error::io("append", e))?;
        let mut reader = reader(dir.path(), None, true);
        let end = reader.latest_offset(reader.initial_offset()?)?;
        reader.commit(end.clone())?;
        let recorded =
            fs::read_to_string(dir.path().join(COMMITTED)).map_err(|e| Error::io("read", e))?;
        assert_eq!(
            serde_json::from_str::<Offset>(&recorded).ok(),
            Some(end.clone())
        );
        // 1.log is done; 2.log is the newest file, which may still grow.
        assert!(!dir.path().join("1.log").exists());
        assert!(dir.path().join("2.log").exists());
        // The deleted file leaves the offsets; the stream goes on with the others.
        append(dir.path(), "2.log", "c\n").map_err(|e| Error::io("append", e))?;
        let next = reader.latest_offset(end.clone())?;
        assert_eq!(rows(&reader, &end, &next)?, vec![row("2.log", 2, "c")]);
        Ok(())
    }

    #[test]
    fn a_truncated_file_is_reported_with_its_name() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        append(dir.path(), "a.log", "long line\n").map_err(|e| Error::io("append", e))?;
        let mut reader = reader(dir.path(), None, false);
        let end = reader.latest_offset(Offset::default())?;
        fs::write(dir.path().join("a.log"), "x\n").map_err(|e| Error::io("write", e))?;
        let error = reader.latest_offset(end).unwrap_err().to_string();
        assert!(
            error.contains("a.log` shrank to 2 bytes, but the stream had read 10"),
            "{error}"
        );
        Ok(())
    }
}
