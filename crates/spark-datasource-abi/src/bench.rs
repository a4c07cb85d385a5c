//! `spark_ds_bench_v1`: the in-process reference of `cargo sparkds bench`, a function that the
//! SDK's `export!` emits next to `spark_ds_init`. It is not part of `spark_datasource.h` and
//! Spark never calls it: the bench looks it up to run the task side of a read or of a write
//! through the connector's traits directly, and compares it with the same task through the C
//! interface.
//!
//! The call is versioned by the name: a change of [`SparkDsBenchCall`] gets a new name
//! (`spark_ds_bench_v2`), and a host that does not find the name it knows measures no
//! reference. Its layout is frozen like [`crate::v1`]'s (the crate's tests).

use std::ffi::{c_int, c_void};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;

use crate::v1::SparkDsSink;

/// `kind` of a call: read the partition `partition` with the reader `state`.
pub const SPARK_DS_BENCH_READ: i32 = 1;
/// `kind` of a call: run a data writer of the writer `state` over the batches of `input`.
pub const SPARK_DS_BENCH_WRITE: i32 = 2;

/// The name of the function, NUL-terminated, as a loader looks it up.
pub const SPARK_DS_BENCH_SYMBOL: &[u8] = b"spark_ds_bench_v1\0";

/// The argument of `spark_ds_bench_v1`: what to run, and what it counted.
#[repr(C)]
pub struct SparkDsBenchCall {
    /// `sizeof(SparkDsBenchCall)` of version 1.
    pub size: i64,
    /// `SPARK_DS_BENCH_READ` or `SPARK_DS_BENCH_WRITE`.
    pub kind: i32,
    /// The stage of the task.
    pub stage_id: i32,
    /// The partition of the task.
    pub partition_id: i32,
    /// The attempt of the task.
    pub attempt_number: i32,
    /// The task attempt id.
    pub task_id: i64,
    /// The bytes of `serialize_reader`, `serialize_stream_reader` or `serialize_writer`.
    pub state: *const u8,
    /// The length of `state`.
    pub state_length: i64,
    /// Read: the partition's bytes, as `read` receives them.
    pub partition: *const u8,
    /// The length of `partition`.
    pub partition_length: i64,
    /// Write: the epoch, or `SPARK_DS_NO_EPOCH` for a batch write.
    pub epoch_id: i64,
    /// Write: the batches to write, pulled outside of the measured time; the call releases it.
    pub input: *mut FFI_ArrowArrayStream,
    /// Write: receives the commit message of the data writer.
    pub add: Option<SparkDsSink>,
    /// The first argument of `add`.
    pub sink: *mut c_void,
    /// Out: the rows read or written.
    pub rows: i64,
    /// Out: the batches read or written.
    pub batches: i64,
    /// Out: the bytes of Arrow buffers read or written.
    pub bytes: i64,
    /// Out: the nanoseconds spent in the connector's code (for a write, without the pulls of
    /// `input`).
    pub nanos: i64,
}

impl SparkDsBenchCall {
    /// A call of `kind` for one task (its stage, partition, attempt and id), with the serialized
    /// reader or writer `state` (borrowed: it must outlive the call), in no epoch, with no
    /// partition, input or sink yet and every count at 0.
    pub fn new(kind: i32, task: [i32; 3], task_id: i64, state: Option<&[u8]>) -> Self {
        let (state, state_length) =
            state.map_or((std::ptr::null(), 0), |s| (s.as_ptr(), s.len() as i64));
        let [stage_id, partition_id, attempt_number] = task;
        SparkDsBenchCall {
            size: std::mem::size_of::<SparkDsBenchCall>() as i64,
            kind,
            stage_id,
            partition_id,
            attempt_number,
            task_id,
            state,
            state_length,
            partition: std::ptr::null(),
            partition_length: 0,
            epoch_id: crate::v1::SPARK_DS_NO_EPOCH,
            input: std::ptr::null_mut(),
            add: None,
            sink: std::ptr::null_mut(),
            rows: 0,
            batches: 0,
            bytes: 0,
            nanos: 0,
        }
    }
}

/// The type of `spark_ds_bench_v1`.
pub type SparkDsBenchFunction = unsafe extern "C" fn(call: *mut SparkDsBenchCall) -> c_int;
