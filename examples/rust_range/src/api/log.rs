//! Messages to Spark's log, through the log function of `SparkDsHost`. Before Spark loaded the
//! library (in unit tests) they go to standard error.

use crate::abi::host;

/// Logs an error.
pub fn error(message: &str) {
    host::log(host::Level::Error, message);
}

/// Logs a warning.
pub fn warn(message: &str) {
    host::log(host::Level::Warn, message);
}

/// Logs information.
pub fn info(message: &str) {
    host::log(host::Level::Info, message);
}

/// Logs a debugging message.
pub fn debug(message: &str) {
    host::log(host::Level::Debug, message);
}
