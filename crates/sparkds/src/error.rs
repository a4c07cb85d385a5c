//! The one error type of sparkds, and `Violation`, a broken rule of the interface (see
//! [`crate::rules`]).

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What can go wrong when sparkds loads and drives a library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The library broke a rule of the interface.
    #[error("{0}")]
    Violation(#[from] Violation),
    /// A function of the library failed, as the interface allows, with the message of
    /// `last_error` (Spark reports it as `NATIVE_DATA_SOURCE_ERROR`).
    #[error("`{function}`{} failed: {message}", context_suffix(.context))]
    Library {
        function: String,
        context: Option<String>,
        message: String,
    },
    /// The library ended the process while `function` ran (found by an isolated check).
    #[error(
        "`{function}` aborted the process ({how}): a panic or exception crossed the interface ({})",
        crate::rules::cite(9)
    )]
    Aborted { function: String, how: String },
    /// The library file could not be loaded.
    #[error("cannot load the library `{}`: {reason}", path.display())]
    Load { path: PathBuf, reason: String },
    /// The source does not declare what an operation needs.
    #[error("the source does not declare {capability}, which {operation} needs; use a source that declares it, or do not ask for {operation}")]
    NotSupported {
        capability: &'static str,
        operation: &'static str,
    },
    /// The caller gave something sparkds cannot use: the message names it and the fix.
    #[error("{0}")]
    Usage(String),
    /// An I/O operation of the host failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// The result of sparkds's functions.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A usage error: `message` names what was wrong and the fix.
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage(message.into())
    }

    /// An I/O error, with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The violation, when the error is one.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            Error::Violation(v) => Some(v),
            _ => None,
        }
    }
}

/// `n` and `noun`, plural when `n` is not 1: "1 null row", "2 null rows".
pub(crate) fn count(n: impl Into<i128>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn context_suffix(context: &Option<String>) -> String {
    context
        .as_ref()
        .map(|c| format!(" ({c})"))
        .unwrap_or_default()
}

/// A rule of the interface that a library broke, found while calling `function`.
///
/// It displays as "`read` (partition 1): batch 0, column `id`: array offset is 3; exported
/// arrays must have offset 0 (rule 13: offset 0 at every level; see
/// `<BOOK_URL>reference/rules.html#rule-13`)": the rule's number and title from
/// [`crate::rules::RULES`], and where the book explains it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct Violation {
    /// The function of the table (or of an Arrow struct) that was called.
    pub function: String,
    /// Where in the protocol, such as "partition 1".
    pub context: Option<String>,
    /// What was wrong, and what the rule asks.
    pub message: String,
    /// The number of the rule in [`crate::rules::RULES`].
    pub rule: u32,
}

impl Violation {
    pub(crate) fn new(function: impl Into<String>, rule: u32, message: impl Into<String>) -> Self {
        Violation {
            function: function.into(),
            context: None,
            message: message.into(),
            rule,
        }
    }

    pub(crate) fn within(mut self, context: Option<&str>) -> Self {
        if self.context.is_none() {
            self.context = context.map(str::to_string);
        }
        self
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}`{}: {} ({})",
            self.function,
            context_suffix(&self.context),
            self.message,
            crate::rules::cite(self.rule)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_violation_names_the_function_the_context_and_the_rule() {
        let v = Violation::new("read", 13, "batch 0, column `id`: array offset is 3")
            .within(Some("partition 1"));
        assert_eq!(
            v.to_string(),
            "`read` (partition 1): batch 0, column `id`: array offset is 3 (rule 13: offset 0 at every level; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-13)"
        );
    }

    #[test]
    fn an_aborted_process_names_rule_9_and_its_section() {
        let e = Error::Aborted {
            function: "get_next".into(),
            how: "signal 6".into(),
        };
        assert_eq!(
            e.to_string(),
            "`get_next` aborted the process (signal 6): a panic or exception crossed the interface (rule 9: no panic or exception crosses the interface; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-9)"
        );
    }

    #[test]
    fn a_library_error_names_the_function() {
        let e = Error::Library {
            function: "create".into(),
            context: None,
            message: "option `end` must be an integer, got `ten`".into(),
        };
        assert_eq!(
            e.to_string(),
            "`create` failed: option `end` must be an integer, got `ten`"
        );
    }
}
