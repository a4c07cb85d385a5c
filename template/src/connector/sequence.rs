//! The sample data: the numbers of a range as rows `(id, label)`, produced lazily in batches
//! of bounded size. Batch reads and micro-batches both read it.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::NullBufferBuilder;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use super::schema;
use spark_datasource::{Batches, Error, Result};

/// The most rows in a batch when the query does not say (option `batch_rows`). With 65536,
/// `cargo sparkds bench` reads `id` about 10x faster than with 1024 and within a few percent of
/// the best size it found, and a batch of this sample stays about 1 MiB.
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

/// The rows of `range`, with the `columns` of `schema`, in batches of at most `batch_rows`.
pub fn batches(range: RowRange, columns: &[String], batch_rows: u64) -> Result<Batches> {
    let output = project(columns)?;
    let step = batch_rows.max(1);
    let starts = (range.start..range.end).step_by(usize::try_from(step).unwrap_or(usize::MAX));
    let batch_schema = output.clone();
    let batches = starts.map(move |start| {
        let end = (start + step).min(range.end);
        batch(&batch_schema, start..end)
    });
    Ok(Batches::new(output, batches))
}

/// One batch of the rows `ids`.
fn batch(schema: &SchemaRef, ids: Range<u64>) -> Result<RecordBatch> {
    let columns = schema
        .fields()
        .iter()
        .map(|field| -> Result<ArrayRef> {
            match field.name().as_str() {
                "id" => Ok(Arc::new(Int64Array::from_iter_values(
                    ids.clone().map(|id| id as i64),
                ))),
                "label" => labels(ids.clone()),
                other => Err(Error::msg(format!("no column `{other}`"))),
            }
        })
        .collect::<Result<Vec<_>>>()?;
    // The row count is given, not taken from the columns: a query that needs no column, such
    // as `count(*)`, prunes to none and still counts the rows.
    let rows = usize::try_from(ids.end - ids.start).unwrap_or(usize::MAX);
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(
        schema.clone(),
        columns,
        &options,
    )?)
}

/// The labels of rows `ids`: `row <id>`, or null in every third row.
///
/// This is the fast way to build a string column, the part of the read that costs the most:
/// the bytes of all the values go into one buffer and their ends into another, both sized up
/// front, and the digits of each id are counted up from those of the previous row instead of
/// formatted anew. A `String` per row (`format!`) would take most of the read's time, and even
/// `write!` into a `StringBuilder` takes about as long as the rest of it. `try_new` checks the
/// offsets and the UTF-8 of the whole buffer once.
fn labels(ids: Range<u64>) -> Result<ArrayRef> {
    let rows = usize::try_from(ids.end - ids.start).map_err(|e| Error::msg(e.to_string()))?;
    let mut values: Vec<u8> = Vec::with_capacity(rows * "row 0000000".len());
    let mut ends: Vec<i32> = Vec::with_capacity(rows + 1);
    let mut nulls = NullBufferBuilder::new(rows);
    let mut digits = Digits::of(ids.start);
    ends.push(0);
    for id in ids {
        if id % 3 == 2 {
            nulls.append_null();
        } else {
            values.extend_from_slice(b"row ");
            values.extend_from_slice(digits.as_bytes());
            nulls.append_non_null();
        }
        let end = i32::try_from(values.len())
            .map_err(|_| Error::msg("a batch of labels exceeds 2 GiB: lower `batch_rows`"))?;
        ends.push(end);
        digits.increment();
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(ends));
    let labels = StringArray::try_new(offsets, Buffer::from_vec(values), nulls.finish())?;
    Ok(Arc::new(labels))
}

/// The decimal digits of a number, in ASCII, that count up in place.
struct Digits(Vec<u8>);

impl Digits {
    fn of(number: u64) -> Digits {
        Digits(number.to_string().into_bytes())
    }

    fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Adds one, as on paper: the last digit goes up, and each 9 becomes 0 and carries.
    fn increment(&mut self) {
        for digit in self.0.iter_mut().rev() {
            if *digit == b'9' {
                *digit = b'0';
            } else {
                *digit += 1;
                return;
            }
        }
        // Every digit was a 9: 999 + 1 = 1000.
        self.0.insert(0, b'1');
    }
}

/// The names of `requested`'s columns, after checking that the data source has each of them
/// with the same type: Spark passes the schema of the query, which may be the user's own.
pub fn columns_of(requested: &Schema) -> Result<Vec<String>> {
    let own = schema();
    requested
        .fields()
        .iter()
        .map(|field| match own.field_with_name(field.name()) {
            Ok(own_field) if own_field.data_type() == field.data_type() => Ok(field.name().clone()),
            Ok(own_field) => Err(Error::msg(format!(
                "column `{}` is {} in this data source, not {}",
                field.name(),
                own_field.data_type(),
                field.data_type()
            ))),
            Err(_) => Err(Error::msg(format!(
                "this data source has no column `{}`; its columns are: {}",
                field.name(),
                own.fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        })
        .collect()
}

/// The schema of the data source's `columns`, in that order.
pub fn project(columns: &[String]) -> Result<SchemaRef> {
    let own = schema();
    let indices = columns
        .iter()
        .map(|name| own.index_of(name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(own.project(&indices)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

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
        let columns = vec!["id".to_string()];
        let sizes: Vec<usize> = batches(RowRange { start: 0, end: 10 }, &columns, 4)?
            .map(|batch| batch.map(|b| b.num_rows()))
            .collect::<Result<_>>()?;
        assert_eq!(sizes, vec![4, 4, 2]);
        Ok(())
    }

    #[test]
    fn labels_count_up_across_carries_with_every_third_row_null() -> Result<()> {
        let text = |ids: Range<u64>| -> Result<Vec<Option<String>>> {
            let array = labels(ids)?;
            let labels = array
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| Error::msg("labels are strings"))?;
            Ok(labels.iter().map(|l| l.map(str::to_string)).collect())
        };
        let row = |id: u64| Some(format!("row {id}"));
        assert_eq!(
            text(7..13)?,
            vec![row(7), None, row(9), row(10), None, row(12)]
        );
        assert_eq!(text(998..1001)?, vec![None, row(999), row(1000)]);
        Ok(())
    }

    #[test]
    fn an_unknown_column_lists_the_columns() {
        let requested = Schema::new(vec![arrow_schema::Field::new(
            "name",
            arrow_schema::DataType::Utf8,
            true,
        )]);
        let error = columns_of(&requested).unwrap_err();
        assert_eq!(
            error.to_string(),
            "this data source has no column `name`; its columns are: id, label"
        );
    }
}
