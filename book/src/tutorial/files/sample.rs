//! The sample data, and only it: the one module to replace with your own source (the book's
//! "Edit the connector"). Everything else in `src/connector/` (the options, the reader, the
//! writer) asks this module for the schema and the rows, and keeps to any schema; the tests of
//! `tests/library/main.rs` run the conformance kit on whatever this module gives.
//!
//! The sample reads the numbers of a range as rows `(id, label)`, `label` null in every third
//! row so that nulls are exercised, produced lazily in batches of bounded size, and keeps
//! written rows as JSON lines, one object per row. Its dependencies are `arrow-buffer` and
//! `serde_json` (Cargo.toml says so): they go with it.

use std::io::{BufRead, Write};
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, NullBufferBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{
    ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions, StringArray,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use spark_datasource::{Batches, Error, Options, Result};

/// The column that pushed filters narrow: comparisons and `IN` of it with integers become the
/// ranges of ids that the reader plans and reads.
pub const KEY: &str = "id";

// ANCHOR: schema
/// The columns of the sample. A source whose schema comes from its options (a table's name, a
/// file's header) reads it here from `options`.
pub fn schema(_options: &Options) -> Result<SchemaRef> {
    Ok(Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("label", DataType::Utf8, true),
        // The tutorial's new column: computed only when a query selects it (prune_columns).
        Field::new("even", DataType::Boolean, false),
    ])))
}
// ANCHOR_END: schema

/// The most rows in a batch when the query does not say (option `batch_rows`): `id` reads 10x
/// faster than with 1024, within a few percent of the best size, in batches of about 1 MiB.
pub const BATCH_ROWS: u64 = 65536;

/// The rows `[start, end)`: what one task reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowRange {
    pub start: u64,
    pub end: u64,
}

/// Splits `rows` into at most `parts` ranges of about the same size, none empty.
pub fn split(rows: Range<u64>, parts: u64) -> Vec<RowRange> {
    let total = rows.end.saturating_sub(rows.start);
    let parts = parts.clamp(1, total.max(1));
    (0..parts)
        .map(|i| RowRange {
            start: rows.start + total * i / parts,
            end: rows.start + total * (i + 1) / parts,
        })
        .filter(|range| range.start < range.end)
        .collect()
}

// ANCHOR: batches
/// The rows of `range`, with the columns of `schema` (the source's, or those Spark reads of
/// it), in batches of at most `batch_rows`; labels start with `prefix`.
pub fn batches(
    range: RowRange,
    schema: &SchemaRef,
    batch_rows: u64,
    prefix: &str,
) -> Result<Batches> {
    let output = schema.clone();
    let step = batch_rows.max(1);
    let starts = (range.start..range.end).step_by(usize::try_from(step).unwrap_or(usize::MAX));
    let batch_schema = output.clone();
    let prefix = prefix.to_string();
    let batches = starts.map(move |start| {
        let end = (start + step).min(range.end);
        batch(&batch_schema, start..end, &prefix)
    });
    Ok(Batches::new(output, batches))
}

