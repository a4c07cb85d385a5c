//! A panic in the data source comes back from the exported function as a non-zero return
//! with its message in `last_error`, and a panic in a close function is logged through the
//! host: it never crosses into Spark, where it would abort the executor.

use std::ffi::{c_char, c_void, CStr};
use std::mem::size_of;
use std::sync::Mutex;

use arrow_schema::SchemaRef;

use crate::datasource::{DataSource, Options, Result};
use crate::ffi::entry::source;
use crate::ffi::entry::Export;
use crate::ffi::guard::last_error;
use crate::ffi::host;
use spark_datasource_abi::v1::{SparkDsCreateInfo, SparkDsHost};

/// What `export!` would generate for a source that declares batch reads.
struct ReadsInTests;

impl Export for ReadsInTests {
    const CAPABILITIES: u64 = spark_datasource_abi::v1::SPARK_DS_BATCH_READ;
}

/// A data source whose `create` panics, and whose value panics when dropped.
struct Panicking;

impl DataSource for Panicking {
    fn create(name: &str, _options: Options) -> Result<Self> {
        if name == "panic" {
            panic!("boom in create");
        }
        Ok(Panicking)
    }

    fn schema(&self) -> Result<SchemaRef> {
        panic!("boom in schema")
    }
}

impl Drop for Panicking {
    fn drop(&mut self) {
        panic!("boom in close");
    }
}

fn create_info(name: &CStr) -> SparkDsCreateInfo {
    SparkDsCreateInfo {
        size: size_of::<SparkDsCreateInfo>() as i64,
        name: name.as_ptr(),
        option_keys: std::ptr::null(),
        option_values: std::ptr::null(),
        num_options: 0,
    }
}

fn last_message() -> String {
    // SAFETY: `last_error` returns this thread's NUL-terminated message.
    unsafe { CStr::from_ptr(last_error()) }
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_panic_in_create_returns_non_zero_with_its_message() {
    let create: unsafe extern "C" fn(*const SparkDsCreateInfo, *mut u64, *mut *mut c_void) -> i32 =
        source::create::<Panicking, ReadsInTests>;
    let info = create_info(c"panic");
    let (mut capabilities, mut handle) = (0_u64, std::ptr::null_mut());
    // SAFETY: every pointer is valid for the call, as the header requires.
    let status = unsafe { create(&info, &mut capabilities, &mut handle) };
    assert_ne!(status, 0);
    // The message says where the connector panicked, as pgrx's guard does.
    assert_eq!(
        last_message(),
        format!(
            "the data source panicked at {}:31:13: boom in create",
            file!()
        )
    );
    assert!(handle.is_null(), "a failed create must not return a handle");
}

static LOGGED: Mutex<Vec<String>> = Mutex::new(Vec::new());

unsafe extern "C" fn collect(_context: *mut c_void, _level: i32, message: *const c_char) {
    // SAFETY: the host's log receives a NUL-terminated message for the call.
    let message = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    LOGGED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(message);
}

#[test]
fn a_panic_in_close_is_logged_through_the_host() {
    // The host outlives the library, as Spark's does: leaked for the rest of the process.
    let host: &'static SparkDsHost = Box::leak(Box::new(SparkDsHost {
        size: size_of::<SparkDsHost>() as i64,
        abi_version: 1,
        spark_version: c"4.4.0".as_ptr(),
        log: Some(collect),
        log_context: std::ptr::null_mut(),
    }));
    // SAFETY: the leaked host is valid for the life of the process.
    unsafe { host::install(host) };
    let info = create_info(c"fine");
    let (mut capabilities, mut handle) = (0_u64, std::ptr::null_mut());
    // SAFETY: every pointer is valid for the call.
    let status =
        unsafe { source::create::<Panicking, ReadsInTests>(&info, &mut capabilities, &mut handle) };
    assert_eq!(status, 0, "{}", last_message());
    // SAFETY: `handle` came from `create` and is closed once.
    unsafe { source::close::<Panicking>(handle) };
    let logged = LOGGED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(
        logged.iter().any(|m| *m
            == format!(
                "close: the data source panicked at {}:43:9: boom in close",
                file!()
            )),
        "{logged:?}"
    );
}
