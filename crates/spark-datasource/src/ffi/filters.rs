//! The filter pushdown extension, `spark_datasource_filters.h`: the mirror of its table, the
//! table that `export!` builds when it names `push_filters`, and the body of
//! `spark_ds_filters_init`. The version-1 table of `spark_datasource.h` is untouched: the
//! extension is found through its own symbol.

use std::ffi::{c_int, c_void};
use std::mem::size_of;

use super::entry::push_filters;
use super::guard::guard;
use super::header::{SparkDsHost, SparkDsSink};
use crate::datasource::{BatchRead, Error};
use crate::filters::FILTERS_VERSION;

/// `SparkDsFilterTable`.
#[repr(C)]
pub struct SparkDsFilterTable {
    pub size: i64,
    pub version: i32,
    pub push_filters: Option<
        unsafe extern "C" fn(
            reader: *mut c_void,
            filters: *const u8,
            length: i64,
            accepted: SparkDsSink,
            sink: *mut c_void,
        ) -> c_int,
    >,
}

/// `SparkDsFiltersInitFunction`: the type of `spark_ds_filters_init`.
pub type SparkDsFiltersInitFunction =
    unsafe extern "C" fn(host: *const SparkDsHost, table: *mut *const SparkDsFilterTable) -> c_int;

/// The extension's table of a batch-read source.
pub const fn filter_table<S: BatchRead>() -> SparkDsFilterTable {
    SparkDsFilterTable {
        size: size_of::<SparkDsFilterTable>() as i64,
        version: FILTERS_VERSION,
        push_filters: Some(push_filters::push_filters::<S>),
    }
}

/// The body of `spark_ds_filters_init`: returns `table`. The host was kept by `spark_ds_init`,
/// which the header has the host call first.
///
/// # Safety
/// `table_out` is null or valid for writes of a pointer.
pub unsafe fn filters_init(
    table: &'static SparkDsFilterTable,
    _host: *const SparkDsHost,
    table_out: *mut *const SparkDsFilterTable,
) -> c_int {
    guard(|| {
        if table_out.is_null() {
            return Err(Error::msg("the table out-parameter is NULL"));
        }
        // SAFETY: non-null and valid for writes (the caller's contract).
        unsafe { table_out.write(table) };
        Ok(())
    })
}
