//! The value of a secret option, which shows as Spark's redaction text wherever it is
//! formatted. Which keys are secret is the rule of `spark_datasource_core::secret`, re-exported
//! here as [`is_secret_key`] and [`REDACTED`].

use std::fmt;

use serde::{Deserialize, Serialize};

pub use spark_datasource_core::secret::{is_secret_key, REDACTED};

/// The value of a secret option, from [`Options::secret`](crate::Options::secret). Its `Debug`
/// and `Display` show [`REDACTED`], so that a log line or an error message that formats it
/// shows no secret by accident; [`Secret::expose`] gives the value, where it is used.
///
/// It serializes as its value, so a reader or writer that keeps it carries it to the executors
/// in the bytes Spark sends them, as Spark sends its own sources' options.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// A secret holding `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself: pass it to what needs it (a connection, a signature), never to a
    /// message.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({REDACTED})")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_shows_only_the_redaction_text() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret}"), "*********(redacted)");
        assert_eq!(format!("{secret:?}"), "Secret(*********(redacted))");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn a_secret_serializes_as_its_value() -> serde_json::Result<()> {
        let bytes = serde_json::to_string(&Secret::new("hunter2"))?;
        assert_eq!(bytes, "\"hunter2\"");
        assert_eq!(serde_json::from_str::<Secret>(&bytes)?.expose(), "hunter2");
        Ok(())
    }
}
