//! Messages to Spark's log. Once Spark has loaded the library they go through the log function
//! of its `SparkDsHost`; before that (in unit tests, in a tool that calls the data source
//! directly) they go to standard error.
//!
//! This module only keeps where messages go: the C side of the crate plugs the host in when
//! `spark_ds_init` runs, so the safe API never depends on it.

use std::sync::OnceLock;

/// How important a message is: the levels of `SparkDsHost.log`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something failed.
    Error,
    /// Something looks wrong but the query goes on.
    Warn,
    /// What the data source is doing.
    Info,
    /// Details for the author of the data source.
    Debug,
}

/// Where messages go, once the host is known.
static ROUTE: OnceLock<fn(Level, &str)> = OnceLock::new();

/// Sends every later message to `write` (the first route set wins; it never changes).
pub(crate) fn route(write: fn(Level, &str)) {
    let _ = ROUTE.get_or_init(|| write);
}

/// Logs `message` at `level`.
pub fn log(level: Level, message: &str) {
    match ROUTE.get() {
        Some(write) => write(level, message),
        None => eprintln!("[{level:?}] {message}"),
    }
}

/// Logs an error.
pub fn error(message: &str) {
    log(Level::Error, message);
}

/// Logs a warning.
pub fn warn(message: &str) {
    log(Level::Warn, message);
}

/// Logs information.
pub fn info(message: &str) {
    log(Level::Info, message);
}

/// Logs a debugging message.
pub fn debug(message: &str) {
    log(Level::Debug, message);
}
