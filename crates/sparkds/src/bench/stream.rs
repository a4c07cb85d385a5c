//! One stream of a read: its schema, its batches with or without the checks, and its end.

use std::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::{RecordBatch, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Schema, SchemaRef};

use crate::error::{Error, Result, Violation};
use crate::filters::Filter;
use spark_datasource_abi::arrow::{ArrowArray, ArrowArrayStream, ArrowSchema};

use super::counts::Counts;

/// The stream's schema is the schema asked for (rule 19).
pub(super) fn check_stream_schema(
    stream: &mut Stream<'_>,
    schema: &SchemaRef,
    counts: &mut Counts,
) -> Result<()> {
    let mut raw_schema = ArrowSchema::empty();
    // SAFETY: the stream is live and `raw_schema` is valid for writes.
    let rc = counts.in_library(|| unsafe { (stream.get_schema)(stream.ptr(), &mut raw_schema) });
    if rc != 0 {
        return Err(stream.failure("get_schema", rc));
    }
    let got = crate::import::import_schema(&mut raw_schema)
        .map_err(|(rule, m)| stream.violation(rule, format!("the stream's schema: {m}")))?;
    if !crate::import::same_schema(&got, schema) {
        return Err(stream.violation(
            19,
            "the stream's schema is not the schema asked for; return exactly the schema to read, after `prune_columns`".into(),
        ));
    }
    Ok(())
}

/// The next batch of the stream, imported with the checks or as arrow-rs imports it; `None` at
/// the end of the stream.
pub(super) fn next_batch(
    stream: &mut Stream<'_>,
    schema: &SchemaRef,
    struct_type: &DataType,
    checks: bool,
    counts: &mut Counts,
) -> Result<Option<ArrayData>> {
    let mut raw = ArrowArray::empty();
    // SAFETY: the stream is live and `raw` is valid for writes.
    let rc = counts.in_library(|| unsafe { (stream.get_next)(stream.ptr(), &mut raw) });
    if rc != 0 {
        return Err(stream.failure("get_next", rc));
    }
    if raw.release.is_none() {
        return Ok(None);
    }
    let index = counts.batches;
    let data = if checks {
        // SAFETY: `raw` was just written by `get_next`, which moved it to the host.
        unsafe { import_checked(&mut raw, schema, counts) }
    } else {
        // SAFETY: as above.
        unsafe { import_unchecked(raw, struct_type) }
    }
    .map_err(|(rule, m)| stream.violation(rule, format!("batch {index}{m}")))?;
    Ok(Some(data))
}

/// The rows of batch `index` satisfy the accepted filters (rule 31).
pub(super) fn check_filters(
    stream: &Stream<'_>,
    data: &ArrayData,
    accepted: &[Filter],
    index: u64,
) -> Result<()> {
    let batch = RecordBatch::from(StructArray::from(data.clone()));
    crate::filters::check_batch(accepted, &batch, index as usize)
        .map_err(|(rule, m)| stream.violation(rule, m))
}

/// Counts the rows, the batch and the bytes of its kept columns.
pub(super) fn count_batch(data: &ArrayData, kept: Option<&[usize]>, counts: &mut Counts) {
    counts.rows += data.len() as u64;
    counts.batches += 1;
    counts.bytes += match kept {
        Some(indices) => indices
            .iter()
            .filter_map(|&i| data.child_data().get(i))
            .map(buffer_bytes)
            .sum(),
        None => buffer_bytes(data),
    };
}

/// The end of the stream repeats (rule 19): one more `get_next` gives 0 and a released array.
pub(super) fn check_end_repeats(stream: &mut Stream<'_>, counts: &mut Counts) -> Result<()> {
    let mut raw = ArrowArray::empty();
    // SAFETY: the stream is live and `raw` is valid for writes.
    let rc = counts.in_library(|| unsafe { (stream.get_next)(stream.ptr(), &mut raw) });
    if let Some(release) = raw.release {
        // SAFETY: the array was moved to the host; it is released once, here.
        counts.in_library(|| unsafe { release(&mut raw) });
    }
    if rc != 0 || raw.release.is_some() {
        return Err(stream.violation(19, "`get_next` returned a batch or an error after the end of the stream; the end must repeat (0 and a released array)".into()));
    }
    Ok(())
}

/// What `show` does with each batch (`import::checked_copy`: the raw checks of the C array,
/// arrow-rs's import, its full validation and a deep copy), then the release of the library's
/// array, timed as the library's. Errors continue "batch N".
///
/// # Safety
///
/// `raw` was moved to the host by `get_next` and is not released yet.
unsafe fn import_checked(
    raw: &mut ArrowArray,
    schema: &Schema,
    counts: &mut Counts,
) -> std::result::Result<ArrayData, (u32, String)> {
    // SAFETY: the caller's contract.
    let result = unsafe { crate::import::checked_copy(raw, schema) };
    if let Some(release) = raw.release {
        // SAFETY: the array was moved to the host, which releases it once, here.
        counts.in_library(|| unsafe { release(raw) });
    }
    result
}

