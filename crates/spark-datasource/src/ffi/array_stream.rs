//! The Arrow C stream that `read` exports, with every callback guarded.
//!
//! arrow-rs's own exporter catches no panic: a panic in `get_next` would cross into Spark and
//! abort the executor. This one runs each callback through the guard, checks
//! `is_interrupted` before each batch, and checks and mends each batch (`ffi::batch_check`).

use std::ffi::{c_char, c_int, c_void, CString};

use arrow_schema::SchemaRef;

use super::batch_check::prepare_export;
use super::guard::catch;
use super::schema::export_schema;
use crate::datasource::{Batches, Error, Result};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;

/// The error code of a failed callback: `EIO`, as the Arrow C stream interface suggests.
const EIO: c_int = 5;

/// What the exported stream owns, behind `private_data`.
struct Exported {
    batches: Batches,
    schema: SchemaRef,
    interrupted: Box<dyn Fn() -> bool + Send>,
    produced: usize,
    finished: bool,
    last_error: CString,
}

/// Writes to `out` a stream of `batches`, which ends with an error once `interrupted` returns
/// true. The host owns the stream afterwards and releases it, once.
///
/// # Safety
/// `out` is valid for writes of an `ArrowArrayStream`; whatever it held is overwritten.
pub unsafe fn export(
    batches: Batches,
    interrupted: Box<dyn Fn() -> bool + Send>,
    out: *mut FFI_ArrowArrayStream,
) -> Result<()> {
    if out.is_null() {
        return Err(Error::msg("the output stream pointer is NULL"));
    }
    let private = Box::new(Exported {
        schema: batches.schema(),
        batches,
        interrupted,
        produced: 0,
        finished: false,
        last_error: CString::default(),
    });
    // SAFETY: the callbacks below take the stream they are read from, `private_data` is the
    // `Exported` they all read, and `release` frees it once and then marks the stream released.
    let stream = unsafe {
        FFI_ArrowArrayStream::new_unchecked(
            Some(get_schema),
            Some(get_next),
            Some(get_last_error),
            Some(release),
            Box::into_raw(private).cast::<c_void>(),
        )
    };
    // SAFETY: `out` is non-null and valid for writes (the caller's duty).
    unsafe { out.write(stream) };
    Ok(())
}

/// The private data of a live stream, or `None` for a null or released one.
///
/// # Safety
/// `stream` is null or a stream that `export` wrote, used by one thread at a time as the C
/// stream interface requires.
unsafe fn exported<'a>(stream: *mut FFI_ArrowArrayStream) -> Option<&'a mut Exported> {
    // SAFETY: the caller's contract; a released stream has a null `release`.
    let stream = unsafe { stream.as_mut() }?;
    stream.release()?;
    // SAFETY: `private_data` of a live stream is the `Exported` that `export` boxed.
    unsafe { stream.private_data().cast::<Exported>().as_mut() }
}

/// Runs a callback body; on failure keeps the message for `get_last_error`.
fn run(state: &mut Exported, body: impl FnOnce(&mut Exported) -> Result<()>) -> c_int {
    match catch(|| body(state)) {
        Ok(()) => 0,
        Err(error) => {
            state.last_error =
                CString::new(error.to_string().replace('\0', "\u{FFFD}")).unwrap_or_default();
            EIO
        }
    }
}

/// `get_schema`.
///
/// # Safety
/// `stream` is a live stream that `export` wrote; `out` is valid for writes.
unsafe extern "C" fn get_schema(
    stream: *mut FFI_ArrowArrayStream,
    out: *mut FFI_ArrowSchema,
) -> c_int {
    // SAFETY: forwarded contract of this callback.
    let Some(state) = (unsafe { exported(stream) }) else {
        return EIO;
    };
    run(state, |state| {
        // SAFETY: `out` is valid for writes (the caller's duty).
        unsafe { export_schema(&state.schema, out) }
    })
}

