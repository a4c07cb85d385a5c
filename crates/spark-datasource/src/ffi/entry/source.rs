//! `create`, `schema` and `close`: the data source itself, on the driver.

use std::ffi::{c_int, c_void, CStr};
use std::mem::{offset_of, size_of};

use super::Export;
use crate::datasource::{DataSource, Error, Options, Result};
use crate::ffi::guard::{guard, guard_close};
use crate::ffi::handle::{borrow, release, return_handle};
use crate::ffi::schema::export_schema;
use arrow_schema::ffi::FFI_ArrowSchema;
use spark_datasource_abi::v1::SparkDsCreateInfo;

/// `create`.
///
/// # Safety
/// As `create` of `spark_datasource.h`: `info` valid for the call, `capabilities` and
/// `source` valid for writes.
pub unsafe extern "C" fn create<S: DataSource, E: Export>(
    info: *const SparkDsCreateInfo,
    capabilities: *mut u64,
    source: *mut *mut c_void,
) -> c_int {
    // SAFETY: forwarded contract.
    guard(|| unsafe { create_body::<S, E>(info, capabilities, source) })
}

/// The body of [`create`].
///
/// # Safety
/// As [`create`].
unsafe fn create_body<S: DataSource, E: Export>(
    info: *const SparkDsCreateInfo,
    capabilities: *mut u64,
    source: *mut *mut c_void,
) -> Result<()> {
    // SAFETY: `info` is valid for the call (the caller's duty).
    let info = unsafe { info.as_ref() }.ok_or_else(|| Error::msg("the create info is NULL"))?;
    let needed = offset_of!(SparkDsCreateInfo, num_options) + size_of::<i64>();
    if info.size < needed as i64 {
        return Err(Error::msg(format!(
            "the create info is {} bytes, smaller than the {needed} of version 1",
            info.size
        )));
    }
    // SAFETY: the strings and arrays of `info` are valid for the call.
    let (name, options) = unsafe { read_create_info(info) }?;
    if capabilities.is_null() {
        return Err(Error::msg("the capabilities out-parameter is NULL"));
    }
    let value = S::create(&name, options)?;
    // SAFETY: `source` is valid for writes (the caller's duty).
    unsafe { return_handle("source", source, value) }?;
    // SAFETY: checked non-null above; valid for writes (the caller's duty).
    unsafe { capabilities.write(E::CAPABILITIES) };
    Ok(())
}

/// The name and the options of `info`.
///
/// # Safety
/// `info`'s strings are valid NUL-terminated strings and its arrays hold `num_options`
/// pointers, for the call.
unsafe fn read_create_info(info: &SparkDsCreateInfo) -> Result<(String, Options)> {
    // SAFETY: the caller's contract.
    let name = unsafe { utf8("data source name", info.name) }?;
    let count = usize::try_from(info.num_options)
        .map_err(|_| Error::msg(format!("num_options is negative: {}", info.num_options)))?;
    if count > 0 && (info.option_keys.is_null() || info.option_values.is_null()) {
        return Err(Error::msg("the option arrays are NULL"));
    }
    let mut entries = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: both arrays hold `count` valid string pointers (the caller's contract).
        let (key, value) = unsafe { (*info.option_keys.add(i), *info.option_values.add(i)) };
        // SAFETY: as above.
        entries.push(unsafe { (utf8("option key", key)?, utf8("option value", value)?) });
    }
    Ok((name, Options::new(entries)))
}

/// A borrowed C string as an owned `String`.
///
/// # Safety
/// `text` is null or a valid NUL-terminated string for the call.
unsafe fn utf8(what: &str, text: *const std::ffi::c_char) -> Result<String> {
    if text.is_null() {
        return Err(Error::msg(format!("the {what} is NULL")));
    }
    // SAFETY: non-null and NUL-terminated (the caller's contract).
    let text = unsafe { CStr::from_ptr(text) };
    text.to_str()
        .map(str::to_string)
        .map_err(|_| Error::msg(format!("the {what} is not valid UTF-8")))
}

/// `schema`.
///
/// # Safety
/// `source` is a live source handle; `out` is valid for writes.
pub unsafe extern "C" fn schema<S: DataSource>(
    source: *mut c_void,
    out: *mut FFI_ArrowSchema,
) -> c_int {
    guard(|| {
        // SAFETY: forwarded contract.
        let source = unsafe { borrow::<S>("source", source) }?;
        let schema = source.schema()?;
        // SAFETY: forwarded contract.
        unsafe { export_schema(&schema, out) }
    })
}

/// `close`.
///
/// # Safety
/// `source` is a source handle that is released only here, once.
pub unsafe extern "C" fn close<S: DataSource>(source: *mut c_void) {
    // SAFETY: forwarded contract.
    guard_close("close", || unsafe { release::<S>(source) });
}
