//! The one error type of the data source: what Spark shows as `NATIVE_DATA_SOURCE_ERROR`.

use std::io;

use arrow_schema::ArrowError;

/// The result of every fallible function of the data source.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error that the data source reports to Spark. Its message is what the user reads: say
/// what was wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An option is missing, unknown or malformed.
    #[error("{0}")]
    Option(String),
    /// Any other failure, with its message.
    #[error("{0}")]
    Message(String),
    /// A failure of arrow-rs, such as a batch that does not match its schema.
    #[error(transparent)]
    Arrow(#[from] ArrowError),
    /// A failure of the file system or the network.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, and on which path.
        context: String,
        /// The error of the operating system.
        source: io::Error,
    },
    /// Bytes that Spark passed back (a partition, a state, an offset, a commit message) that
    /// this build of the library cannot read: they come from another build, or are corrupt.
    #[error("cannot read the {what} that Spark passed back: {source}")]
    Decode {
        /// What the bytes were.
        what: &'static str,
        /// Why they could not be read.
        source: serde_json::Error,
    },
    /// The task was killed, for example because its query was canceled.
    #[error("the task was killed: stopping")]
    Interrupted,
    /// Spark stopped reading the batches of a [`Producer`](super::Producer) (it has what it
    /// needs, or the task failed or was killed): the thread that produces them should return.
    #[error("Spark stopped reading: the read is cancelled")]
    Cancelled,
    /// Code of the data source panicked; the panic was caught at the interface. `location` is
    /// where it panicked (`src/connector/read.rs:42:9`), when the panic hook saw it.
    #[error("the data source panicked{}: {message}", .location.as_ref().map(|l| format!(" at {l}")).unwrap_or_default())]
    Panic {
        message: String,
        location: Option<String>,
    },
}

/// Malformed filter bytes, or a filter that the encoding cannot hold, or one that cannot be
/// evaluated on a batch (`spark-datasource-core` and `spark-datasource-eval`): its message.
impl From<spark_datasource_core::Error> for Error {
    fn from(error: spark_datasource_core::Error) -> Self {
        Error::Message(error.to_string())
    }
}

impl Error {
    /// An error with a message of your own.
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Message(message.into())
    }

    /// An I/O error, with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
