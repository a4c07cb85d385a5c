//! The JNI library of the Spark JVM plugin (`jvm/`): it implements the native methods of
//! `dev.sparkds.spark.jni.Native`, which the plugin's Data Source V2 classes call to find, load
//! and run native data source libraries (`spark_datasource.h`).
//!
//! The contract is `Native.java`: handles are `long`s, schemas cross as Arrow IPC Schema
//! messages, batches as `long[]` descriptors of Arrow buffers in place ([`descriptor`]), errors
//! as `NativeDataSourceException`s with the specification's error classes ([`error`]). Each
//! step runs through sparkds's host ([`sparkds::steps`]), which checks the cheap rules of the
//! interface on every call; `SPARKDS_JNI_FULL_CHECKS=1` adds full validation of every batch.
//!
//! Nothing is printed on stdout: a library's log goes to `Native.log`, or to stderr without a
//! JVM.

pub mod build;
pub mod checksum;
pub mod descriptor;
pub mod discovery;
pub mod error;
mod exports;
pub mod ipc;
mod jvm;
pub mod loaded;
pub mod ops;
pub mod private_copy;
pub mod stamp;

use std::ffi::c_void;

use jni::sys::{jint, JNI_ERR, JNI_VERSION_1_8};
use jni::JavaVM;

/// Called by the JVM when it loads this library: remembers the VM and, while the plugin's class
/// loader is the one `FindClass` uses, the plugin's classes.
///
/// # Safety
///
/// Called by the JVM with its own `JavaVM`.
#[no_mangle]
pub unsafe extern "system" fn JNI_OnLoad(
    vm: *mut jni::sys::JavaVM,
    _reserved: *mut c_void,
) -> jint {
    let loaded = std::panic::catch_unwind(|| {
        // SAFETY: the JVM passes its own, valid `JavaVM`.
        let vm = unsafe { JavaVM::from_raw(vm) }.ok()?;
        let mut env = vm.get_env().ok()?;
        jvm::remember(&mut env);
        Some(())
    });
    match loaded {
        Ok(Some(())) => JNI_VERSION_1_8,
        _ => JNI_ERR,
    }
}

/// The log function given to the library of data source `library` (`SparkDsHost.log`):
/// `Native.log` in a JVM, stderr without one (never stdout).
pub fn library_log(library: &str) -> Option<sparkds::LogFunction> {
    let library = library.to_string();
    Some(Box::new(move |level, message| {
        jvm::log(&library, level, message);
    }))
}
