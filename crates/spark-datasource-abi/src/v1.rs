//! Version 1 of `spark_datasource.h`: every struct, function type and constant, in the header's
//! order. The layout is frozen: once published, no field of version 1 moves, changes type or
//! goes away (`book/src/abi/frozen-layout.md`), and the crate's layout test holds these
//! declarations equal to the header as the system C compiler lays it out.
//!
//! Every function pointer is an `Option`: a library leaves the functions it does not implement
//! NULL, and a host reads only what fits in the table's `size`.

use std::ffi::{c_char, c_int, c_void};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_data::ffi::FFI_ArrowArray;
use arrow_schema::ffi::FFI_ArrowSchema;

/// `SPARK_DS_ABI_VERSION`.
pub const SPARK_DS_ABI_VERSION: i32 = 1;

/// `SPARK_DS_BATCH_READ`.
pub const SPARK_DS_BATCH_READ: u64 = 1 << 0;
/// `SPARK_DS_MICRO_BATCH_READ`.
pub const SPARK_DS_MICRO_BATCH_READ: u64 = 1 << 1;
/// `SPARK_DS_BATCH_WRITE`.
pub const SPARK_DS_BATCH_WRITE: u64 = 1 << 2;
/// `SPARK_DS_STREAMING_WRITE`.
pub const SPARK_DS_STREAMING_WRITE: u64 = 1 << 3;
/// `SPARK_DS_TRUNCATE`.
pub const SPARK_DS_TRUNCATE: u64 = 1 << 4;

/// `SPARK_DS_WRITE_APPEND`.
pub const SPARK_DS_WRITE_APPEND: i32 = 0;
/// `SPARK_DS_WRITE_TRUNCATE`.
pub const SPARK_DS_WRITE_TRUNCATE: i32 = 1;

/// `SPARK_DS_NO_EPOCH`: the epoch of a batch write.
pub const SPARK_DS_NO_EPOCH: i64 = -1;

/// `SPARK_DS_LOG_ERROR`.
pub const SPARK_DS_LOG_ERROR: i32 = 1;
/// `SPARK_DS_LOG_WARN`.
pub const SPARK_DS_LOG_WARN: i32 = 2;
/// `SPARK_DS_LOG_INFO`.
pub const SPARK_DS_LOG_INFO: i32 = 3;
/// `SPARK_DS_LOG_DEBUG`.
pub const SPARK_DS_LOG_DEBUG: i32 = 4;
/// `SPARK_DS_LOG_TRACE`.
pub const SPARK_DS_LOG_TRACE: i32 = 5;

/// `SparkDsSink`: receives a byte array that the library returns; the host copies it.
pub type SparkDsSink = unsafe extern "C" fn(sink: *mut c_void, data: *const u8, length: i64);

/// A source, reader, writer or data writer: the library's opaque `void *`.
pub type Handle = *mut c_void;

/// `SparkDsHost`.
#[repr(C)]
pub struct SparkDsHost {
    /// `sizeof(SparkDsHost)` of the host's version.
    pub size: i64,
    /// `SPARK_DS_ABI_VERSION` of the host.
    pub abi_version: i32,
    /// The Spark version, NUL-terminated.
    pub spark_version: *const c_char,
    /// Writes a message to Spark's log; thread-safe.
    pub log:
        Option<unsafe extern "C" fn(log_context: *mut c_void, level: i32, message: *const c_char)>,
    /// The first argument of `log`.
    pub log_context: *mut c_void,
}

/// `SparkDsCreateInfo`.
#[repr(C)]
pub struct SparkDsCreateInfo {
    /// `sizeof(SparkDsCreateInfo)` of the host's version.
    pub size: i64,
    /// The data source name, NUL-terminated.
    pub name: *const c_char,
    /// The option keys, `num_options` NUL-terminated strings.
    pub option_keys: *const *const c_char,
    /// The option values, in the order of the keys.
    pub option_values: *const *const c_char,
    /// How many options there are.
    pub num_options: i64,
}

