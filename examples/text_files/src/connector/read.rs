//! Batch reads: byte-range splits planned from file sizes, each read line by line into batches
//! of the columns the query needs, filtered by the pushed filters as they are parsed, up to a
//! pushed limit.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde::{Deserialize, Serialize};

use super::format::{self, Format, JsonColumns, OpenQuote, PlainSyntax};
use super::splits::{self, SplitLines};
use super::values::{self, Cell, ColumnBuilder, Value};
use super::{field_count, is_text, malformed, table, Mode, Settings, Source};
use spark_datasource::filters::{decode, encode, evaluate, filter_batch, Filter};
use spark_datasource::{BatchRead, BatchReader, Batches, Error, Result, TaskContext};

/// The rows of a batch: bounded, so that a task's memory does not grow with its split.
const BATCH_ROWS: usize = 4096;

/// The rows of a batch of no column (`count(*)`), which holds nothing but its length: Spark's
/// batches count their rows in an `int`.
const COUNTED_ROWS: usize = 1 << 20;

/// The reader, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    settings: Settings,
    /// The columns of the files, in the order of a CSV line.
    columns: Vec<Column>,
    /// The columns to read, as indices into `columns`, in Spark's order.
    projection: Vec<usize>,
    /// A limit that `push_limit` accepted: each partition reads at most that many rows, of
    /// those that pass `filters`.
    limit: Option<u64>,
    /// The filters that `push_filters` accepted, in the header's encoding: each parsed batch
    /// keeps only the rows where all are TRUE, before the limit. Encoded, because the reader
    /// reaches the executors as JSON, which has no NaN for a literal `Filter`.
    filters: Vec<u8>,
}

/// A column, in a form that serializes (Arrow's `Schema` does not, without arrow-schema's
/// `serde` feature).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Column {
    name: String,
    kind: Kind,
    nullable: bool,
}

/// The types that text is read as (`values::READABLE_TYPES`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Int64,
    Int32,
    Float64,
    Boolean,
    Utf8,
    Date32,
    Decimal(u8, i8),
    Timestamp(Option<String>),
    /// A struct of these columns, from JSON objects.
    Struct(Vec<Column>),
    /// An array of this element, from JSON arrays.
    List(Box<Column>),
}

