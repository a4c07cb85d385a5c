//! A frozen mirror of version 1 of `spark_datasource.h`: the Arrow C data interface structs, the
//! structs that the host passes, and the function table, `SparkDsLibrary`.
//!
//! It is written by hand rather than generated, on purpose: conformance rule 2 asks for a frozen
//! copy of the v1 layout, so that a later header can still be tested against a v1 library. Every
//! function pointer is an `Option`, because a library leaves the functions it does not implement
//! NULL, and the host reads only what fits in the table's `size` (see `library`).
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_char, c_int, c_void};

use spark_datasource_core::capabilities::FUNCTIONS;

/// `SPARK_DS_ABI_VERSION`: the only version this host supports.
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

/// `struct ArrowSchema` of the Arrow C data interface.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    pub format: *const c_char,
    pub name: *const c_char,
    pub metadata: *const c_char,
    pub flags: i64,
    pub n_children: i64,
    pub children: *mut *mut ArrowSchema,
    pub dictionary: *mut ArrowSchema,
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub private_data: *mut c_void,
}

/// `struct ArrowArray` of the Arrow C data interface.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    pub length: i64,
    pub null_count: i64,
    pub offset: i64,
    pub n_buffers: i64,
    pub n_children: i64,
    pub buffers: *mut *const c_void,
    pub children: *mut *mut ArrowArray,
    pub dictionary: *mut ArrowArray,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub private_data: *mut c_void,
}

/// `struct ArrowArrayStream` of the Arrow C stream interface.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    pub get_schema: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int>,
    pub get_next: Option<unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int>,
    pub get_last_error: Option<unsafe extern "C" fn(*mut ArrowArrayStream) -> *const c_char>,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArrayStream)>,
    pub private_data: *mut c_void,
}