/// `SparkDsTaskContext`.
#[repr(C)]
pub struct SparkDsTaskContext {
    /// `sizeof(SparkDsTaskContext)` of the host's version.
    pub size: i64,
    /// Spark's task attempt id.
    pub task_id: i64,
    /// Whether the task was killed; thread-safe.
    pub is_interrupted: Option<unsafe extern "C" fn(task: *const SparkDsTaskContext) -> c_int>,
    /// The host's own data, for `is_interrupted`.
    pub host_data: *mut c_void,
    /// The stage of the task.
    pub stage_id: i32,
    /// The partition of the task.
    pub partition_id: i32,
    /// The attempt of the task.
    pub attempt_number: i32,
}

/// `SparkDsWriteInfo`.
#[repr(C)]
pub struct SparkDsWriteInfo {
    /// `sizeof(SparkDsWriteInfo)` of the host's version.
    pub size: i64,
    /// The schema of the rows to write, lent for the call.
    pub schema: *mut FFI_ArrowSchema,
    /// The query id, NUL-terminated.
    pub query_id: *const c_char,
    /// `SPARK_DS_WRITE_APPEND` or `SPARK_DS_WRITE_TRUNCATE`.
    pub mode: i32,
    /// 1 for a streaming write, 0 for a batch write.
    pub streaming: i32,
}

/// `void (*)(void *)`: the close functions of the table.
pub type Close = unsafe extern "C" fn(handle: Handle);
/// `int (*)(void *, SparkDsSink, void *)`: the functions of the table that return bytes.
pub type SinkCall =
    unsafe extern "C" fn(handle: Handle, add: SparkDsSink, sink: *mut c_void) -> c_int;
/// `int (*)(void *, int64_t, const uint8_t *const *, const int64_t *, int64_t)`: `commit` and
/// `abort` of a writer.
pub type Messages = unsafe extern "C" fn(
    writer: Handle,
    epoch_id: i64,
    messages: *const *const u8,
    message_lengths: *const i64,
    num_messages: i64,
) -> c_int;

