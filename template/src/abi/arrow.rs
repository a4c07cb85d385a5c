//! Arrow data at the interface: schemas in both directions, the batches that a read exports
//! and the batches that a write receives.
//!
//! Every exported batch is checked and, where it can be, mended before it leaves: Spark reads
//! it without copying and without validating it (the specification's Memory section).
//! - Arrays have offset 0 at every level, and string and binary offsets start at 0: a sliced
//!   array is copied (Arrow Java ignores offsets and would read the wrong rows).
//! - The top level is a struct with no nulls (Arrow Java ignores its validity).
//! - A column declared not null holds no null: that is the data source's bug, reported.
//! - The batch has the schema the stream declared.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_data::transform::MutableArrayData;
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::ffi::{ArrowArray, ArrowSchema};
use crate::api::{Error, Result};

/// The schema that the host lent to the current call.
///
/// # Safety
/// `schema` is null or points to a valid, unreleased `ArrowSchema` for the duration of the
/// call; it stays owned by the host.
pub unsafe fn import_schema(what: &str, schema: *const ArrowSchema) -> Result<SchemaRef> {
    // SAFETY: the caller guarantees that a non-null `schema` is valid during the call.
    let schema = unsafe { schema.as_ref() }
        .ok_or_else(|| Error::msg(format!("the {what} schema is NULL")))?;
    Ok(Arc::new(Schema::try_from(schema)?))
}

/// Writes `schema` to `out`, moving its ownership to the host.
///
/// # Safety
/// `out` is valid for writes of an `ArrowSchema`; whatever it held is overwritten, not
/// released.
pub unsafe fn export_schema(schema: &Schema, out: *mut ArrowSchema) -> Result<()> {
    let exported = ArrowSchema::try_from(schema)?;
    if out.is_null() {
        return Err(Error::msg("the output schema pointer is NULL"));
    }
    // SAFETY: `out` is non-null and valid for writes (the caller's duty).
    unsafe { out.write(exported) };
    Ok(())
}

/// A batch that the host moved to the library: takes ownership of `batch` (released when the
/// returned batch is dropped) and reads it with `schema`, which stays the host's.
///
/// # Safety
/// `batch` points to a valid `ArrowArray` whose release the library now owns; `schema` to a
/// valid `ArrowSchema` of a struct describing it, for the duration of the call.
pub unsafe fn import_batch(
    schema: *const ArrowSchema,
    batch: *mut ArrowArray,
) -> Result<RecordBatch> {
    if batch.is_null() {
        return Err(Error::msg("the batch is NULL"));
    }
    // SAFETY: `batch` is valid and ours to release: `from_raw` moves it out and marks the
    // host's struct released, as the C data interface's move semantics require.
    let array = unsafe { ArrowArray::from_raw(batch) };
    // SAFETY: see this function's contract for `schema`.
    let schema_ref =
        unsafe { schema.as_ref() }.ok_or_else(|| Error::msg("the batch schema is NULL"))?;
    let schema = Arc::new(Schema::try_from(schema_ref)?);
    // SAFETY: `array` is a valid exported array and `schema_ref` describes it (the host's duty).
    let data = unsafe { arrow_array::ffi::from_ffi(array, schema_ref) }?;
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(Error::msg(format!(
            "a batch must be a struct array, got {}",
            data.data_type()
        )));
    }
    let columns = StructArray::from(data).columns().to_vec();
    Ok(RecordBatch::try_new(schema, columns)?)
}

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
    let columns = batch
        .columns()
        .iter()
        .map(|column| {
            let data = column.to_data();
            Ok(if needs_copy(&data) {
                arrow_array::make_array(compact(&data)?)
            } else {
                column.clone()
            })
        })
        .collect::<Result<Vec<ArrayRef>>>()?;
    let batch = RecordBatch::try_new(batch.schema(), columns)?;
    let data = StructArray::from(batch).into_data();
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
    use arrow_array::{Int64Array, StringArray};

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
}
