//! A mirror of `spark_datasource.h`, version 1: every struct, function type and constant, in
//! the header's order. The Arrow structs are arrow-rs's own `#[repr(C)]` mirrors of the Arrow
//! C data interface. `tests::layout` proves, with the system C compiler, that sizes, field
//! offsets and function signatures equal the header's.

// The mirror is complete, as the header is: not every constant is used by this crate.
#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_void};

pub use arrow_array::ffi::FFI_ArrowArray as ArrowArray;
pub use arrow_schema::ffi::FFI_ArrowSchema as ArrowSchema;

/// `struct ArrowArrayStream` of the Arrow C stream interface. arrow-rs keeps the fields of its
/// own mirror private, and this layer fills them with its guarded callbacks (`abi::stream`).
#[repr(C)]
pub struct ArrowArrayStream {
    pub get_schema:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int>,
    pub get_next:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int>,
    pub get_last_error:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream) -> *const c_char>,
    pub release: Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream)>,
    pub private_data: *mut c_void,
}

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

/// `SPARK_DS_NO_EPOCH`.
pub const SPARK_DS_NO_EPOCH: i64 = -1;

/// `SPARK_DS_LOG_ERROR` .. `SPARK_DS_LOG_TRACE`.
pub const SPARK_DS_LOG_ERROR: i32 = 1;
pub const SPARK_DS_LOG_WARN: i32 = 2;
pub const SPARK_DS_LOG_INFO: i32 = 3;
pub const SPARK_DS_LOG_DEBUG: i32 = 4;
pub const SPARK_DS_LOG_TRACE: i32 = 5;

/// `SparkDsSink`: receives a byte array that the library returns; the host copies it.
pub type SparkDsSink = unsafe extern "C" fn(sink: *mut c_void, data: *const u8, length: i64);

/// `SparkDsHost`.
#[repr(C)]
pub struct SparkDsHost {
    pub size: i64,
    pub abi_version: i32,
    pub spark_version: *const c_char,
    pub log:
        Option<unsafe extern "C" fn(log_context: *mut c_void, level: i32, message: *const c_char)>,
    pub log_context: *mut c_void,
}

/// `SparkDsCreateInfo`.
#[repr(C)]
pub struct SparkDsCreateInfo {
    pub size: i64,
    pub name: *const c_char,
    pub option_keys: *const *const c_char,
    pub option_values: *const *const c_char,
    pub num_options: i64,
}

/// `SparkDsTaskContext`.
#[repr(C)]
pub struct SparkDsTaskContext {
    pub size: i64,
    pub task_id: i64,
    pub is_interrupted: Option<unsafe extern "C" fn(task: *const SparkDsTaskContext) -> c_int>,
    pub host_data: *mut c_void,
    pub stage_id: i32,
    pub partition_id: i32,
    pub attempt_number: i32,
}

/// `SparkDsWriteInfo`.
#[repr(C)]
pub struct SparkDsWriteInfo {
    pub size: i64,
    pub schema: *mut ArrowSchema,
    pub query_id: *const c_char,
    pub mode: i32,
    pub streaming: i32,
}

