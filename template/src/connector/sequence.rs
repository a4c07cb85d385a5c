//! The sample data: the numbers of a range as rows `(id, label)`, produced lazily in batches
//! of bounded size. Batch reads and micro-batches both read it.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions};
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

/// The labels of rows `ids`: `row <id>`, or null in every third row. Each value is written
/// straight into the builder's buffer, sized up front: no `String` per row, which would cost
/// more than the rest of the read.
fn labels(ids: Range<u64>) -> Result<ArrayRef> {
    let rows = usize::try_from(ids.end - ids.start).unwrap_or(0);
    let mut labels = StringBuilder::with_capacity(rows, rows * "row 0000000".len());
    for id in ids {
        if id % 3 == 2 {
            labels.append_null();
        } else {
            write!(labels, "row {id}").map_err(|e| Error::msg(e.to_string()))?;
            // Ends the value that `write!` filled.
            labels.append_value("");
        }
    }
    Ok(Arc::new(labels.finish()))
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
