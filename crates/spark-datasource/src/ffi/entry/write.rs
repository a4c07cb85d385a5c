//! `SPARK_DS_BATCH_WRITE` and `SPARK_DS_STREAMING_WRITE`: the writer on the driver, the data
//! writers on the executors, and the two-phase commit between them.

use std::ffi::{c_int, c_void, CStr};
use std::mem::{offset_of, size_of};

use super::task::task_context;
use super::Export;
use crate::datasource::{DataWriter, Error, Result, Write, WriteInfo, WriteMode, Writer};
use crate::ffi::bytes::{borrowed, decode, Sink};
use crate::ffi::guard::{guard, guard_close};
use crate::ffi::handle::{borrow, release, return_handle};
use crate::ffi::schema::{import_batch, import_schema};
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;
use spark_datasource_abi::v1::SPARK_DS_TRUNCATE;
use spark_datasource_abi::v1::{
    SparkDsSink, SparkDsTaskContext, SparkDsWriteInfo, SPARK_DS_NO_EPOCH, SPARK_DS_WRITE_APPEND,
    SPARK_DS_WRITE_TRUNCATE,
};

type WriterOf<S> = <S as Write>::Writer;
type DataWriterOf<S> = <WriterOf<S> as Writer>::DataWriter;
type MessageOf<S> = <WriterOf<S> as Writer>::Message;

/// `epoch_id` as the API's `Option`: `None` for a batch write.
fn epoch(epoch_id: i64) -> Result<Option<u64>> {
    match epoch_id {
        SPARK_DS_NO_EPOCH => Ok(None),
        id => u64::try_from(id)
            .map(Some)
            .map_err(|_| Error::msg(format!("the epoch ID {id} is negative"))),
    }
}

/// `create_writer`.
///
/// # Safety
/// `source` is a live source handle, `info` valid for the call, `writer` valid for writes.
pub unsafe extern "C" fn create_writer<S: Write, E: Export>(
    source: *mut c_void,
    info: *const SparkDsWriteInfo,
    writer: *mut *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (source, info) = unsafe {
            (
                borrow::<S>("source", source)?,
                write_info(info, E::CAPABILITIES)?,
            )
        };
        let value = source.writer(info)?;
        // SAFETY: forwarded contract.
        unsafe { return_handle("writer", writer, value) }
    })
}

/// `SparkDsWriteInfo` as the API's `WriteInfo`.
///
/// # Safety
/// `info` is null or valid for the call, with its schema and string.
unsafe fn write_info(info: *const SparkDsWriteInfo, capabilities: u64) -> Result<WriteInfo> {
    // SAFETY: the caller's contract.
    let info = unsafe { info.as_ref() }.ok_or_else(|| Error::msg("the write info is NULL"))?;
    let needed = offset_of!(SparkDsWriteInfo, streaming) + size_of::<i32>();
    if info.size < needed as i64 {
        return Err(Error::msg(format!(
            "the write info is {} bytes, smaller than the {needed} of version 1",
            info.size
        )));
    }
    let mode = match info.mode {
        SPARK_DS_WRITE_APPEND => WriteMode::Append,
        SPARK_DS_WRITE_TRUNCATE if capabilities & SPARK_DS_TRUNCATE != 0 => WriteMode::Truncate,
        SPARK_DS_WRITE_TRUNCATE => {
            return Err(Error::msg(
                "this data source does not declare SPARK_DS_TRUNCATE, so it cannot overwrite: \
                 use the save mode append",
            ))
        }
        other => return Err(Error::msg(format!("unknown write mode {other}"))),
    };
    if info.query_id.is_null() {
        return Err(Error::msg("the query ID is NULL"));
    }
    // SAFETY: non-null NUL-terminated string, valid for the call (the caller's contract).
    let query_id = unsafe { CStr::from_ptr(info.query_id) }
        .to_str()
        .map_err(|_| Error::msg("the query ID is not valid UTF-8"))?
        .to_string();
    Ok(WriteInfo {
        // SAFETY: the schema is valid for the call (the caller's contract).
        schema: unsafe { import_schema("write", info.schema) }?,
        mode,
        query_id,
        streaming: info.streaming != 0,
    })
}

