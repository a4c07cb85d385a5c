//! The filter pushdown extension, `spark_datasource_filters.h`, version 1: its table and the type
//! of `spark_ds_filters_init`, which a library exports to opt in. The version-1 table of
//! `spark_datasource.h` is untouched: the extension is found through its own symbol. Like
//! [`crate::v1`], the layout is frozen: a later version only appends fields, and a host reads
//! only what the table's `size` covers.
//!
//! The predicates that `push_filters` receives are encoded as `spark-datasource-core`'s
//! `filters` module encodes them.

use std::ffi::{c_int, c_void};

use crate::v1::{Handle, SparkDsHost, SparkDsSink};

/// `SPARK_DS_FILTERS_VERSION`.
pub const SPARK_DS_FILTERS_VERSION: i32 = 1;

/// `push_filters` of [`SparkDsFilterTable`]: the reader receives the encoded filters and answers,
/// through `accepted`, one byte per filter.
pub type PushFilters = unsafe extern "C" fn(
    reader: Handle,
    filters: *const u8,
    length: i64,
    accepted: SparkDsSink,
    sink: *mut c_void,
) -> c_int;

/// `SparkDsFilterTable`.
#[repr(C)]
pub struct SparkDsFilterTable {
    /// `sizeof(SparkDsFilterTable)` of the library's version.
    pub size: i64,
    /// `SPARK_DS_FILTERS_VERSION` of the library.
    pub version: i32,
    /// Pushes filters to a batch reader; NULL when the library pushes none after all.
    pub push_filters: Option<PushFilters>,
}

/// `SparkDsFiltersInitFunction`: the type of `spark_ds_filters_init`.
pub type SparkDsFiltersInitFunction =
    unsafe extern "C" fn(host: *const SparkDsHost, table: *mut *const SparkDsFilterTable) -> c_int;