impl ArrowSchema {
    /// A released struct, for the library to fill.
    pub fn empty() -> Self {
        Self {
            format: std::ptr::null(),
            name: std::ptr::null(),
            metadata: std::ptr::null(),
            flags: 0,
            n_children: 0,
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

impl ArrowArray {
    /// A released struct, for the library to fill.
    pub fn empty() -> Self {
        Self {
            length: 0,
            null_count: 0,
            offset: 0,
            n_buffers: 0,
            n_children: 0,
            buffers: std::ptr::null_mut(),
            children: std::ptr::null_mut(),
            dictionary: std::ptr::null_mut(),
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

impl ArrowArrayStream {
    /// A released struct, for the library to fill.
    pub fn empty() -> Self {
        Self {
            get_schema: None,
            get_next: None,
            get_last_error: None,
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }
}

/// `SparkDsSink`.
pub type Sink = unsafe extern "C" fn(sink: *mut c_void, data: *const u8, length: i64);

/// `SparkDsHost`.
#[repr(C)]
pub struct SparkDsHost {
    pub size: i64,
    pub abi_version: i32,
    pub spark_version: *const c_char,
    pub log: Option<unsafe extern "C" fn(*mut c_void, i32, *const c_char)>,
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
    pub is_interrupted: Option<unsafe extern "C" fn(*const SparkDsTaskContext) -> c_int>,
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

/// `SparkDsInitFunction`: the type of `spark_ds_init`.
pub type InitFunction =
    unsafe extern "C" fn(host: *const SparkDsHost, library: *mut *const SparkDsLibrary) -> c_int;

type Handle = *mut c_void;

/// `SparkDsLibrary`, version 1, in the order of the header.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SparkDsLibrary {
    pub size: i64,
    pub abi_version: i32,
    pub last_error: Option<unsafe extern "C" fn() -> *const c_char>,
    pub create:
        Option<unsafe extern "C" fn(*const SparkDsCreateInfo, *mut u64, *mut Handle) -> c_int>,
    pub schema: Option<unsafe extern "C" fn(Handle, *mut ArrowSchema) -> c_int>,
    pub create_reader: Option<unsafe extern "C" fn(Handle, *mut ArrowSchema, *mut Handle) -> c_int>,
    pub create_stream_reader:
        Option<unsafe extern "C" fn(Handle, *mut ArrowSchema, *mut Handle) -> c_int>,
    pub create_writer:
        Option<unsafe extern "C" fn(Handle, *const SparkDsWriteInfo, *mut Handle) -> c_int>,
    pub close: Option<unsafe extern "C" fn(Handle)>,
    pub push_limit: Option<unsafe extern "C" fn(Handle, i64, *mut c_int) -> c_int>,
    pub prune_columns: Option<unsafe extern "C" fn(Handle, *mut ArrowSchema) -> c_int>,
    pub partitions: Option<unsafe extern "C" fn(Handle, Sink, *mut c_void) -> c_int>,
    pub serialize_reader: Option<unsafe extern "C" fn(Handle, Sink, *mut c_void) -> c_int>,
    pub close_reader: Option<unsafe extern "C" fn(Handle)>,
    pub initial_offset: Option<unsafe extern "C" fn(Handle, Sink, *mut c_void) -> c_int>,
    pub latest_offset:
        Option<unsafe extern "C" fn(Handle, *const u8, i64, Sink, *mut c_void) -> c_int>,
    pub stream_partitions: Option<
        unsafe extern "C" fn(Handle, *const u8, i64, *const u8, i64, Sink, *mut c_void) -> c_int,
    >,
    pub serialize_stream_reader: Option<unsafe extern "C" fn(Handle, Sink, *mut c_void) -> c_int>,
    pub commit_offset: Option<unsafe extern "C" fn(Handle, *const u8, i64) -> c_int>,
    pub close_stream_reader: Option<unsafe extern "C" fn(Handle)>,
    pub read: Option<
        unsafe extern "C" fn(
            *const SparkDsTaskContext,
            *const u8,
            i64,
            *const u8,
            i64,
            *mut ArrowArrayStream,
        ) -> c_int,
    >,
    pub serialize_writer: Option<unsafe extern "C" fn(Handle, Sink, *mut c_void) -> c_int>,
    pub commit:
        Option<unsafe extern "C" fn(Handle, i64, *const *const u8, *const i64, i64) -> c_int>,
    pub abort:
        Option<unsafe extern "C" fn(Handle, i64, *const *const u8, *const i64, i64) -> c_int>,
    pub close_writer: Option<unsafe extern "C" fn(Handle)>,
    pub create_data_writer: Option<
        unsafe extern "C" fn(*const SparkDsTaskContext, *const u8, i64, i64, *mut Handle) -> c_int,
    >,
    pub write: Option<unsafe extern "C" fn(Handle, *mut ArrowSchema, *mut ArrowArray) -> c_int>,
    pub commit_data_writer: Option<unsafe extern "C" fn(Handle, Sink, *mut c_void) -> c_int>,
    pub abort_data_writer: Option<unsafe extern "C" fn(Handle) -> c_int>,
    pub close_data_writer: Option<unsafe extern "C" fn(Handle)>,
}

/// The smallest `size` a v1 table may declare: up to and including `read` (the header: "at
/// least up to `read`"; the Rust example of the specification stops there).
pub const MIN_TABLE_SIZE: usize =
    std::mem::offset_of!(SparkDsLibrary, read) + std::mem::size_of::<usize>();

impl SparkDsLibrary {
    /// A table with every function NULL, which `library` overwrites with what fits in `size`.
    pub fn empty() -> Self {
        // SAFETY: every field is an integer or an `Option` of a function pointer, for which
        // all-zero bytes are 0 and `None`.
        unsafe { std::mem::zeroed() }
    }
}

impl SparkDsLibrary {
    /// Whether each function of the table is set (not NULL), in the order of
    /// `spark_datasource_core::capabilities::FUNCTIONS`, which names them.
    pub fn set_functions(&self) -> [bool; FUNCTIONS.len()] {
        // From the whole table's address, so that the pointer may read every field after
        // `last_error`, not that field alone.
        let table = (self as *const Self).cast::<u8>();
        // SAFETY: the fields from `last_error` on are `FUNCTIONS.len()` nullable function
        // pointers, one after the other to the end of the `repr(C)` table (the assertion
        // below), inside `*self`; each is read as the address it holds, 0 for NULL (`Option` of
        // a function pointer is a nullable pointer of a pointer's size and alignment).
        std::array::from_fn(|i| unsafe {
            let first = table.add(std::mem::offset_of!(Self, last_error));
            *first.cast::<usize>().add(i) != 0
        })
    }
}

// `set_functions` reads the functions as one array of pointers.
const _: () = assert!(
    std::mem::size_of::<SparkDsLibrary>()
        == std::mem::offset_of!(SparkDsLibrary, last_error)
            + FUNCTIONS.len() * std::mem::size_of::<usize>()
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_v1_table_has_the_layout_of_the_header() {
        let word = std::mem::size_of::<usize>();
        assert_eq!(
            std::mem::offset_of!(SparkDsLibrary, last_error),
            2 * word.max(8)
        );
        assert_eq!(
            std::mem::offset_of!(SparkDsLibrary, read),
            2 * 8 + 18 * word
        );
        assert_eq!(std::mem::size_of::<SparkDsLibrary>(), 2 * 8 + 28 * word);
        assert_eq!(MIN_TABLE_SIZE, 2 * 8 + 19 * word);
    }

    #[test]
    fn the_host_structs_have_the_layout_of_the_header() {
        assert_eq!(std::mem::size_of::<ArrowSchema>(), 72);
        assert_eq!(std::mem::size_of::<ArrowArray>(), 80);
        assert_eq!(std::mem::size_of::<ArrowArrayStream>(), 40);
        assert_eq!(std::mem::offset_of!(SparkDsTaskContext, stage_id), 32);
        assert_eq!(std::mem::size_of::<SparkDsWriteInfo>(), 32);
    }
}
