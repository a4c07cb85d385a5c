//! The filter pushdown extension, `spark_datasource_filters.h`: the table that `export!` builds
//! when it names `push_filters` (declared in `spark-datasource-abi`), and the body of
//! `spark_ds_filters_init`. The version-1 table of `spark_datasource.h` is untouched: the
//! extension is found through its own symbol.

use std::ffi::c_int;
use std::mem::size_of;

use super::entry::push_filters;
use super::guard::guard;
use crate::datasource::{BatchRead, Error};
use crate::filters::FILTERS_VERSION;
use spark_datasource_abi::filters::SparkDsFilterTable;
use spark_datasource_abi::v1::SparkDsHost;

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
