//! Arrow schemas in both directions, and the batches that a write receives. The batches that
//! a read exports are in `ffi::batch_check`.

use std::sync::Arc;

use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::{Schema, SchemaRef};

use crate::datasource::{Error, Result};
use arrow_schema::ffi::FFI_ArrowSchema;

/// The schema that the host lent to the current call.
///
/// # Safety
/// `schema` is null or points to a valid, unreleased `ArrowSchema` for the duration of the
/// call; it stays owned by the host.
pub unsafe fn import_schema(what: &str, schema: *const FFI_ArrowSchema) -> Result<SchemaRef> {
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
pub unsafe fn export_schema(schema: &Schema, out: *mut FFI_ArrowSchema) -> Result<()> {
    let exported = FFI_ArrowSchema::try_from(schema)?;
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
    schema: *const FFI_ArrowSchema,
    batch: *mut FFI_ArrowArray,
) -> Result<arrow_array::RecordBatch> {
    use arrow_array::{RecordBatch, StructArray};
    use arrow_schema::DataType;

    if batch.is_null() {
        return Err(Error::msg("the batch is NULL"));
    }
    // SAFETY: `batch` is valid and ours to release: `from_raw` moves it out and marks the
    // host's struct released, as the C data interface's move semantics require.
    let array = unsafe { FFI_ArrowArray::from_raw(batch) };
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
