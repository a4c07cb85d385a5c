//! The panic guard of every exported function and Arrow callback, and `last_error`.
//!
//! A Rust panic must not cross the C interface: since Rust 1.81 it aborts the process, which
//! would kill a Spark executor. Every `extern "C"` function of this crate runs its body through
//! [`guard`] (or [`guard_close`] for the functions that cannot fail), which turns an error or a
//! caught panic into a non-zero return and a message for `last_error`.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use crate::datasource::{log, Error, Result};

// A panic can only be caught when panics unwind: refuse to build a library that would abort.
const _: () = assert!(
    cfg!(panic = "unwind"),
    "set `panic = \"unwind\"` in every profile: a panic must be caught, not abort Spark"
);

thread_local! {
    /// The message of the last failure on this thread, for `last_error`.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// Where the last panic on this thread happened, as the panic hook saw it: a caught
    /// panic's payload carries only its message.
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs, once, a panic hook that records where a panic happened before it unwinds to
/// [`catch`], then runs the hook that was there (which prints the panic, as Rust does). The hook
/// belongs to this library's copy of the Rust runtime, so other libraries in the process are
/// not affected; a connector that sets its own hook keeps it, and its panics are then reported
/// without their location.
fn record_panic_locations() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let location = info.location().map(|l| l.to_string());
            // A panic while the thread-local is torn down has nowhere to be recorded.
            let _ = PANIC_LOCATION.try_with(|slot| *slot.borrow_mut() = location);
            previous(info);
        }));
    });
}

/// Runs `body`, the logic of an exported function: returns 0 on success, and 1 with the message
/// kept for `last_error` on an error or a panic. The message does not name the function: the
/// host that called it does (`` `create` failed: ... ``), once.
#[inline(never)]
pub fn guard(body: impl FnOnce() -> Result<()>) -> c_int {
    match catch(body) {
        Ok(()) => 0,
        Err(error) => {
            set_last_error(&error.to_string());
            1
        }
    }
}

/// Runs `body` for a function that cannot fail, such as a close function: a panic is logged
/// through the host, since there is no way to report it.
#[inline(never)]
pub fn guard_close(function: &str, body: impl FnOnce()) {
    if let Err(error) = catch(|| {
        body();
        Ok(())
    }) {
        log::error(&format!("{function}: {error}"));
    }
}

/// Runs `body`, turning a panic into [`Error::Panic`] with its message and where it happened.
pub fn catch<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    record_panic_locations();
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| Err(panic_error(payload)))
}

fn panic_error(payload: Box<dyn Any + Send>) -> Error {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    let location = PANIC_LOCATION
        .try_with(|slot| slot.borrow_mut().take())
        .ok()
        .flatten();
    Error::Panic { message, location }
}

/// Keeps `message` for `last_error` on this thread.
pub fn set_last_error(message: &str) {
    // A NUL inside the message would end it early: replace it rather than fail.
    let message = CString::new(message.replace('\0', "\u{FFFD}")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = message);
}

/// `last_error`: the message of the last failure on the calling thread, valid until the next
/// failure on that thread.
///
/// # Safety
/// None: it only reads this thread's message.
pub unsafe extern "C" fn last_error() -> *const c_char {
    // Reading a thread-local cannot panic once it is initialized, but a guard costs nothing.
    catch(|| Ok(LAST_ERROR.with(|last| last.borrow().as_ptr()))).unwrap_or(c"".as_ptr())
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    fn last_message() -> String {
        // SAFETY: `last_error` returns this thread's NUL-terminated message.
        unsafe { CStr::from_ptr(last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_a_non_zero_return_with_its_message_and_where_it_happened() {
        let line = line!() + 1;
        let status = guard(|| panic!("boom"));
        assert_eq!(status, 1);
        assert_eq!(
            last_message(),
            format!("the data source panicked at {}:{line}:31: boom", file!())
        );
    }

    #[test]
    fn an_error_becomes_a_non_zero_return_with_its_message() {
        let status = guard(|| Err(Error::msg("no such file")));
        assert_eq!(status, 1);
        assert_eq!(last_message(), "no such file");
    }

    #[test]
    fn a_nul_inside_a_message_does_not_panic() {
        let status = guard(|| Err(Error::msg("bad\0byte")));
        assert_eq!(status, 1);
        assert_eq!(last_message(), "bad\u{FFFD}byte");
    }

    #[test]
    fn success_returns_zero() {
        assert_eq!(guard(|| Ok(())), 0);
    }

    #[test]
    fn a_panic_in_a_close_function_is_caught() {
        guard_close("close", || panic!("boom in close"));
    }
}
