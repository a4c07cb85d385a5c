//! The sample data: the numbers of a range as rows `(id, label)`, produced lazily in batches
//! of bounded size. Batch reads and micro-batches both read it.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::NullBufferBuilder;
use arrow_array::{
    ArrayRef, BooleanArray, Int64Array, RecordBatch, RecordBatchOptions, StringArray,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use super::schema;
use spark_datasource::{Batches, Error, Result};

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
/// The rows of `range`, with the `columns` of `schema`, in batches of at most `batch_rows`;
/// labels start with `prefix`.
pub fn batches(
    range: RowRange,
    columns: &[Column],
    batch_rows: u64,
    prefix: &str,
) -> Result<Batches> {
    let output = project(columns)?;
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

/// A column that a query reads, nullable as the query declares it: Spark's DDL makes columns
/// nullable unless `NOT NULL`, and a column without nulls may be read as nullable.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub nullable: bool,
}

/// `requested`'s columns, after checking that the data source has each of them with the same
/// type, and no nulls where `requested` has none: Spark passes the query's schema, maybe the
/// user's own.
pub fn columns_of(requested: &Schema) -> Result<Vec<Column>> {
    let own = schema();
    let mut columns = Vec::with_capacity(requested.fields().len());
    for field in requested.fields() {
        let (name, nullable) = (field.name(), field.is_nullable());
        let Ok(own_field) = own.field_with_name(name) else {
            let names: Vec<&str> = own.fields().iter().map(|f| f.name().as_str()).collect();
            let names = names.join(", ");
            let text = format!("this data source has no column `{name}`; its columns are: {names}");
            return Err(Error::msg(text));
        };
        let (own_type, asked) = (own_field.data_type(), field.data_type());
        if own_type != asked {
            let text = format!("column `{name}` is {own_type} in this data source, not {asked}");
            return Err(Error::msg(text));
        }
        if own_field.is_nullable() && !nullable {
            return Err(Error::msg(format!(
                "column `{name}` has nulls in this data source: declare it without NOT NULL, \
                 or leave it out"
            )));
        }
        columns.push(Column {
            name: name.clone(),
            nullable,
        });
    }
    Ok(columns)
}

/// The schema of `columns`, in that order.
pub fn project(columns: &[Column]) -> Result<SchemaRef> {
    let own = schema();
    let mut fields = Vec::with_capacity(columns.len());
    for column in columns {
        let field = own.field_with_name(&column.name)?;
        fields.push(field.clone().with_nullable(column.nullable));
    }
    Ok(Arc::new(Schema::new(fields)))
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
        let columns = columns_of(&schema().project(&[0])?)?;
        let sizes: Vec<usize> = batches(RowRange { start: 0, end: 10 }, &columns, 4, "row")?
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
    fn an_unknown_column_lists_the_columns() {
        let requested = Schema::new(vec![arrow_schema::Field::new(
            "name",
            arrow_schema::DataType::Utf8,
            true,
        )]);
        let error = columns_of(&requested).unwrap_err();
        assert_eq!(
            error.to_string(),
            "this data source has no column `name`; its columns are: id, label, even"
        );
    }
}