/// One batch of the rows `ids`. Only the columns of `schema` are computed: the others were
/// pruned.
fn batch(schema: &SchemaRef, ids: Range<u64>, prefix: &str) -> Result<RecordBatch> {
    let columns = schema
        .fields()
        .iter()
        .map(|field| -> Result<ArrayRef> {
            match field.name().as_str() {
                "id" => Ok(Arc::new(Int64Array::from_iter_values(
                    ids.clone().map(|id| id as i64),
                ))),
                "label" => labels(ids.clone(), prefix),
                "even" => Ok(Arc::new(BooleanArray::from(
                    ids.clone().map(|id| id % 2 == 0).collect::<Vec<bool>>(),
                ))),
                other => Err(Error::msg(format!("no column `{other}`"))),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    // The row count is given, not taken from the columns: a query that needs no column, such
    // as `count(*)`, prunes to none and still counts the rows.
    let options =
        RecordBatchOptions::new().with_row_count(usize::try_from(ids.end - ids.start).ok());
    let batch = RecordBatch::try_new_with_options(schema.clone(), columns, &options)?;
    Ok(batch)
}

/// The labels of `ids`: `prefix` and the id, or null every third row. All the bytes go into one
/// buffer and their ends into another, and each label is the previous one counted up in place:
/// `format!` per row would take most of the read, a `StringBuilder` a third to half more.
fn labels(ids: Range<u64>, prefix: &str) -> Result<ArrayRef> {
    let rows = usize::try_from(ids.end - ids.start).unwrap_or(0);
    let mut values: Vec<u8> = Vec::with_capacity(rows * (prefix.len() + 8));
    let mut ends: Vec<i32> = Vec::with_capacity(rows + 1);
    let mut nulls = NullBufferBuilder::new(rows);
    let mut label = format!("{prefix} {}", ids.start).into_bytes();
    ends.push(0);
    for id in ids {
        if id % 3 == 2 {
            nulls.append_null();
        } else {
            values.extend_from_slice(&label);
            nulls.append_non_null();
        }
        let end = i32::try_from(values.len())
            .map_err(|_| Error::msg("the labels of a batch exceed 2 GiB: lower `batch_rows`"))?;
        ends.push(end);
        count_up(&mut label, prefix.len() + 1);
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(ends));
    let labels = StringArray::try_new(offsets, Buffer::from_vec(values), nulls.finish())?;
    Ok(Arc::new(labels))
}

// ANCHOR_END: batches

/// Adds one to the number written in `text` from byte `start`, as on paper.
fn count_up(text: &mut Vec<u8>, start: usize) {
    for digit in text[start..].iter_mut().rev() {
        if *digit < b'9' {
            *digit += 1;
            return;
        }
        *digit = b'0';
    }
    text.insert(start, b'1');
}

/// A row of a JSON-lines file, `{"id":1,"label":"row 1"}` (no `label` when null).
#[derive(Debug, Serialize, Deserialize)]
struct Row {
    id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    label: Option<String>,
}

/// Writes the rows of `batch`, whose schema the writer checked against [`schema`], as JSON
/// lines to `out`.
pub fn write_lines(batch: &RecordBatch, out: &mut impl Write) -> Result<()> {
    let column = |name: &str| {
        let found = batch.column_by_name(name);
        found.ok_or_else(|| Error::msg(format!("the rows to write have no column `{name}`")))
    };
    let ids = column("id")?.as_primitive::<Int64Type>();
    let labels = column("label")?.as_string::<i32>();
    for (id, label) in ids.iter().zip(labels.iter()) {
        let id = id.ok_or_else(|| Error::msg("column `id` holds a null: it cannot"))?;
        let row = Row {
            id,
            label: label.map(str::to_string),
        };
        let line = serde_json::to_string(&row).map_err(|e| Error::msg(e.to_string()))?;
        writeln!(out, "{line}").map_err(|e| Error::io("cannot write a row", e))?;
    }
    Ok(())
}

/// The rows of JSON-lines `files` (each named for errors) whose id `keep` keeps, with the
/// columns of `schema`, read lazily in batches of at most `batch_rows`.
pub fn read_lines<R: BufRead + Send + 'static>(
    files: Vec<(String, R)>,
    schema: &SchemaRef,
    batch_rows: usize,
    keep: impl Fn(i64) -> bool + Send + 'static,
) -> Batches {
    let rows = files.into_iter().flat_map(|(name, file)| {
        file.lines().map(move |line| {
            let line = line.map_err(|e| Error::io(format!("cannot read `{name}`"), e))?;
            serde_json::from_str::<Row>(&line)
                .map_err(|e| Error::msg(format!("`{name}` has a line that is not a row: {e}")))
        })
    });
    // An error is kept, to fail the read.
    let mut rows = rows.filter(move |row| !matches!(row, Ok(row) if !keep(row.id)));
    let output = schema.clone();
    let batches =
        std::iter::from_fn(move || next_batch(&mut rows, &output, batch_rows).transpose());
    Batches::new(schema.clone(), batches)
}

/// The next batch of at most `batch_rows` of `rows`, with the columns of `schema`.
fn next_batch(
    rows: &mut impl Iterator<Item = Result<Row>>,
    schema: &SchemaRef,
    batch_rows: usize,
) -> Result<Option<RecordBatch>> {
    let (mut ids, mut labels) = (Int64Builder::new(), StringBuilder::new());
    let mut even = Vec::new();
    for row in rows.take(batch_rows) {
        let row = row?;
        even.push(row.id % 2 == 0);
        ids.append_value(row.id);
        labels.append_option(row.label);
    }
    let (ids, labels): (ArrayRef, ArrayRef) = (Arc::new(ids.finish()), Arc::new(labels.finish()));
    let evens: ArrayRef = Arc::new(BooleanArray::from(even));
    let columns = schema
        .fields()
        .iter()
        .map(|field| match field.name().as_str() {
            "id" => Arc::clone(&ids),
            "even" => Arc::clone(&evens),
            _ => Arc::clone(&labels),
        });
    // The row count is given: a read of no column (`count(*)`) still counts the rows.
    let options = RecordBatchOptions::new().with_row_count(Some(ids.len()));
    let batch = RecordBatch::try_new_with_options(schema.clone(), columns.collect(), &options)?;
    Ok((batch.num_rows() > 0).then_some(batch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_splits_into_even_non_empty_parts() {
        let parts = split(0..10, 3);
        let bounds: Vec<(u64, u64)> = parts.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(bounds, vec![(0, 3), (3, 6), (6, 10)]);
        assert_eq!(split(0..2, 8).len(), 2);
        assert!(split(5..5, 2).is_empty());
    }

    #[test]
    fn batches_are_bounded_and_cover_the_range() -> Result<()> {
        let ids = Arc::new(schema(&Options::default())?.project(&[0])?);
        let sizes: Vec<usize> = batches(RowRange { start: 0, end: 10 }, &ids, 4, "row")?
            .map(|batch| batch.map(|b| b.num_rows()))
            .collect::<Result<_>>()?;
        assert_eq!(sizes, vec![4, 4, 2]);
        let mut label = b"row 98".to_vec();
        count_up(&mut label, 4);
        count_up(&mut label, 4);
        assert_eq!(label, b"row 100");
        Ok(())
    }

    #[test]
    fn written_lines_read_back_as_the_same_rows() -> Result<()> {
        let schema = schema(&Options::default())?;
        let written = batches(RowRange { start: 4, end: 9 }, &schema, 10, "row")?;
        let mut lines = Vec::new();
        for batch in written {
            write_lines(&batch?, &mut lines)?;
        }
        let file = std::io::Cursor::new(lines);
        let read = read_lines(vec![("a".into(), file)], &schema, 2, |id| id != 5);
        let rows: Vec<usize> = read
            .map(|b| b.map(|b| b.num_rows()))
            .collect::<Result<_>>()?;
        assert_eq!(rows, vec![2, 2]);
        Ok(())
    }
}
