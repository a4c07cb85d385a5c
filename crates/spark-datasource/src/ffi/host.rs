//! The `SparkDsHost` that `spark_ds_init` received, kept for the life of the library, and
//! the log function it provides, which `crate::log` routes its messages to.

use std::ffi::CString;
use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::datasource::log::{self, Level};

use spark_datasource_abi::v1::{
    SparkDsHost, SPARK_DS_LOG_DEBUG, SPARK_DS_LOG_ERROR, SPARK_DS_LOG_INFO, SPARK_DS_LOG_WARN,
};

/// The host, once `spark_ds_init` ran. The header guarantees that it stays valid until the
/// library is unloaded.
static HOST: AtomicPtr<SparkDsHost> = AtomicPtr::new(std::ptr::null_mut());

/// Keeps `host`, and sends the messages of `crate::log` to its log function.
///
/// # Safety
/// `host` is null, or valid until the library is unloaded, as the header guarantees for the
/// pointer that `spark_ds_init` receives.
pub(crate) unsafe fn install(host: *const SparkDsHost) {
    HOST.store(host.cast_mut(), Ordering::Release);
    log::route(write);
}

/// Writes `message` to Spark's log, or to standard error when the host has no log function.
fn write(level: Level, message: &str) {
    let host = HOST.load(Ordering::Acquire);
    // SAFETY: `install` only stores null or a host that stays valid while the library is
    // loaded; reading `size` first keeps the read of `log` within what the host provides.
    let log = unsafe { host.as_ref() }.and_then(|host| {
        let needed = offset_of!(SparkDsHost, log_context) + size_of::<*mut ()>();
        (host.size >= needed as i64).then_some((host.log, host.log_context))
    });
    match log {
        Some((Some(log), context)) => {
            let level = match level {
                Level::Error => SPARK_DS_LOG_ERROR,
                Level::Warn => SPARK_DS_LOG_WARN,
                Level::Info => SPARK_DS_LOG_INFO,
                Level::Debug => SPARK_DS_LOG_DEBUG,
            };
            // A NUL inside the message would end it early: replace it rather than panic.
            let text = CString::new(message.replace('\0', "\u{FFFD}")).unwrap_or_default();
            // SAFETY: the host's log function takes its own context and a NUL-terminated
            // UTF-8 string that it only borrows during the call; it is thread-safe.
            unsafe { log(context, level, text.as_ptr()) };
        }
        _ => eprintln!("[{level:?}] {message}"),
    }
}
