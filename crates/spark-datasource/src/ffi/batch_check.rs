//! The batches that a read exports, checked and, where they can be, mended before they leave:
//! Spark reads them without copying and without validating them (the specification's Memory
//! section).
//! - Arrays have offset 0 at every level, and string and binary offsets start at 0: a sliced
//!   array is copied (Arrow Java ignores offsets and would read the wrong rows).
//! - The top level is a struct with no nulls (Arrow Java ignores its validity).
//! - A column declared not null holds no null: that is the data source's bug, reported.
//! - The batch has the schema the stream declared.

use arrow_array::{Array, RecordBatch};
use arrow_data::transform::MutableArrayData;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, Schema};

use crate::datasource::{Error, Result};

/// Checks `batch`, the `index`-th batch of a stream of `schema`, and returns the array to
/// export: a struct with offset 0 at every level.
///
/// # Errors
/// A batch whose schema differs from the stream's, or a non-nullable column holding nulls.
pub fn prepare_export(schema: &Schema, index: usize, batch: RecordBatch) -> Result<ArrayData> {
    if batch.schema().fields() != schema.fields() {
        return Err(Error::msg(format!(
            "batch {index} has the schema {}, but the stream declared {}: build batches with the \
             schema that `read` returns",
            describe(&batch.schema()),
            describe(schema)
        )));
    }
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        check_nullability(index, field.name(), field, column.to_data())?;
    }
    // The struct is built from the columns' data, not through `ArrayRef`s: `make_array`, which
    // a copied column would need, brings every array type of arrow-array into the library.
    let columns = batch
        .columns()
        .iter()
        .map(|column| {
            let data = column.to_data();
            if needs_copy(&data) {
                compact(&data)
            } else {
                Ok(data)
            }
        })
        .collect::<Result<Vec<ArrayData>>>()?;
    // The row count is carried over: a batch pruned to no column (`count(*)`) has only that.
    let builder = ArrayData::builder(DataType::Struct(batch.schema().fields().clone()))
        .len(batch.num_rows())
        .child_data(columns);
    // SAFETY: the children are the batch's columns, or copies of the same type and length, and
    // a record batch's columns have its row count and its fields' types; the struct has no
    // nulls and no buffers.
    let data = unsafe { builder.build_unchecked() };
    if cfg!(debug_assertions) {
        // Importers do not validate: in debug builds, prove the buffers hold what the arrays
        // say before Spark reads them.
        data.validate_full()?;
    }
    Ok(data)
}

fn describe(schema: &Schema) -> String {
    let fields: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| {
            let null = if f.is_nullable() { "" } else { " not null" };
            format!("{}: {}{null}", f.name(), f.data_type())
        })
        .collect();
    format!("({})", fields.join(", "))
}

fn check_nullability(index: usize, path: &str, field: &Field, data: ArrayData) -> Result<()> {
    if !field.is_nullable() && data.null_count() > 0 {
        return Err(Error::msg(format!(
            "column `{path}` is declared not null, but batch {index} has {} null(s) in it: \
             declare the field nullable or give it values",
            data.null_count()
        )));
    }
    if let DataType::Struct(children) = field.data_type() {
        for (child, child_data) in children.iter().zip(data.child_data()) {
            let path = format!("{path}.{}", child.name());
            check_nullability(index, &path, child, child_data.clone())?;
        }
    }
    Ok(())
}

/// Whether `data` has a non-zero offset at any level, or string or binary offsets that do not
/// start at 0.
fn needs_copy(data: &ArrayData) -> bool {
    let offsets_start_at_zero = match data.data_type() {
        DataType::Utf8 | DataType::Binary | DataType::List(_) | DataType::Map(_, _) => data
            .buffers()
            .first()
            .map(|offsets| offsets.typed_data::<i32>().first().copied().unwrap_or(0) == 0)
            .unwrap_or(true),
        _ => true,
    };
    data.offset() != 0 || !offsets_start_at_zero || data.child_data().iter().any(needs_copy)
}

/// A copy of `data` into fresh buffers: offset 0 at every level, offsets rebased to 0.
/// (`concat` of a single sliced string array keeps its offsets, so it is not enough.)
fn compact(data: &ArrayData) -> Result<ArrayData> {
    let mut copy = MutableArrayData::new(vec![data], false, data.len());
    copy.try_extend(0, 0, data.len())?;
    Ok(copy.freeze())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatchOptions, StringArray, StructArray};
    use arrow_schema::SchemaRef;

    use super::*;

    fn schema(nullable_label: bool) -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("label", DataType::Utf8, nullable_label),
        ]))
    }

    fn batch(schema: SchemaRef) -> RecordBatch {
        let ids = Int64Array::from_iter_values(0..6);
        let labels = StringArray::from(vec![
            Some("a"),
            None,
            Some("ccc"),
            Some("d"),
            None,
            Some("f"),
        ]);
        RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(labels)]).expect("valid batch")
    }

    fn assert_offsets_are_zero(data: &ArrayData) {
        assert_eq!(data.offset(), 0);
        assert!(!needs_copy(data), "{data:?}");
    }

    #[test]
    fn a_sliced_batch_is_copied_to_offset_zero_with_its_values() {
        let schema = schema(true);
        let sliced = batch(schema.clone()).slice(2, 3);
        let data = prepare_export(&schema, 0, sliced).expect("exportable");
        for child in data.child_data() {
            assert_offsets_are_zero(child);
        }
        let exported = RecordBatch::from(StructArray::from(data));
        assert_eq!(exported, batch(schema).slice(2, 3));
    }

    #[test]
    fn a_batch_of_another_schema_than_the_stream_is_reported() {
        let error = prepare_export(&schema(false), 4, batch(schema(true))).unwrap_err();
        assert_eq!(
            error.to_string(),
            "batch 4 has the schema (id: Int64 not null, label: Utf8), but the stream declared \
             (id: Int64 not null, label: Utf8 not null): build batches with the schema that \
             `read` returns"
        );
    }

    #[test]
    fn the_top_level_struct_has_no_nulls() {
        let data = prepare_export(&schema(true), 0, batch(schema(true))).expect("exportable");
        assert_eq!(data.null_count(), 0);
        assert!(data.nulls().is_none());
    }

    #[test]
    fn a_batch_pruned_to_no_column_keeps_its_row_count() {
        let empty = Arc::new(Schema::empty());
        let options = RecordBatchOptions::new().with_row_count(Some(7));
        let batch = RecordBatch::try_new_with_options(empty.clone(), vec![], &options)
            .expect("a batch of no column");
        let data = prepare_export(&empty, 0, batch).expect("exportable");
        assert_eq!((data.len(), data.child_data().len()), (7, 0));
    }
}
