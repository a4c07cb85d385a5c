//! The driver side of `SPARK_DS_MICRO_BATCH_READ`: offsets, planning of micro-batches,
//! commits.

use std::ffi::{c_int, c_void};

use crate::datasource::{Result, StreamRead, StreamReader};
use crate::ffi::bytes::{borrowed, decode, Sink, Tagged};
use crate::ffi::guard::{guard, guard_close};
use crate::ffi::handle::{borrow, release, return_handle};
use crate::ffi::schema::import_schema;
use arrow_schema::ffi::FFI_ArrowSchema;
use spark_datasource_abi::v1::SparkDsSink;

type Reader<S> = <S as StreamRead>::Reader;
type Offset<S> = <Reader<S> as StreamReader>::Offset;

/// An offset that the host lent to the call.
///
/// # Safety
/// `data` holds `length` readable bytes for the call, or is null with length 0.
unsafe fn offset<S: StreamRead>(data: *const u8, length: i64) -> Result<Offset<S>> {
    // SAFETY: the caller's contract.
    decode("offset", unsafe { borrowed("offset", data, length) }?)
}

/// `create_stream_reader`.
///
/// # Safety
/// `source` is a live source handle, `schema` a valid schema borrowed for the call, `reader`
/// valid for writes.
pub unsafe extern "C" fn create_stream_reader<S: StreamRead>(
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
        let value = source.stream_reader(schema)?;
        // SAFETY: forwarded contract.
        unsafe { return_handle("stream reader", reader, value) }
    })
}

/// `initial_offset`.
///
/// # Safety
/// `reader` is a live stream reader handle; `add` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn initial_offset<S: StreamRead>(
    reader: *mut c_void,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, sink) = unsafe {
            (
                borrow::<Reader<S>>("stream reader", reader)?,
                Sink::new(add, sink),
            )
        };
        sink.add(&reader.initial_offset()?)
    })
}

/// `latest_offset`.
///
/// # Safety
/// `reader` is a live stream reader handle; `start` holds `start_length` bytes for the call;
/// `add` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn latest_offset<S: StreamRead>(
    reader: *mut c_void,
    start: *const u8,
    start_length: i64,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, start, sink) = unsafe {
            (
                borrow::<Reader<S>>("stream reader", reader)?,
                offset::<S>(start, start_length)?,
                Sink::new(add, sink),
            )
        };
        sink.add(&reader.latest_offset(start)?)
    })
}

/// `stream_partitions`.
///
/// # Safety
/// `reader` is a live stream reader handle; `start` and `end` hold their lengths in bytes for
/// the call; `add` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn stream_partitions<S: StreamRead>(
    reader: *mut c_void,
    start: *const u8,
    start_length: i64,
    end: *const u8,
    end_length: i64,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, start, end, sink) = unsafe {
            (
                borrow::<Reader<S>>("stream reader", reader)?,
                offset::<S>(start, start_length)?,
                offset::<S>(end, end_length)?,
                Sink::new(add, sink),
            )
        };
        reader
            .partitions(start, end)?
            .into_iter()
            .try_for_each(|partition| sink.add(&Tagged::Stream(partition)))
    })
}

/// `serialize_stream_reader`.
///
/// # Safety
/// `reader` is a live stream reader handle; `add` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn serialize_stream_reader<S: StreamRead>(
    reader: *mut c_void,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, sink) = unsafe {
            (
                borrow::<Reader<S>>("stream reader", reader)?,
                Sink::new(add, sink),
            )
        };
        sink.add(reader)
    })
}

/// `commit_offset`.
///
/// # Safety
/// `reader` is a live stream reader handle; `end` holds `end_length` bytes for the call.
pub unsafe extern "C" fn commit_offset<S: StreamRead>(
    reader: *mut c_void,
    end: *const u8,
    end_length: i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (reader, end) = unsafe {
            (
                borrow::<Reader<S>>("stream reader", reader)?,
                offset::<S>(end, end_length)?,
            )
        };
        reader.commit(end)
    })
}

/// `close_stream_reader`.
///
/// # Safety
/// `reader` is a stream reader handle released only here, once.
pub unsafe extern "C" fn close_stream_reader<S: StreamRead>(reader: *mut c_void) {
    // SAFETY: forwarded contract.
    guard_close("close_stream_reader", || unsafe {
        release::<Reader<S>>(reader);
    });
}
