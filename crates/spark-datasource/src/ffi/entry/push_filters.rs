//! `push_filters` of `spark_datasource_filters.h`: decode the conjuncts, ask the reader,
//! answer one byte per conjunct through the host's sink.

use std::ffi::{c_int, c_void};

use crate::datasource::{BatchRead, BatchReader, Error, Result};
use crate::ffi::bytes::borrowed;
use crate::ffi::guard::guard;
use crate::ffi::handle::borrow;
use crate::ffi::header::SparkDsSink;
use crate::filters::decode;

/// `push_filters`.
///
/// # Safety
/// `reader` is a live batch reader handle; `filters` points to `length` readable bytes for the
/// call (or is null with 0); `accepted` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn push_filters<S: BatchRead>(
    reader: *mut c_void,
    filters: *const u8,
    length: i64,
    accepted: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard("push_filters", || {
        // SAFETY: forwarded contract.
        let (reader, bytes) = unsafe {
            (
                borrow::<S::Reader>("reader", reader)?,
                borrowed("filters", filters, length)?,
            )
        };
        let answers = answers(reader, bytes)?;
        // SAFETY: the host's sink for this call (forwarded contract); it copies `answers`,
        // which outlive the call.
        unsafe { accepted(sink, answers.as_ptr(), answers.len() as i64) };
        Ok(())
    })
}

/// The answers of `reader` to the message `bytes`: 1 for each accepted conjunct, else 0.
fn answers<R: BatchReader>(reader: &mut R, bytes: &[u8]) -> Result<Vec<u8>> {
    let filters = decode(bytes)?;
    let answers = reader.push_filters(&filters)?;
    if answers.len() != filters.len() {
        return Err(Error::msg(format!(
            "BatchReader::push_filters returned {} answers for {} filters: return one per filter",
            answers.len(),
            filters.len()
        )));
    }
    // A reader cannot guarantee what it cannot read: never pass on an accepted Unsupported.
    Ok(filters
        .iter()
        .zip(answers)
        .map(|(f, a)| u8::from(a && !matches!(f, crate::filters::Filter::Unsupported(_))))
        .collect())
}
