//! The one error of this crate: a message that says what was wrong (malformed filter bytes, a
//! filter the encoding cannot hold). The SDK turns it into its own error, whose message it is.

/// The result of the fallible functions of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error of this crate, with its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Error(String);

impl Error {
    /// An error with `message`.
    pub fn msg(message: impl Into<String>) -> Self {
        Error(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}