/// `serialize_writer`.
///
/// # Safety
/// `writer` is a live writer handle; `add` and `sink` are the host's sink for the call.
pub unsafe extern "C" fn serialize_writer<S: Write>(
    writer: *mut c_void,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (writer, sink) = unsafe {
            (
                borrow::<WriterOf<S>>("writer", writer)?,
                Sink::new(add, sink),
            )
        };
        sink.add(writer)
    })
}

/// The commit messages of `commit` and `abort`, each decoded apart: `Ok(None)` for a NULL
/// entry, `Err` for one that does not decode.
///
/// # Safety
/// The arrays hold `count` entries, each null or readable for its length, for the call.
unsafe fn messages<S: Write>(
    messages: *const *const u8,
    lengths: *const i64,
    count: i64,
) -> Result<Vec<Result<Option<MessageOf<S>>>>> {
    let count = usize::try_from(count)
        .map_err(|_| Error::msg(format!("num_messages is negative: {count}")))?;
    if count > 0 && (messages.is_null() || lengths.is_null()) {
        return Err(Error::msg("the message arrays are NULL"));
    }
    Ok((0..count)
        .map(|i| {
            // SAFETY: both arrays hold `count` entries (the caller's contract).
            let (data, length) = unsafe { (*messages.add(i), *lengths.add(i)) };
            if data.is_null() {
                return Ok(None);
            }
            // SAFETY: a non-null entry is readable for its length (the caller's contract).
            decode("commit message", unsafe {
                borrowed("commit message", data, length)
            }?)
            .map(Some)
        })
        .collect())
}

/// `commit`.
///
/// # Safety
/// `writer` is a live writer handle; the message arrays are as the header describes.
pub unsafe extern "C" fn commit<S: Write>(
    writer: *mut c_void,
    epoch_id: i64,
    messages: *const *const u8,
    message_lengths: *const i64,
    num_messages: i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (writer, messages) = unsafe {
            (
                borrow::<WriterOf<S>>("writer", writer)?,
                self::messages::<S>(messages, message_lengths, num_messages)?,
            )
        };
        let messages = messages
            .into_iter()
            .enumerate()
            .map(|(task, message)| {
                message?.ok_or_else(|| Error::msg(format!("task {task} has no commit message")))
            })
            .collect::<Result<Vec<_>>>()?;
        writer.commit(epoch(epoch_id)?, messages)
    })
}

/// `abort`.
///
/// # Safety
/// `writer` is a live writer handle; the message arrays are as the header describes.
pub unsafe extern "C" fn abort<S: Write>(
    writer: *mut c_void,
    epoch_id: i64,
    messages: *const *const u8,
    message_lengths: *const i64,
    num_messages: i64,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (writer, messages) = unsafe {
            (
                borrow::<WriterOf<S>>("writer", writer)?,
                self::messages::<S>(messages, message_lengths, num_messages)?,
            )
        };
        abort_with(writer, epoch(epoch_id)?, messages)
    })
}

/// Runs the writer's abort even when some messages do not decode: it gets `None` for them, as
/// for a task that never committed, and removes what it can find; the call then fails naming
/// those messages, since what they staged may be left.
fn abort_with<W: Writer>(
    writer: &mut W,
    epoch: Option<u64>,
    messages: Vec<Result<Option<W::Message>>>,
) -> Result<()> {
    let mut undecoded = Vec::new();
    let messages = messages
        .into_iter()
        .enumerate()
        .map(|(task, message)| {
            message.unwrap_or_else(|error| {
                undecoded.push(format!("task {task}: {error}"));
                None
            })
        })
        .collect();
    let aborted = writer.abort(epoch, messages);
    if undecoded.is_empty() {
        return aborted;
    }
    let mut why = format!(
        "abort ran without the commit messages that did not decode, so what those tasks \
         staged may be left ({})",
        undecoded.join("; ")
    );
    if let Err(error) = aborted {
        why.push_str(&format!("; the abort itself failed: {error}"));
    }
    Err(Error::msg(why))
}

/// `close_writer`.
///
/// # Safety
/// `writer` is a writer handle released only here, once.
pub unsafe extern "C" fn close_writer<S: Write>(writer: *mut c_void) {
    // SAFETY: forwarded contract.
    guard_close("close_writer", || unsafe { release::<WriterOf<S>>(writer) });
}

