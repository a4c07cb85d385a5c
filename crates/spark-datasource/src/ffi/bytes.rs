//! The byte arrays of the interface: partitions, serialized readers and writers, offsets and
//! commit messages. This layer encodes them as JSON (readable in snapshots and in Spark's
//! checkpoints) and returns them through a `SparkDsSink`.

use std::ffi::c_void;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::datasource::{Error, Result};
use spark_datasource_abi::v1::SparkDsSink;

/// A `SparkDsSink` with its opaque pointer: where to return byte arrays to the host.
pub struct Sink {
    add: SparkDsSink,
    sink: *mut c_void,
}

impl Sink {
    /// # Safety
    /// `add` and `sink` are the callback and pointer the host passed to the current call;
    /// the `Sink` is only used during that call, on the calling thread.
    pub unsafe fn new(add: SparkDsSink, sink: *mut c_void) -> Self {
        Sink { add, sink }
    }

    /// Returns `value`, encoded, to the host.
    pub fn add<T: Serialize>(&self, value: &T) -> Result<()> {
        let bytes = encode(value)?;
        // SAFETY: `new`'s contract: the callback and its pointer belong to this call; the host
        // copies `bytes`, which outlive the call of `add`.
        unsafe { (self.add)(self.sink, bytes.as_ptr(), bytes.len() as i64) };
        Ok(())
    }
}

/// Encodes a value that crosses the interface.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|e| Error::msg(format!("cannot encode a value for Spark: {e}")))
}

/// Decodes `bytes`, a `what` that the host passed back.
pub fn decode<T: DeserializeOwned>(what: &'static str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|source| Error::Decode { what, source })
}

/// The borrowed byte array `(data, length)` of a call, or an error naming `what` when the
/// host passed a null pointer with a length, or a negative length.
///
/// # Safety
/// When `data` is not null, it points to `length` readable bytes that stay valid for `'a`,
/// the duration of the call.
pub unsafe fn borrowed<'a>(what: &'static str, data: *const u8, length: i64) -> Result<&'a [u8]> {
    let length = usize::try_from(length)
        .map_err(|_| Error::msg(format!("the {what} has a negative length {length}")))?;
    if length == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(Error::msg(format!(
            "the {what} is NULL with length {length}"
        )));
    }
    // SAFETY: the caller guarantees `length` readable bytes at `data` for `'a`.
    Ok(unsafe { std::slice::from_raw_parts(data, length) })
}

/// Partitions of batch reads and of micro-batches share the `read` function: the tag says
/// which reader type decodes the state and the partition.
#[derive(Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tagged<T> {
    Batch(T),
    Stream(T),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_null_byte_array_with_a_length_is_an_error() {
        // SAFETY: a null pointer is never read.
        let error = unsafe { borrowed("partition", std::ptr::null(), 4) }.unwrap_err();
        assert_eq!(error.to_string(), "the partition is NULL with length 4");
    }

    #[test]
    fn corrupt_bytes_name_what_they_were() {
        let error = decode::<u64>("offset", b"{").unwrap_err();
        assert!(error
            .to_string()
            .starts_with("cannot read the offset that Spark passed back:"));
    }
}
