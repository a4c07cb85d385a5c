//! The JVM side of the boundary: the cached `JavaVM` and classes, the guard of every native
//! method (panics and errors become Java exceptions), the upcalls (`Native.log`,
//! `TaskContext.isInterrupted()`), and conversions of arguments and results.
//!
//! Classes are cached while a native method of `Native` runs (or in `JNI_OnLoad`), because
//! `FindClass` then uses the plugin's class loader; on a thread that the JNI library attached,
//! it would use the system class loader, which does not see the plugin's jar.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use jni::objects::{
    GlobalRef, JByteArray, JClass, JLongArray, JObject, JObjectArray, JString, JValue,
};
use jni::signature::{Primitive, ReturnType};
use jni::sys::{jbyteArray, jlong, jlongArray, jobjectArray};
use jni::{JNIEnv, JavaVM};

use crate::error::{Error, ErrorClass, Result, EXCEPTION_CLASS};
use crate::ops::Interrupted;

const NATIVE_CLASS: &str = "dev/sparkds/spark/jni/Native";

static VM: OnceLock<JavaVM> = OnceLock::new();
/// The classes, or `None` when the first lookup did not find them (a test of the JNI library
/// alone): looked up once, not on every call.
static NATIVE: OnceLock<Option<GlobalRef>> = OnceLock::new();
static EXCEPTION: OnceLock<Option<GlobalRef>> = OnceLock::new();

/// Remembers the VM and the classes of the plugin, once, from a thread inside a native method
/// of `Native` (or `JNI_OnLoad`).
pub fn remember(env: &mut JNIEnv) {
    if VM.get().is_none() {
        if let Ok(vm) = env.get_java_vm() {
            let _ = VM.set(vm);
        }
    }
    for (cell, name) in [(&NATIVE, NATIVE_CLASS), (&EXCEPTION, EXCEPTION_CLASS)] {
        cell.get_or_init(|| match env.find_class(name) {
            Ok(class) => {
                let global = env.new_global_ref(&class).ok();
                let _ = env.delete_local_ref(class);
                global
            }
            // The fallbacks apply: stderr for the log, RuntimeException for the errors.
            Err(_) => {
                let _ = env.exception_clear();
                None
            }
        });
    }
}

/// Runs the body of a native method: remembers the VM, turns an error into its Java exception
/// and a panic into an `IllegalStateException`, and returns `default` in both cases. Nothing
/// unwinds into the JVM.
pub fn guard<T>(
    env: &mut JNIEnv,
    method: &str,
    default: T,
    body: impl FnOnce(&mut JNIEnv) -> Result<T>,
) -> T {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        remember(env);
        body(env)
    }));
    match outcome {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => {
            throw(env, &error);
            default
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            throw(
                env,
                &Error::new(
                    ErrorClass::IllegalState,
                    format!("the JNI library of the native data source plugin panicked in Native.{method}: {what}; this is a bug of the plugin, please report it"),
                ),
            );
            default
        }
    }
}

/// Throws `error` as its Java exception. A Java exception already pending (from a JNI call
/// that failed) is left as it is: it says more than a second one would.
pub fn throw(env: &mut JNIEnv, error: &Error) {
    if env.exception_check().unwrap_or(false) {
        return;
    }
    if let Some(class_name) = error.class.spec_name() {
        if throw_spec(env, class_name, &error.message).is_ok() {
            return;
        }
        let _ = env.exception_clear();
        let _ = env.throw_new("java/lang/RuntimeException", error.to_string());
        return;
    }
    let _ = env.throw_new(error.class.java_class(), &error.message);
}

fn throw_spec(env: &mut JNIEnv, class_name: &str, message: &str) -> jni::errors::Result<()> {
    let class = match EXCEPTION.get().and_then(Option::as_ref) {
        Some(global) => env.new_local_ref(global.as_obj())?,
        None => env.find_class(EXCEPTION_CLASS)?.into(),
    };
    let class = JClass::from(class);
    let error_class = env.new_string(class_name)?;
    let message = env.new_string(message)?;
    let exception = env.new_object(
        &class,
        "(Ljava/lang/String;Ljava/lang/String;)V",
        &[JValue::Object(&error_class), JValue::Object(&message)],
    )?;
    env.throw(jni::objects::JThrowable::from(exception))
}

/// Writes a message of a library to Spark's log through `Native.log`, from any thread (which is
/// attached as a daemon if it is not yet); to stderr when there is no JVM or no `Native` class,
/// as in a test of the JNI library alone. Never to stdout.
pub fn log(library: &str, level: i32, message: &str) {
    if log_to_java(library, level, message).is_err() {
        eprintln!("[native data source {library}] level {level}: {message}");
    }
}