/// `create_data_writer`.
///
/// # Safety
/// `task` valid for the call, `writer_state` readable for its length, `data_writer` valid for
/// writes.
pub unsafe extern "C" fn create_data_writer<S: Write>(
    task: *const SparkDsTaskContext,
    writer_state: *const u8,
    writer_state_length: i64,
    epoch_id: i64,
    data_writer: *mut *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (task, state) = unsafe {
            (
                task_context(task)?,
                borrowed("writer state", writer_state, writer_state_length)?,
            )
        };
        if state.is_empty() {
            return Err(Error::msg(
                "the writer state is empty: pass the bytes that serialize_writer returned",
            ));
        }
        let writer: WriterOf<S> = decode("writer state", state)?;
        let value = writer.data_writer(&task, epoch(epoch_id)?)?;
        // SAFETY: forwarded contract.
        unsafe { return_handle("data writer", data_writer, value) }
    })
}

/// `write`.
///
/// # Safety
/// `data_writer` is a live data writer handle; `batch` is moved to the library, `schema`
/// borrowed, both valid.
pub unsafe extern "C" fn write<S: Write>(
    data_writer: *mut c_void,
    schema: *mut FFI_ArrowSchema,
    batch: *mut FFI_ArrowArray,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract. The batch is imported first, so that it is released
        // even when the handle is bad.
        let batch = unsafe { import_batch(schema, batch) }?;
        // SAFETY: forwarded contract.
        let writer = unsafe { borrow::<DataWriterOf<S>>("data writer", data_writer) }?;
        writer.write(batch)
    })
}

/// `commit_data_writer`.
///
/// # Safety
/// `data_writer` is a live data writer handle; `add` and `sink` are the host's sink.
pub unsafe extern "C" fn commit_data_writer<S: Write>(
    data_writer: *mut c_void,
    add: SparkDsSink,
    sink: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let (writer, sink) = unsafe {
            (
                borrow::<DataWriterOf<S>>("data writer", data_writer)?,
                Sink::new(add, sink),
            )
        };
        sink.add(&writer.commit()?)
    })
}

/// `abort_data_writer`.
///
/// # Safety
/// `data_writer` is a live data writer handle.
pub unsafe extern "C" fn abort_data_writer<S: Write>(data_writer: *mut c_void) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        unsafe { borrow::<DataWriterOf<S>>("data writer", data_writer) }?.abort()
    })
}

/// `close_data_writer`.
///
/// # Safety
/// `data_writer` is a data writer handle released only here, once.
pub unsafe extern "C" fn close_data_writer<S: Write>(data_writer: *mut c_void) {
    // SAFETY: forwarded contract.
    guard_close("close_data_writer", || unsafe {
        release::<DataWriterOf<S>>(data_writer);
    });
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::datasource::TaskContext;

    /// Records what its abort was given.
    #[derive(Serialize, Deserialize, Default)]
    struct Recording {
        aborted: Vec<Option<u32>>,
    }

    struct Never;

    impl DataWriter for Never {
        type Message = u32;
        fn write(&mut self, _: arrow_array::RecordBatch) -> Result<()> {
            unreachable!("not called")
        }
        fn commit(&mut self) -> Result<u32> {
            unreachable!("not called")
        }
        fn abort(&mut self) -> Result<()> {
            unreachable!("not called")
        }
    }

    impl Writer for Recording {
        type Message = u32;
        type DataWriter = Never;
        fn data_writer(&self, _: &TaskContext, _: Option<u64>) -> Result<Never> {
            Ok(Never)
        }
        fn commit(&mut self, _: Option<u64>, _: Vec<u32>) -> Result<()> {
            Ok(())
        }
        fn abort(&mut self, _: Option<u64>, messages: Vec<Option<u32>>) -> Result<()> {
            self.aborted = messages;
            Ok(())
        }
    }

    #[test]
    fn an_abort_with_a_message_that_does_not_decode_still_removes_what_the_others_staged() {
        let mut writer = Recording::default();
        let messages = vec![
            Ok(Some(7)),
            Err(Error::msg("not JSON")),
            Ok(None),
            Ok(Some(9)),
        ];
        let error = abort_with(&mut writer, None, messages).expect_err("a message was lost");
        assert_eq!(writer.aborted, vec![Some(7), None, None, Some(9)]);
        assert_eq!(
            error.to_string(),
            "abort ran without the commit messages that did not decode, so what those tasks \
             staged may be left (task 1: not JSON)"
        );
    }
}