/// arrow-rs's import alone, with its structural validation (buffer sizes, first and last
/// offsets), which reads no values: the array stays the library's until the data is dropped.
///
/// # Safety
///
/// `raw` was moved to the host by `get_next` and is not released yet.
unsafe fn import_unchecked(
    raw: ArrowArray,
    struct_type: &DataType,
) -> std::result::Result<ArrayData, (u32, String)> {
    // SAFETY: the layouts are identical; `raw` is moved, so arrow-rs releases it, once.
    let owned: FFI_ArrowArray =
        unsafe { std::ptr::read(&raw as *const ArrowArray as *const FFI_ArrowArray) };
    // `ArrowArray` has no `Drop`: the struct read here is the only owner of the array.
    let data = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract; arrow-rs reads the structure as the type says.
        unsafe { from_ffi_and_data_type(owned, struct_type.clone()) }
    }))
    .map_err(|_| (12, ": arrow-rs panicked importing it".to_string()))?
    .map_err(|e| (12, format!(": arrow-rs cannot import it: {e}")))?;
    data.validate()
        .map_err(|e| (12, format!(": fails arrow-rs's validation: {e}")))?;
    Ok(data)
}

/// `rows` rows of `sample`'s, in batches of its size: the same batch again, the last one sliced.
pub(super) fn sample_batches(
    sample: &RecordBatch,
    rows: u64,
) -> impl Iterator<Item = RecordBatch> + Send + 'static {
    let size = sample.num_rows().max(1) as u64;
    let sample = sample.clone();
    (0..rows.div_ceil(size)).map(move |i| {
        let n = (rows - i * size).min(size) as usize;
        if n == sample.num_rows() {
            sample.clone()
        } else {
            sample.slice(0, n)
        }
    })
}

/// The sum of the sizes of the buffers of an array and of its children.
pub(super) fn buffer_bytes(data: &ArrayData) -> u64 {
    let own: usize = data.buffers().iter().map(|b| b.len()).sum();
    let nulls = data.nulls().map_or(0, |n| n.buffer().len());
    (own + nulls) as u64 + data.child_data().iter().map(buffer_bytes).sum::<u64>()
}

/// A stream that `read` returned, released exactly once when dropped.
pub(super) struct Stream<'c> {
    pub(super) raw: Box<ArrowArrayStream>,
    pub(super) context: &'c str,
    pub(super) get_schema: unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int,
    pub(super) get_next: unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int,
}

impl<'c> Stream<'c> {
    pub(super) fn adopt(raw: Box<ArrowArrayStream>, context: &'c str) -> Result<Stream<'c>> {
        let violation = |message: &str| -> Error {
            Violation::new("read", 11, message)
                .within(Some(context))
                .into()
        };
        if raw.release.is_none() {
            return Err(violation(
                "returned 0 but a released stream (its `release` is NULL); write a stream to `out`",
            ));
        }
        match (raw.get_schema, raw.get_next) {
            (Some(get_schema), Some(get_next)) => Ok(Stream {
                raw,
                context,
                get_schema,
                get_next,
            }),
            _ => {
                let mut raw = raw;
                if let Some(release) = raw.release {
                    // SAFETY: the stream was moved to the host by `read`; this is its only
                    // release.
                    unsafe { release(&mut *raw) };
                }
                Err(violation(
                    "returned a stream whose `get_schema` or `get_next` is NULL; fill every callback",
                ))
            }
        }
    }

    pub(super) fn ptr(&mut self) -> *mut ArrowArrayStream {
        &mut *self.raw
    }

    pub(super) fn violation(&self, rule: u32, message: String) -> Error {
        Violation::new("read", rule, message)
            .within(Some(self.context))
            .into()
    }

    /// The error of a failing `get_schema` or `get_next`, with the stream's message.
    pub(super) fn failure(&mut self, callback: &str, rc: c_int) -> Error {
        let message = self.raw.get_last_error.and_then(|get_last_error| {
            // SAFETY: the stream is live; the message is copied at once.
            let message = unsafe { get_last_error(self.ptr()) };
            if message.is_null() {
                return None;
            }
            // SAFETY: a non-NULL message is NUL-terminated and valid until the next call.
            unsafe { CStr::from_ptr(message) }
                .to_str()
                .ok()
                .map(str::to_string)
        });
        match message {
            Some(message) => Error::Library {
                function: "read".into(),
                context: Some(format!("{}, `{callback}` of the stream", self.context)),
                message: crate::redact::scrub(&message),
            },
            None => self.violation(
                7,
                format!("`{callback}` of the stream returned {rc} without a message from `get_last_error`; a failing callback must set one"),
            ),
        }
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        if let Some(release) = self.raw.release {
            // SAFETY: the stream was moved to the host by `read`; this is its only release.
            unsafe { release(&mut *self.raw) };
            self.raw.release = None;
        }
    }
}