/// `SparkDsLibrary`: the function table, in the order of the header.
#[repr(C)]
pub struct SparkDsLibrary {
    pub size: i64,
    pub abi_version: i32,
    pub last_error: Option<unsafe extern "C" fn() -> *const c_char>,
    pub create: Option<
        unsafe extern "C" fn(
            info: *const SparkDsCreateInfo,
            capabilities: *mut u64,
            source: *mut *mut c_void,
        ) -> c_int,
    >,
    pub schema: Option<unsafe extern "C" fn(source: *mut c_void, out: *mut ArrowSchema) -> c_int>,
    pub create_reader: Option<
        unsafe extern "C" fn(
            source: *mut c_void,
            schema: *mut ArrowSchema,
            reader: *mut *mut c_void,
        ) -> c_int,
    >,
    pub create_stream_reader: Option<
        unsafe extern "C" fn(
            source: *mut c_void,
            schema: *mut ArrowSchema,
            reader: *mut *mut c_void,
        ) -> c_int,
    >,
    pub create_writer: Option<
        unsafe extern "C" fn(
            source: *mut c_void,
            info: *const SparkDsWriteInfo,
            writer: *mut *mut c_void,
        ) -> c_int,
    >,
    pub close: Option<unsafe extern "C" fn(source: *mut c_void)>,
    pub push_limit: Option<
        unsafe extern "C" fn(reader: *mut c_void, limit: i64, accepted: *mut c_int) -> c_int,
    >,
    pub prune_columns: Option<
        unsafe extern "C" fn(reader: *mut c_void, required_schema: *mut ArrowSchema) -> c_int,
    >,
    pub partitions: Option<
        unsafe extern "C" fn(reader: *mut c_void, add: SparkDsSink, sink: *mut c_void) -> c_int,
    >,
    pub serialize_reader: Option<
        unsafe extern "C" fn(reader: *mut c_void, add: SparkDsSink, sink: *mut c_void) -> c_int,
    >,
    pub close_reader: Option<unsafe extern "C" fn(reader: *mut c_void)>,
    pub initial_offset: Option<
        unsafe extern "C" fn(reader: *mut c_void, add: SparkDsSink, sink: *mut c_void) -> c_int,
    >,
    pub latest_offset: Option<
        unsafe extern "C" fn(
            reader: *mut c_void,
            start: *const u8,
            start_length: i64,
            add: SparkDsSink,
            sink: *mut c_void,
        ) -> c_int,
    >,
    pub stream_partitions: Option<
        unsafe extern "C" fn(
            reader: *mut c_void,
            start: *const u8,
            start_length: i64,
            end: *const u8,
            end_length: i64,
            add: SparkDsSink,
            sink: *mut c_void,
        ) -> c_int,
    >,
    pub serialize_stream_reader: Option<
        unsafe extern "C" fn(reader: *mut c_void, add: SparkDsSink, sink: *mut c_void) -> c_int,
    >,
    pub commit_offset:
        Option<unsafe extern "C" fn(reader: *mut c_void, end: *const u8, end_length: i64) -> c_int>,
    pub close_stream_reader: Option<unsafe extern "C" fn(reader: *mut c_void)>,
    pub read: Option<
        unsafe extern "C" fn(
            task: *const SparkDsTaskContext,
            reader_state: *const u8,
            reader_state_length: i64,
            partition: *const u8,
            partition_length: i64,
            out: *mut ArrowArrayStream,
        ) -> c_int,
    >,
    pub serialize_writer: Option<
        unsafe extern "C" fn(writer: *mut c_void, add: SparkDsSink, sink: *mut c_void) -> c_int,
    >,
    pub commit: Option<
        unsafe extern "C" fn(
            writer: *mut c_void,
            epoch_id: i64,
            messages: *const *const u8,
            message_lengths: *const i64,
            num_messages: i64,
        ) -> c_int,
    >,
    pub abort: Option<
        unsafe extern "C" fn(
            writer: *mut c_void,
            epoch_id: i64,
            messages: *const *const u8,
            message_lengths: *const i64,
            num_messages: i64,
        ) -> c_int,
    >,
    pub close_writer: Option<unsafe extern "C" fn(writer: *mut c_void)>,
    pub create_data_writer: Option<
        unsafe extern "C" fn(
            task: *const SparkDsTaskContext,
            writer_state: *const u8,
            writer_state_length: i64,
            epoch_id: i64,
            data_writer: *mut *mut c_void,
        ) -> c_int,
    >,
    pub write: Option<
        unsafe extern "C" fn(
            data_writer: *mut c_void,
            schema: *mut ArrowSchema,
            batch: *mut ArrowArray,
        ) -> c_int,
    >,
    pub commit_data_writer: Option<
        unsafe extern "C" fn(
            data_writer: *mut c_void,
            add: SparkDsSink,
            sink: *mut c_void,
        ) -> c_int,
    >,
    pub abort_data_writer: Option<unsafe extern "C" fn(data_writer: *mut c_void) -> c_int>,
    pub close_data_writer: Option<unsafe extern "C" fn(data_writer: *mut c_void)>,
}

/// `spark_ds_init`, the one exported function.
pub type SparkDsInitFunction =
    unsafe extern "C" fn(host: *const SparkDsHost, library: *mut *const SparkDsLibrary) -> c_int;