fn log_to_java(library: &str, level: i32, message: &str) -> std::result::Result<(), ()> {
    let (Some(vm), Some(native)) = (VM.get(), NATIVE.get().and_then(Option::as_ref)) else {
        return Err(());
    };
    let mut env = vm.attach_current_thread_as_daemon().map_err(|_| ())?;
    if env.exception_check().unwrap_or(true) {
        // A call with an exception pending is illegal: this thread is between a failed JNI call
        // and its native method's return.
        return Err(());
    }
    let logged = env.with_local_frame(4, |env| -> jni::errors::Result<()> {
        let class = <&JClass>::from(native.as_obj());
        let library = env.new_string(library)?;
        let message = env.new_string(message)?;
        env.call_static_method(
            class,
            "log",
            "(Ljava/lang/String;ILjava/lang/String;)V",
            &[
                JValue::Object(&library),
                JValue::Int(level),
                JValue::Object(&message),
            ],
        )?;
        Ok(())
    });
    if logged.is_err() {
        let _ = env.exception_clear();
        return Err(());
    }
    Ok(())
}

/// The interruption check of a task: `taskContext.isInterrupted()` through a global reference,
/// released when the check is dropped (when the stream or the data writer closes). A null task
/// context is never interrupted.
pub fn interrupt_check(env: &mut JNIEnv, task_context: &JObject) -> Result<Interrupted> {
    if task_context.is_null() {
        return Ok(None);
    }
    let vm = env.get_java_vm().map_err(jni_error)?;
    let class = env.get_object_class(task_context).map_err(jni_error)?;
    let method = env
        .get_method_id(&class, "isInterrupted", "()Z")
        .map_err(|e| {
            let _ = env.exception_clear();
            Error::argument(format!(
                "the task context has no method isInterrupted()Z ({e}); pass Spark's TaskContext, or null"
            ))
        })?;
    let _ = env.delete_local_ref(class);
    let context = env.new_global_ref(task_context).map_err(jni_error)?;
    Ok(Some(Box::new(move || {
        let Ok(mut env) = vm.attach_current_thread_as_daemon() else {
            return false;
        };
        if env.exception_check().unwrap_or(true) {
            return false;
        }
        // SAFETY: `method` is isInterrupted()Z of the object's class, which takes no argument
        // and returns a boolean.
        let result = unsafe {
            env.call_method_unchecked(
                context.as_obj(),
                method,
                ReturnType::Primitive(Primitive::Boolean),
                &[],
            )
        };
        match result.and_then(|v| v.z()) {
            Ok(interrupted) => interrupted,
            Err(_) => {
                let _ = env.exception_clear();
                false
            }
        }
    })))
}

/// A failed JNI call: the JVM's exception, if one is pending, is what the caller sees.
pub fn jni_error(e: jni::errors::Error) -> Error {
    Error::new(ErrorClass::IllegalState, format!("a JNI call failed: {e}"))
}

/// A `String` argument; `what` names it when it is null.
pub fn string(env: &mut JNIEnv, value: &JString, what: &str) -> Result<String> {
    optional_string(env, value)?
        .ok_or_else(|| Error::argument(format!("{what} is null; pass a string")))
}

/// A `String` argument that may be null.
pub fn optional_string(env: &mut JNIEnv, value: &JString) -> Result<Option<String>> {
    if value.is_null() {
        return Ok(None);
    }
    let s: String = env.get_string(value).map_err(jni_error)?.into();
    Ok(Some(s))
}

/// A `String[]` argument; null is empty. A null element is an error naming `what`.
pub fn strings(env: &mut JNIEnv, array: &JObjectArray, what: &str) -> Result<Vec<String>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(array).map_err(jni_error)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let element = JString::from(env.get_object_array_element(array, i).map_err(jni_error)?);
        let value = optional_string(env, &element)?;
        let _ = env.delete_local_ref(element);
        out.push(
            value.ok_or_else(|| {
                Error::argument(format!("{what}[{i}] is null; pass strings only"))
            })?,
        );
    }
    Ok(out)
}

/// A `byte[]` argument that may be null.
pub fn optional_bytes(env: &mut JNIEnv, array: &JByteArray) -> Result<Option<Vec<u8>>> {
    if array.is_null() {
        return Ok(None);
    }
    env.convert_byte_array(array).map(Some).map_err(jni_error)
}

/// A `byte[]` argument; `what` names it when it is null.
pub fn bytes(env: &mut JNIEnv, array: &JByteArray, what: &str) -> Result<Vec<u8>> {
    optional_bytes(env, array)?
        .ok_or_else(|| Error::argument(format!("{what} is null; pass a byte array")))
}

/// A `byte[][]` argument whose elements may be null; null is empty.
pub fn byte_arrays(env: &mut JNIEnv, array: &JObjectArray) -> Result<Vec<Option<Vec<u8>>>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(array).map_err(jni_error)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let element = env.get_object_array_element(array, i).map_err(jni_error)?;
        let element = JByteArray::from(element);
        out.push(optional_bytes(env, &element)?);
        // Many partitions or messages: free each local reference as it is done.
        let _ = env.delete_local_ref(element);
    }
    Ok(out)
}

