//! Handles: the `void*` that create functions return and close functions release. Each is a
//! leaked `Box` of the Rust value, released exactly once by its close function.

use std::ffi::c_void;

use crate::datasource::{Error, Result};

/// Leaks `value` as a handle for the host.
pub fn into_handle<T>(value: T) -> *mut c_void {
    Box::into_raw(Box::new(value)).cast()
}

/// Writes `value`, as a handle, to the out-parameter `out`.
///
/// # Safety
/// `out` is null or valid for writes of a pointer.
pub unsafe fn return_handle<T>(what: &str, out: *mut *mut c_void, value: T) -> Result<()> {
    if out.is_null() {
        return Err(Error::msg(format!("the {what} out-parameter is NULL")));
    }
    // SAFETY: `out` is non-null and valid for writes (the caller's duty). The value is only
    // leaked once the write can happen, so a failure leaks nothing.
    unsafe { out.write(into_handle(value)) };
    Ok(())
}

/// The value behind a handle, borrowed for the call.
///
/// # Safety
/// `handle` is null or a handle of a `T` that `into_handle` made and that is not closed yet,
/// used by one thread at a time.
pub unsafe fn borrow<'a, T>(what: &str, handle: *mut c_void) -> Result<&'a mut T> {
    // SAFETY: the caller's contract.
    unsafe { handle.cast::<T>().as_mut() }
        .ok_or_else(|| Error::msg(format!("the {what} handle is NULL")))
}

/// Releases a handle of a `T`; a null handle is ignored.
///
/// # Safety
/// `handle` is null or a handle of a `T` that `into_handle` made, released only here, once.
pub unsafe fn release<T>(handle: *mut c_void) {
    if !handle.is_null() {
        // SAFETY: the caller's contract: this is the one release of the box.
        drop(unsafe { Box::from_raw(handle.cast::<T>()) });
    }
}