impl Column {
    fn of(field: &Field) -> Result<Column> {
        let kind = match field.data_type() {
            DataType::Int64 => Kind::Int64,
            DataType::Int32 => Kind::Int32,
            DataType::Float64 => Kind::Float64,
            DataType::Boolean => Kind::Boolean,
            DataType::Utf8 => Kind::Utf8,
            DataType::Date32 => Kind::Date32,
            DataType::Decimal128(p, s) => Kind::Decimal(*p, *s),
            DataType::Struct(fields) => Kind::Struct(
                fields
                    .iter()
                    .map(|f| Column::of(f))
                    .collect::<Result<_>>()?,
            ),
            DataType::List(element) => Kind::List(Box::new(Column::of(element)?)),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => {
                Kind::Timestamp(tz.as_ref().map(|tz| tz.to_string()))
            }
            other => {
                return Err(Error::msg(format!(
                    "column `{}` is {other}, which this data source cannot read from text; use \
                     one of: {}",
                    field.name(),
                    values::READABLE_TYPES
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
            Kind::Date32 => DataType::Date32,
            Kind::Decimal(p, s) => DataType::Decimal128(*p, *s),
            Kind::Struct(columns) => {
                DataType::Struct(columns.iter().map(Column::field).collect::<Vec<_>>().into())
            }
            Kind::List(element) => DataType::List(Arc::new(element.field())),
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
        let settings = self.settings()?;
        if let Some(field) = schema
            .fields()
            .iter()
            .find(|f| *f.name() == settings.corrupt_column)
        {
            if !is_text(field.data_type()) || !field.is_nullable() {
                return Err(Error::msg(format!(
                    "column `{}` holds the text of malformed records (the option \
                     `columnNameOfCorruptRecord`), so it must be a nullable string, not {}",
                    field.name(),
                    field.data_type()
                )));
            }
        }
        Ok(Reader {
            settings,
            projection: (0..columns.len()).collect(),
            columns,
            limit: None,
            filters: encode(&[])?,
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

    /// The columns a task parses, as indices into `columns`: the projected ones, then those
    /// that only accepted filters read (Spark may prune them, but the rows are filtered by
    /// them all the same).
    fn parsed(&self, filters: &[Filter]) -> Vec<usize> {
        let mut parsed = self.projection.clone();
        for column in filters.iter().flat_map(Filter::columns) {
            let index = self.columns.iter().position(|c| column.is(&c.name));
            if let Some(index) = index.filter(|i| !parsed.contains(i)) {
                parsed.push(index);
            }
        }
        parsed
    }

    /// Whether every row can be checked against `filter` once parsed: it reads only top-level
    /// columns of the read's schema, each named once, that hold parsed values (not structs or
    /// arrays, not the text of malformed records), and it evaluates on batches of them (its
    /// operators and literals are known, and each literal fits its column's type). Anything
    /// else is left to Spark.
    fn can_filter(&self, filter: &Filter) -> bool {
        let mut fields: Vec<Field> = Vec::new();
        for column in filter.columns() {
            let mut named = self.columns.iter().filter(|c| column.is(&c.name));
            let (Some(found), None) = (named.next(), named.next()) else {
                return false;
            };
            let scalar = !matches!(found.kind, Kind::Struct(_) | Kind::List(_));
            if !scalar || found.name == self.settings.corrupt_column {
                return false;
            }
            if !fields.iter().any(|f| *f.name() == found.name) {
                fields.push(found.field());
            }
        }
        evaluate(
            filter,
            &RecordBatch::new_empty(Arc::new(Schema::new(fields))),
        )
        .is_ok()
    }
}

impl BatchReader for Reader {
    type Partition = Vec<splits::Split>;

    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        let accepted: Vec<bool> = filters.iter().map(|f| self.can_filter(f)).collect();
        let kept: Vec<Filter> = filters
            .iter()
            .zip(&accepted)
            .filter(|(_, &accepted)| accepted)
            .map(|(filter, _)| filter.clone())
            .collect();
        self.filters = encode(&kept)?;
        Ok(accepted)
    }

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
        let files = table::visible(self.settings.root(), self.settings.format.extension())?;
        if self.settings.multi_line {
            // A record may span lines, so a split cannot start in the middle of a file: one
            // task reads each file whole, as Spark does with multiLine.
            return Ok(files
                .into_iter()
                .filter(|f| f.size > 0)
                .map(|f| {
                    vec![splits::Split {
                        file: f.name,
                        start: 0,
                        end: f.size,
                    }]
                })
                .collect());
        }
        Ok(splits::plan(&files, self.settings.split_bytes))
    }

    fn read(&self, partition: Vec<splits::Split>, _task: &TaskContext) -> Result<Batches> {
        let output = self.output();
        // The projected columns with their nullability from Spark, then those of filters.
        let filters = decode(&self.filters)?;
        let parsed = self.parsed(&filters);
        let mut fields: Vec<Field> = output.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.extend(
            parsed[self.projection.len()..]
                .iter()
                .map(|&i| self.columns[i].field()),
        );
        let parsed_schema = Arc::new(Schema::new(fields));
        let builders = parsed_schema
            .fields()
            .iter()
            .map(|field| {
                ColumnBuilder::with_capacity(field.clone(), BATCH_ROWS).map_err(Error::msg)
            })
            .collect::<Result<Vec<_>>>()?;
        let corrupt = self
            .columns
            .iter()
            .position(|c| c.name == self.settings.corrupt_column && c.kind == Kind::Utf8);
        // The columns that records hold: all but the one of malformed records.
        let data: Vec<usize> = (0..self.columns.len())
            .filter(|&i| Some(i) != corrupt)
            .collect();
        let names: Vec<String> = data.iter().map(|&i| self.columns[i].name.clone()).collect();
        let rows = PartitionRows {
            root: self.settings.root().to_path_buf(),
            settings: self.settings.clone(),
            json_columns: JsonColumns::new(&names),
            names,
            // Where each output column comes from: a cell of the record, or its text.
            sources: parsed
                .iter()
                .map(|&i| match data.iter().position(|&d| d == i) {
                    Some(cell) => Origin::Cell(cell),
                    None => Origin::Record,
                })
                .collect(),
            output: output.clone(),
            parsed: parsed_schema,
            filters,
            builders,
            splits: partition.into(),
            current: None,
            remaining: self.limit,
            failed: false,
            record: String::new(),
            plain: match &self.settings.format {
                Format::Csv(syntax) => PlainSyntax::of(syntax),
                Format::JsonLines => None,
            },
            ends: Vec::new(),
        };
        Ok(Batches::new(output, rows))
    }
}

/// Where an output column's values come from.
#[derive(Clone, Copy)]
enum Origin {
    /// The cell at this index of the record.
    Cell(usize),
    /// The text of a malformed record, else null (`columnNameOfCorruptRecord`).
    Record,
}

/// The rows of a partition's splits, read lazily, a batch at a time.
struct PartitionRows {
    root: PathBuf,
    settings: Settings,
    /// The names of the columns that records hold, in the order of a CSV record.
    names: Vec<String>,
    /// Where each parsed column comes from.
    sources: Vec<Origin>,
    /// The columns returned: the first of `parsed`.
    output: SchemaRef,
    /// The columns parsed: those returned, then those that only `filters` read.
    parsed: SchemaRef,
    /// The accepted filters, applied to each parsed batch.
    filters: Vec<Filter>,
    builders: Vec<ColumnBuilder>,
    splits: VecDeque<splits::Split>,
    /// The split being read: its file's path, whether it starts the file, and its lines.
    current: Option<(PathBuf, bool, SplitLines<File>)>,
    /// The rows left to return under a pushed limit.
    remaining: Option<u64>,
    failed: bool,
    /// The text of the record being parsed, reused from record to record.
    record: String,
    /// Where the keys of JSON lines go among the columns of a record.
    json_columns: JsonColumns,
    /// The CSV syntax, when its lines without a quote split at every delimiter.
    plain: Option<PlainSyntax>,
    /// Where each cell of such a line ends, reused from line to line.
    ends: Vec<usize>,
}

/// What became of a record.
enum Outcome {
    Row,
    /// Left out (DROPMALFORMED).
    Dropped,
}

impl PartitionRows {
    /// Reads the next line of the partition into `record` (appended), and returns where it
    /// begins in its file, or `None` at the end.
    fn next_line(&mut self, record: &mut String) -> Result<Option<u64>> {
        loop {
            if self.current.is_none() && !self.open_split()? {
                return Ok(None);
            }
            let Some((path, first, lines)) = &mut self.current else {
                continue;
            };
            let start = record.len();
            match lines
                .next_line_into(record)
                .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?
            {
                Some(position) => {
                    // A byte order mark is not text.
                    if position == 0 && record[start..].starts_with('\u{feff}') {
                        record.replace_range(start..start + '\u{feff}'.len_utf8(), "");
                    }
                    // Blank lines, comments, and the first record of a file with a header,
                    // which names the columns.
                    if self.settings.format.skips(&record[start..])
                        || (std::mem::replace(first, false) && self.settings.format.has_header())
                    {
                        record.truncate(start);
                        continue;
                    }
                    return Ok(Some(position));
                }
                None => self.current = None,
            }
        }
    }

    /// Opens the next split as `current`; `false` when there is none left.
    fn open_split(&mut self) -> Result<bool> {
        let Some(split) = self.splits.pop_front() else {
            return Ok(false);
        };
        let path = self.root.join(&split.file);
        let file = File::open(&path)
            .map_err(|e| Error::io(format!("cannot open `{}`", path.display()), e))?;
        let lines = SplitLines::new(file, &split)
            .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?;
        self.current = Some((path, split.start == 0, lines));
        Ok(true)
    }

    /// Counts up to `most` records, for a read of no column in PERMISSIVE mode, where every
    /// record is a row whatever it holds (`count(*)`): the lines that `next_line` returns, found
    /// and checked as it does (UTF-8, a byte order mark, blank lines, comments, headers), but
    /// neither copied nor parsed.
    fn count_records(&mut self, most: usize) -> Result<usize> {
        let mut rows = 0;
        while rows < most {
            if self.current.is_none() && !self.open_split()? {
                break;
            }
            let Some((path, first, lines)) = &mut self.current else {
                continue;
            };
            let cannot_read = |e| Error::io(format!("cannot read `{}`", path.display()), e);
            let Some((position, mut line)) = lines.next_line_utf8().map_err(cannot_read)? else {
                self.current = None;
                continue;
            };
            if position == 0 {
                line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
            }
            if self.settings.format.skips_utf8(line)
                || (std::mem::replace(first, false) && self.settings.format.has_header())
            {
                continue;
            }
            rows += 1;
        }
        Ok(rows)
    }

    /// Reads the next record into `record` (cleared first), and returns where it begins: a
    /// line, or with `multiLine` the lines of a CSV record whose quoted value spans them.
    fn next_record(&mut self, record: &mut String) -> Result<Option<u64>> {
        record.clear();
        let Some(position) = self.next_line(record)? else {
            return Ok(None);
        };
        let Format::Csv(syntax) = &self.settings.format else {
            return Ok(Some(position));
        };
        if !self.settings.multi_line {
            return Ok(Some(position));
        }
        while format::split_csv(record, syntax, &self.settings.values).is_err() {
            let Some((path, _, lines)) = &mut self.current else {
                break;
            };
            let before = record.len();
            record.push('\n');
            let next = lines
                .next_line_into(record)
                .map_err(|e| Error::io(format!("cannot read `{}`", path.display()), e))?;
            if next.is_none() {
                record.truncate(before);
                break;
            }
        }
        Ok(Some(position))
    }

    /// Parses `text` into the builders as the mode says, or says why it cannot be read.
    fn append(&mut self, text: &str) -> std::result::Result<Outcome, String> {
        // With no column to parse (`count(*)`), every record is a row unless a mode other
        // than PERMISSIVE must look for malformed ones.
        if self.sources.is_empty() && self.settings.mode == Mode::Permissive {
            return Ok(Outcome::Row);
        }
        let names = &self.names;
        // A flat JSON object (nearly every JSON line) goes from the line into the builders.
        if self.settings.format == Format::JsonLines && self.settings.mode != Mode::DropMalformed {
            if let Some(values) = self.json_columns.flat_values(text, names.len()) {
                let cell = |index: usize| match &values[index] {
                    Some(value) => value.cell(text),
                    None => Cell::Null,
                };
                return append_cells(
                    &mut self.builders,
                    &self.sources,
                    &self.settings,
                    text,
                    None,
                    cell,
                );
            }
        }
        // A CSV line without a quote and with every column (nearly every line): its cells are
        // found in one pass and only those of the parsed columns are looked at. DROPMALFORMED
        // converts a whole record before it appends it (`append_whole`).
        if let (Some(plain), false) = (&self.plain, self.settings.mode == Mode::DropMalformed) {
            if plain.cell_ends(text, &mut self.ends) && self.ends.len() == names.len() {
                let (ends, values) = (&self.ends, &self.settings.values);
                let cell = |index: usize| {
                    let start = index.checked_sub(1).map_or(0, |before| ends[before] + 1);
                    format::plain_cell(&text[start..ends[index]], values)
                };
                return append_cells(
                    &mut self.builders,
                    &self.sources,
                    &self.settings,
                    text,
                    None,
                    cell,
                );
            }
        }
        let (mut cells, malformed) = match &self.settings.format {
            Format::Csv(syntax) => {
                let mut cells = format::split_csv(text, syntax, &self.settings.values)
                    .unwrap_or_else(|OpenQuote(cells)| cells);
                let reason = (cells.len() != names.len()).then(|| {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    field_count(cells.len(), &names)
                });
                // Spark reads what it can of a record of the wrong length.
                cells.resize(names.len(), Cell::Null);
                (cells, reason)
            }
            Format::JsonLines => match self.json_columns.cells(text, names.len()) {
                Ok(cells) => (cells, None),
                Err(reason) => (vec![Cell::Null; names.len()], Some(reason)),
            },
        };
        if self.settings.mode == Mode::DropMalformed {
            return self.append_whole(cells, malformed);
        }
        if let (Some(reason), Mode::FailFast) = (&malformed, self.settings.mode) {
            return Err(reason.clone());
        }
        let cell = |index: usize| std::mem::replace(&mut cells[index], Cell::Null);
        append_cells(
            &mut self.builders,
            &self.sources,
            &self.settings,
            text,
            malformed,
            cell,
        )
    }

    /// DROPMALFORMED: converts the whole record before it appends any value, since a value
    /// that does not convert leaves the record out.
    fn append_whole(
        &mut self,
        mut cells: Vec<Cell<'_>>,
        malformed: Option<String>,
    ) -> std::result::Result<Outcome, String> {
        if malformed.is_some() {
            return Ok(Outcome::Dropped);
        }
        let mut values = Vec::with_capacity(self.sources.len());
        for (builder, source) in self.builders.iter().zip(&self.sources) {
            let value = match *source {
                Origin::Cell(index) => {
                    let cell = std::mem::replace(&mut cells[index], Cell::Null);
                    match builder.convert(cell, &self.settings.values) {
                        Ok(value) => value,
                        Err(_) => return Ok(Outcome::Dropped),
                    }
                }
                Origin::Record => Value::Null,
            };
            values.push(value);
        }
        for (builder, value) in self.builders.iter_mut().zip(values) {
            builder.push(value);
        }
        Ok(Outcome::Row)
    }

    /// The next batch of rows to return: parsed batches, filtered, until one keeps a row.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        while self.remaining != Some(0) {
            let Some(parsed) = self.parse_batch()? else {
                return Ok(None);
            };
            let kept = filter_batch(&self.filters, &parsed)?;
            let returned: Vec<usize> = (0..self.output.fields().len()).collect();
            let mut batch = kept.project(&returned)?;
            if let Some(remaining) = &mut self.remaining {
                let rows = batch
                    .num_rows()
                    .min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                batch = batch.slice(0, rows);
                *remaining -= rows as u64;
            }
            if batch.num_rows() > 0 {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }

    /// The next batch of parsed records, with the columns of `parsed`: at most `BATCH_ROWS`,
    /// and, without filters, at most the rows left under the limit.
    fn parse_batch(&mut self) -> Result<Option<RecordBatch>> {
        // A batch of no column holds only its length, so it may hold many rows: each batch
        // costs a crossing of the interface and Spark's handling of it.
        let counting = self.sources.is_empty()
            && self.settings.mode == Mode::Permissive
            && !self.settings.multi_line;
        let mut most = if counting { COUNTED_ROWS } else { BATCH_ROWS };
        if let (Some(remaining), true) = (self.remaining, self.filters.is_empty()) {
            most = most.min(usize::try_from(remaining).unwrap_or(usize::MAX));
        }
        if counting && self.filters.is_empty() {
            let rows = self.count_records(most)?;
            let options = RecordBatchOptions::new().with_row_count(Some(rows));
            return Ok((rows > 0)
                .then(|| RecordBatch::try_new_with_options(self.parsed.clone(), vec![], &options))
                .transpose()?);
        }
        let mut rows = 0;
        // One buffer for the records of the task, taken while `append` borrows `self`.
        let mut record = std::mem::take(&mut self.record);
        while rows < most {
            let Some(position) = self.next_record(&mut record)? else {
                break;
            };
            match self.append(&record) {
                Ok(Outcome::Row) => {}
                Ok(Outcome::Dropped) => continue,
                Err(reason) => {
                    let path = match &self.current {
                        Some((path, _, _)) => path.clone(),
                        None => self.root.clone(),
                    };
                    return Err(at_line(&path, position, &reason));
                }
            }
            rows += 1;
        }
        self.record = record;
        if rows == 0 {
            return Ok(None);
        }
        let columns = self
            .builders
            .iter_mut()
            .map(|b| b.finish().map_err(Error::msg))
            .collect::<Result<Vec<_>>>()?;
        // With the row count: a count(*) prunes every column away, and a batch of no columns
        // knows its length only so.
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(Some(RecordBatch::try_new_with_options(
            self.parsed.clone(),
            columns,
            &options,
        )?))
    }
}

/// PERMISSIVE and FAILFAST: appends the record `text`, the cell of each column from `cell`
/// (by its index among the record's columns), whatever its values: each value goes straight
/// into its builder, with no row of values in between. `malformed` says why the record is
/// malformed, if it is already known to be.
fn append_cells<'a>(
    builders: &mut [ColumnBuilder],
    sources: &[Origin],
    settings: &Settings,
    text: &str,
    mut malformed: Option<String>,
    mut cell: impl FnMut(usize) -> Cell<'a>,
) -> std::result::Result<Outcome, String> {
    let options = &settings.values;
    for (builder, source) in builders.iter_mut().zip(sources) {
        let Origin::Cell(index) = *source else {
            continue;
        };
        let cell = cell(index);
        if builder.append_fast(&cell, options) {
            continue;
        }
        match builder.convert(cell, options) {
            Ok(value) => builder.push(value),
            Err(reason) if settings.mode == Mode::FailFast => return Err(reason),
            Err(reason) => {
                // A null where the schema allows none cannot be read at all.
                builder.convert(Cell::Null, options)?;
                builder.push(Value::Null);
                malformed.get_or_insert(reason);
            }
        }
    }
    for (builder, source) in builders.iter_mut().zip(sources) {
        if let Origin::Record = source {
            builder.push(match malformed {
                Some(_) => Value::Utf8(text.into()),
                None => Value::Null,
            });
        }
    }
    Ok(Outcome::Row)
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
