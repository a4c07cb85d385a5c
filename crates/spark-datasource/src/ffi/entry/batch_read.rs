//! The driver side of `SPARK_DS_BATCH_READ`: create the reader, push down, plan, serialize.

use std::ffi::{c_int, c_void};

use crate::datasource::{BatchRead, BatchReader};
use crate::ffi::bytes::{Sink, Tagged};
use crate::ffi::guard::{guard, guard_close};
use crate::ffi::handle::{borrow, release, return_handle};
use crate::ffi::schema::import_schema;
use arrow_schema::ffi::FFI_ArrowSchema;
use spark_datasource_abi::v1::SparkDsSink;

type Reader<S> = <S as BatchRead>::Reader;

/// `create_reader`.
///
/// # Safety
/// `source` is a live source handle, `schema` a valid schema borrowed for the call, `reader`
/// valid for writes.
pub unsafe extern "C" fn create_reader<S: BatchRead>(
    source: *mut c_void,
    schema: *mut FFI_ArrowSchema,
    reader: *mut *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (source, schema) = unsafe {
            (
                borrow::<S>("source", source)?,
                import_schema("read", schema)?,
            )
        };
        let value = source.reader(schema)?;
        // SAFETY: forwarded contract.
        unsafe { return_handle("reader", reader, value) }
    })
}

/// `push_limit`.
///
/// # Safety
/// `reader` is a live batch reader handle; `accepted` is valid for writes.
pub unsafe extern "C" fn push_limit<S: BatchRead>(
    reader: *mut c_void,
    limit: i64,
    accepted: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let reader = unsafe { borrow::<Reader<S>>("reader", reader) }?;
        let limit = u64::try_from(limit)
            .map_err(|_| crate::datasource::Error::msg(format!("the limit {limit} is negative")))?;
        if accepted.is_null() {
            return Err(crate::datasource::Error::msg(
                "the accepted out-parameter is NULL",
            ));
        }
        let value = reader.push_limit(limit)?;
        // SAFETY: non-null, valid for writes (forwarded contract).
        unsafe { accepted.write(c_int::from(value)) };
        Ok(())
    })
}

/// `prune_columns`.
///
/// # Safety
/// `reader` is a live batch reader handle; `required_schema` a valid schema borrowed for the
/// call.
pub unsafe extern "C" fn prune_columns<S: BatchRead>(
    reader: *mut c_void,
    required_schema: *mut FFI_ArrowSchema,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, required) = unsafe {
            (
                borrow::<Reader<S>>("reader", reader)?,
                import_schema("required", required_schema)?,
            )
        };
        reader.prune_columns(required)
    })
}

/// `partitions`.
///
/// # Safety
/// `reader` is a live batch reader handle; `add` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn partitions<S: BatchRead>(
    reader: *mut c_void,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, sink) =
            unsafe { (borrow::<Reader<S>>("reader", reader)?, Sink::new(add, sink)) };
        reader
            .partitions()?
            .into_iter()
            .try_for_each(|partition| sink.add(&Tagged::Batch(partition)))
    })
}

/// `serialize_reader`.
///
/// # Safety
/// `reader` is a live batch reader handle; `add` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn serialize_reader<S: BatchRead>(
    reader: *mut c_void,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, sink) =
            unsafe { (borrow::<Reader<S>>("reader", reader)?, Sink::new(add, sink)) };
        sink.add(reader)
    })
}

/// `close_reader`.
///
/// # Safety
/// `reader` is a batch reader handle released only here, once.
pub unsafe extern "C" fn close_reader<S: BatchRead>(reader: *mut c_void) {
    // SAFETY: forwarded contract.
    guard_close("close_reader", || unsafe { release::<Reader<S>>(reader) });
}