/// `SparkDsLibrary`: the function table, in the order of the header. The functions from
/// `last_error` on are one pointer each, one after the other to the end of the table.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SparkDsLibrary {
    /// `sizeof(SparkDsLibrary)` of the library's version: a host reads no further.
    pub size: i64,
    /// `SPARK_DS_ABI_VERSION` of the library.
    pub abi_version: i32,
    /// The message of the calling thread's last failure.
    pub last_error: Option<unsafe extern "C" fn() -> *const c_char>,
    /// Creates a source of the options, and says its capabilities.
    pub create: Option<
        unsafe extern "C" fn(
            info: *const SparkDsCreateInfo,
            capabilities: *mut u64,
            source: *mut Handle,
        ) -> c_int,
    >,
    /// The source's schema.
    pub schema: Option<unsafe extern "C" fn(source: Handle, out: *mut FFI_ArrowSchema) -> c_int>,
    /// A batch reader of the schema.
    pub create_reader: Option<
        unsafe extern "C" fn(
            source: Handle,
            schema: *mut FFI_ArrowSchema,
            reader: *mut Handle,
        ) -> c_int,
    >,
    /// A micro-batch reader of the schema.
    pub create_stream_reader: Option<
        unsafe extern "C" fn(
            source: Handle,
            schema: *mut FFI_ArrowSchema,
            reader: *mut Handle,
        ) -> c_int,
    >,
    /// A writer.
    pub create_writer: Option<
        unsafe extern "C" fn(
            source: Handle,
            info: *const SparkDsWriteInfo,
            writer: *mut Handle,
        ) -> c_int,
    >,
    /// Closes a source.
    pub close: Option<Close>,
    /// Pushes a limit to a batch reader.
    pub push_limit:
        Option<unsafe extern "C" fn(reader: Handle, limit: i64, accepted: *mut c_int) -> c_int>,
    /// Prunes a batch reader's columns.
    pub prune_columns: Option<
        unsafe extern "C" fn(reader: Handle, required_schema: *mut FFI_ArrowSchema) -> c_int,
    >,
    /// The partitions of a batch reader.
    pub partitions: Option<SinkCall>,
    /// The state of a batch reader, for the executors.
    pub serialize_reader: Option<SinkCall>,
    /// Closes a batch reader.
    pub close_reader: Option<Close>,
    /// The first offset of a micro-batch reader.
    pub initial_offset: Option<SinkCall>,
    /// The latest offset after `start`.
    pub latest_offset: Option<
        unsafe extern "C" fn(
            reader: Handle,
            start: *const u8,
            start_length: i64,
            add: SparkDsSink,
            sink: *mut c_void,
        ) -> c_int,
    >,
    /// The partitions of a micro-batch between two offsets.
    pub stream_partitions: Option<
        unsafe extern "C" fn(
            reader: Handle,
            start: *const u8,
            start_length: i64,
            end: *const u8,
            end_length: i64,
            add: SparkDsSink,
            sink: *mut c_void,
        ) -> c_int,
    >,
    /// The state of a micro-batch reader, for the executors.
    pub serialize_stream_reader: Option<SinkCall>,
    /// Marks the data up to `end` processed.
    pub commit_offset:
        Option<unsafe extern "C" fn(reader: Handle, end: *const u8, end_length: i64) -> c_int>,
    /// Closes a micro-batch reader.
    pub close_stream_reader: Option<Close>,
    /// Reads a partition on an executor, as an Arrow C stream.
    pub read: Option<
        unsafe extern "C" fn(
            task: *const SparkDsTaskContext,
            reader_state: *const u8,
            reader_state_length: i64,
            partition: *const u8,
            partition_length: i64,
            out: *mut FFI_ArrowArrayStream,
        ) -> c_int,
    >,
    /// The state of a writer, for the executors.
    pub serialize_writer: Option<SinkCall>,
    /// Commits a write (or an epoch) with the data writers' messages.
    pub commit: Option<Messages>,
    /// Aborts a write (or an epoch) with the messages of the data writers that committed.
    pub abort: Option<Messages>,
    /// Closes a writer.
    pub close_writer: Option<Close>,
    /// A data writer of a task on an executor.
    pub create_data_writer: Option<
        unsafe extern "C" fn(
            task: *const SparkDsTaskContext,
            writer_state: *const u8,
            writer_state_length: i64,
            epoch_id: i64,
            data_writer: *mut Handle,
        ) -> c_int,
    >,
    /// Writes a batch, which the call moves to the library.
    pub write: Option<
        unsafe extern "C" fn(
            data_writer: Handle,
            schema: *mut FFI_ArrowSchema,
            batch: *mut FFI_ArrowArray,
        ) -> c_int,
    >,
    /// Commits a data writer and returns its message.
    pub commit_data_writer: Option<SinkCall>,
    /// Aborts a data writer.
    pub abort_data_writer: Option<unsafe extern "C" fn(data_writer: Handle) -> c_int>,
    /// Closes a data writer.
    pub close_data_writer: Option<Close>,
}

impl SparkDsLibrary {
    /// A table with every function NULL and `size` and `abi_version` 0.
    pub const fn empty() -> Self {
        // SAFETY: every field is an integer or an `Option` of a function pointer, for which
        // all-zero bytes are 0 and `None`.
        unsafe { std::mem::zeroed() }
    }
}

/// `SparkDsInitFunction`: the type of `spark_ds_init`, the one exported function.
pub type SparkDsInitFunction =
    unsafe extern "C" fn(host: *const SparkDsHost, library: *mut *const SparkDsLibrary) -> c_int;

/// The smallest `size` a table may declare: up to and including `read` (the header: "at least
/// up to `read`").
pub const MIN_TABLE_SIZE: usize =
    std::mem::offset_of!(SparkDsLibrary, read) + std::mem::size_of::<usize>();

/// How many functions the table has: the pointers from `last_error` to the end.
pub const FUNCTION_COUNT: usize = (std::mem::size_of::<SparkDsLibrary>()
    - std::mem::offset_of!(SparkDsLibrary, last_error))
    / std::mem::size_of::<usize>();

// The functions are one array of pointers, from `last_error` to the end.
const _: () = assert!(
    std::mem::size_of::<SparkDsLibrary>()
        == std::mem::offset_of!(SparkDsLibrary, last_error)
            + FUNCTION_COUNT * std::mem::size_of::<usize>()
);