/// A `long[]` argument.
pub fn longs(env: &mut JNIEnv, array: &JLongArray, what: &str) -> Result<Vec<i64>> {
    if array.is_null() {
        return Err(Error::argument(format!("{what} is null; pass a long[]")));
    }
    let n = env.get_array_length(array).map_err(jni_error)?;
    let mut out = vec![0i64; n as usize];
    env.get_long_array_region(array, 0, &mut out)
        .map_err(jni_error)?;
    Ok(out)
}

/// A `byte[]` result; null for `None`.
pub fn new_bytes(env: &mut JNIEnv, bytes: Option<&[u8]>) -> Result<jbyteArray> {
    match bytes {
        None => Ok(std::ptr::null_mut()),
        Some(b) => Ok(env.byte_array_from_slice(b).map_err(jni_error)?.into_raw()),
    }
}

/// A `byte[][]` result.
pub fn new_byte_arrays(env: &mut JNIEnv, items: &[Vec<u8>]) -> Result<jobjectArray> {
    let array = env
        .new_object_array(items.len() as i32, "[B", JObject::null())
        .map_err(jni_error)?;
    for (i, item) in items.iter().enumerate() {
        let element = env.byte_array_from_slice(item).map_err(jni_error)?;
        env.set_object_array_element(&array, i as i32, &element)
            .map_err(jni_error)?;
        let _ = env.delete_local_ref(element);
    }
    Ok(array.into_raw())
}

/// A `String[]` result.
pub fn new_strings(env: &mut JNIEnv, items: &[&str]) -> Result<jobjectArray> {
    let array = env
        .new_object_array(items.len() as i32, "java/lang/String", JObject::null())
        .map_err(jni_error)?;
    for (i, item) in items.iter().enumerate() {
        let element = env.new_string(item).map_err(jni_error)?;
        env.set_object_array_element(&array, i as i32, &element)
            .map_err(jni_error)?;
        let _ = env.delete_local_ref(element);
    }
    Ok(array.into_raw())
}

/// A `long[]` result.
pub fn new_longs(env: &mut JNIEnv, values: &[i64]) -> Result<jlongArray> {
    let array = env.new_long_array(values.len() as i32).map_err(jni_error)?;
    env.set_long_array_region(&array, 0, values)
        .map_err(jni_error)?;
    Ok(array.into_raw())
}

/// Handles: boxed values behind a `long`, each tagged with its kind, so that a handle of
/// another kind, or 0, is an exception rather than a crash.
pub mod handles {
    use super::*;

    /// A kind of handle.
    pub trait Kind {
        const TAG: u64;
        const NOUN: &'static str;
    }

    #[repr(C)]
    struct Tagged<T> {
        tag: u64,
        value: T,
    }

    /// Boxes `value` as a handle.
    pub fn new<T: Kind>(value: T) -> jlong {
        Box::into_raw(Box::new(Tagged { tag: T::TAG, value })) as jlong
    }

    /// The value behind a handle.
    ///
    /// # Safety
    ///
    /// `handle` is 0 or was returned by [`new`] and not yet passed to [`close`]; it is used by
    /// one thread at a time.
    pub unsafe fn get<'a, T: Kind>(handle: jlong) -> Result<&'a mut T> {
        if handle == 0 {
            return Err(Error::argument(format!(
                "the {} handle is 0; pass the handle that its create method returned",
                T::NOUN
            )));
        }
        // SAFETY: the caller's contract; the tag is read first.
        let tagged = unsafe { &mut *(handle as *mut Tagged<T>) };
        if tagged.tag != T::TAG {
            return Err(Error::new(
                ErrorClass::IllegalState,
                format!(
                    "the handle {handle:#x} is not an open {} handle (closed, or of another kind)",
                    T::NOUN
                ),
            ));
        }
        Ok(&mut tagged.value)
    }

    /// Releases a handle; 0 is ignored.
    ///
    /// # Safety
    ///
    /// As [`get`]; the handle is not used afterwards.
    pub unsafe fn close<T: Kind>(handle: jlong) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { get::<T>(handle) }.map(|_| ()).or_else(|e| {
            if handle == 0 {
                Ok(())
            } else {
                Err(e)
            }
        })?;
        if handle == 0 {
            return Ok(());
        }
        // SAFETY: the handle is open and of kind T (checked above); the tag is cleared so that
        // a second close of the same address is refused while the memory is not reused.
        let mut boxed = unsafe { Box::from_raw(handle as *mut Tagged<T>) };
        boxed.tag = 0;
        drop(boxed);
        Ok(())
    }
}
