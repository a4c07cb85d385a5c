//! `push_filters` of `spark_datasource_filters.h`: decode the conjuncts, ask the reader,
//! answer one byte per conjunct through the host's sink.

use std::ffi::{c_int, c_void};

use crate::datasource::{BatchRead, BatchReader, Error, Result};
use crate::ffi::bytes::borrowed;
use crate::ffi::guard::guard;
use crate::ffi::handle::borrow;
use crate::filters::decode;
use spark_datasource_abi::v1::SparkDsSink;

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
    guard(|| {
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

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use std::ffi::CStr;
    use std::sync::Arc;

    use arrow_schema::{Schema, SchemaRef};
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::datasource::{Batches, DataSource, Options, TaskContext};
    use crate::ffi::guard::last_error;
    use crate::ffi::handle::{into_handle, release};
    use crate::filters::{col, encode, Filter, IntegerFilter};

    /// A source whose reader accepts the filters on `id` that bounds express, or, with
    /// `answers`, returns exactly those.
    struct Ids;

    #[derive(Serialize, Deserialize)]
    struct IdsReader {
        ids: IntegerFilter,
        answers: Option<Vec<bool>>,
    }

    impl DataSource for Ids {
        fn create(_name: &str, _options: Options) -> Result<Self> {
            Ok(Ids)
        }

        fn schema(&self) -> Result<SchemaRef> {
            Ok(Arc::new(Schema::empty()))
        }
    }

    impl BatchRead for Ids {
        type Reader = IdsReader;

        fn reader(&self, _schema: SchemaRef) -> Result<IdsReader> {
            Ok(IdsReader {
                ids: IntegerFilter::all(),
                answers: None,
            })
        }
    }

    impl BatchReader for IdsReader {
        type Partition = ();

        fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
            if let Some(answers) = &self.answers {
                return Ok(answers.clone());
            }
            let (ids, accepted) = IntegerFilter::from_filters("id", filters);
            self.ids = ids;
            Ok(accepted)
        }

        fn partitions(&self) -> Result<Vec<()>> {
            Ok(vec![])
        }

        fn read(&self, _partition: (), _task: &TaskContext) -> Result<Batches> {
            Err(Error::msg("not read"))
        }
    }

    /// # Safety
    /// `sink` is a `Vec<Vec<u8>>`; `data` points to `length` bytes.
    unsafe extern "C" fn collect(sink: *mut c_void, data: *const u8, length: i64) {
        // SAFETY: the test passes a `Vec<Vec<u8>>` and the shim `length` bytes at `data`.
        unsafe {
            let calls = &mut *sink.cast::<Vec<Vec<u8>>>();
            calls.push(std::slice::from_raw_parts(data, length as usize).to_vec());
        }
    }

    /// Calls the shim on a fresh reader: its status, the calls of the sink, and the reader's
    /// filter on `id` afterwards.
    fn call(answers: Option<Vec<bool>>, filters: &[u8]) -> (c_int, Vec<Vec<u8>>, IntegerFilter) {
        let handle = into_handle(IdsReader {
            ids: IntegerFilter::all(),
            answers,
        });
        let mut calls: Vec<Vec<u8>> = Vec::new();
        // SAFETY: a live handle of the source's reader, `filters` borrowed for the call, and
        // `collect` with the `Vec` it expects.
        let status = unsafe {
            push_filters::<Ids>(
                handle,
                filters.as_ptr(),
                filters.len() as i64,
                collect,
                (&mut calls as *mut Vec<Vec<u8>>).cast(),
            )
        };
        // SAFETY: the handle made above, still live, then released once.
        let ids = unsafe { borrow::<IdsReader>("reader", handle) }
            .expect("a live handle")
            .ids
            .clone();
        // SAFETY: as above.
        unsafe { release::<IdsReader>(handle) };
        (status, calls, ids)
    }

    fn last_message() -> String {
        // SAFETY: `last_error` returns this thread's NUL-terminated message.
        unsafe { CStr::from_ptr(last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn answers_one_byte_per_filter_in_one_call() {
        let message = encode(&[
            Filter::Ge(col("id"), 3i64.into()),
            Filter::Eq(col("label"), "x".into()),
            Filter::Lt(col("id"), 8i64.into()),
        ])
        .expect("encodes");
        let (status, calls, ids) = call(None, &message);
        assert_eq!(status, 0);
        assert_eq!(calls, [vec![1, 0, 1]]);
        assert_eq!(ids.ranges(0, 100), vec![3..8]);
    }

    #[test]
    fn an_accepted_unsupported_filter_is_answered_zero() {
        let message =
            encode(&[Filter::Unsupported(vec![99]), Filter::AlwaysTrue]).expect("encodes");
        let (status, calls, _) = call(Some(vec![true, true]), &message);
        assert_eq!(status, 0);
        assert_eq!(calls, [vec![0, 1]]);
    }

    #[test]
    fn a_wrong_number_of_answers_is_an_error() {
        let message = encode(&[Filter::AlwaysTrue]).expect("encodes");
        let (status, calls, _) = call(Some(vec![]), &message);
        assert_eq!((status, calls.len()), (1, 0));
        assert_eq!(
            last_message(),
            "BatchReader::push_filters returned 0 answers for 1 filters: return \
             one per filter"
        );
    }

    #[test]
    fn a_malformed_message_is_an_error_naming_the_byte() {
        let (status, calls, _) = call(None, &[1, 0, 0, 0, 9]);
        assert_eq!((status, calls.len()), (1, 0));
        assert_eq!(
            last_message(),
            "malformed filters at byte 4: 1 predicates cannot fit in the 1 bytes left"
        );
    }
}