/// `get_next`: the next batch, or a released array at the end, again and again.
///
/// # Safety
/// `stream` is a live stream that `export` wrote; `out` is valid for writes.
unsafe extern "C" fn get_next(
    stream: *mut FFI_ArrowArrayStream,
    out: *mut FFI_ArrowArray,
) -> c_int {
    // SAFETY: forwarded contract of this callback.
    let Some(state) = (unsafe { exported(stream) }) else {
        return EIO;
    };
    run(state, |state| {
        if out.is_null() {
            return Err(Error::msg("get_next: the output array pointer is NULL"));
        }
        if (state.interrupted)() {
            return Err(Error::Interrupted);
        }
        let next = if state.finished {
            None
        } else {
            state.batches.next()
        };
        let array = match next {
            None => {
                state.finished = true;
                FFI_ArrowArray::empty()
            }
            Some(batch) => {
                let data = prepare_export(&state.schema, state.produced, batch?)?;
                state.produced += 1;
                FFI_ArrowArray::new(&data)
            }
        };
        // SAFETY: `out` is non-null and valid for writes (the caller's duty).
        unsafe { out.write(array) };
        Ok(())
    })
}

/// `get_last_error`: the message of the last failed callback of this stream.
///
/// # Safety
/// `stream` is a live stream that `export` wrote.
unsafe extern "C" fn get_last_error(stream: *mut FFI_ArrowArrayStream) -> *const c_char {
    // SAFETY: forwarded contract of this callback.
    match unsafe { exported(stream) } {
        Some(state) => state.last_error.as_ptr(),
        None => c"the stream is released".as_ptr(),
    }
}

/// `release`: frees the stream's private data once, then marks it released.
///
/// # Safety
/// `stream` is null or a stream that `export` wrote.
unsafe extern "C" fn release(stream: *mut FFI_ArrowArrayStream) {
    // SAFETY: the caller's contract; a null stream is ignored.
    let Some(stream) = (unsafe { stream.as_mut() }) else {
        return;
    };
    if stream.release().is_none() {
        return;
    }
    // SAFETY: the stream keeps no data and is marked released, which the C stream interface
    // asks of `release`; the data is freed below.
    let private = unsafe {
        stream.set_release(None);
        stream.set_private_data(std::ptr::null_mut())
    }
    .cast::<Exported>();
    if !private.is_null() {
        // Dropping the batches runs the data source's code: keep a panic inside.
        super::guard::guard_close("release of a read stream", || {
            // SAFETY: `private` is the box that `export` leaked, freed only here, once,
            // since `release` is now null.
            drop(unsafe { Box::from_raw(private) });
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::ffi_stream::RecordBatchStreamReader;
    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]))
    }

    fn batch(values: std::ops::Range<i64>) -> Result<RecordBatch> {
        let ids = Int64Array::from_iter_values(values);
        Ok(RecordBatch::try_new(schema(), vec![Arc::new(ids)])?)
    }

    /// Exports `batches` and imports the stream back with arrow-rs, as the host would.
    fn round_trip(batches: Batches, interrupted: bool) -> RecordBatchStreamReader {
        let mut stream = FFI_ArrowArrayStream::empty();
        // SAFETY: `stream` is valid for writes.
        unsafe { export(batches, Box::new(move || interrupted), &mut stream) }.expect("exported");
        RecordBatchStreamReader::try_new(stream).expect("imported")
    }

    #[test]
    fn batches_cross_the_stream_unchanged() {
        let batches = Batches::new(schema(), vec![batch(0..3), batch(3..5)]);
        let read: Vec<RecordBatch> = round_trip(batches, false)
            .map(|b| b.expect("batch"))
            .collect();
        assert_eq!(read, vec![batch(0..3).unwrap(), batch(3..5).unwrap()]);
    }

    #[test]
    fn a_panic_in_the_data_sources_iterator_becomes_a_stream_error() {
        let panicking = (0..1).map(|_| -> Result<RecordBatch> { panic!("boom in next") });
        let mut reader = round_trip(Batches::new(schema(), panicking), false);
        let error = reader.next().expect("an item").unwrap_err();
        let text = error.to_string();
        // Where it panicked, then what it said.
        assert!(
            text.contains(&format!("the data source panicked at {}:", file!()))
                && text.ends_with(": boom in next"),
            "{error}"
        );
    }

    #[test]
    fn an_interrupted_task_stops_before_the_next_batch() {
        let mut reader = round_trip(Batches::new(schema(), vec![batch(0..3)]), true);
        let error = reader.next().expect("an item").unwrap_err();
        assert!(error.to_string().contains("the task was killed"), "{error}");
    }
}
