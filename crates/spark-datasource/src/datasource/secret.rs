//! Options whose values are secrets, by Spark's rule: Spark redacts in plans, logs and its UI
//! the value of every option whose key matches `spark.sql.redaction.options.regex` (default
//! `(?i)url`) or `spark.redaction.regex` (default `(?i)secret|password|token|access[.]?key`).
//! Nothing built on this crate may show such a value either.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What Spark shows instead of a secret value (`Utils.REDACTION_REPLACEMENT_TEXT`).
pub const REDACTED: &str = "*********(redacted)";

/// Whether the value of the option `key` is a secret: `key` contains, in any case, one of
/// `url`, `secret`, `password`, `token`, `accesskey` or `access.key`.
///
/// These are the default patterns of Spark's two redaction settings, matched anywhere in the
/// key as Spark matches them (`findFirstIn`): `jdbcUrl`, `client_secret`, `db.password`,
/// `refresh_token` and `fs.s3a.access.key` are secret. A session that sets other patterns makes
/// more keys secret in the JVM plugin, which reads them from the session; no key that these
/// patterns find stops being secret.
///
/// ```
/// use spark_datasource::is_secret_key;
///
/// assert!(is_secret_key("Password"));
/// assert!(is_secret_key("fs.s3a.access.key"));
/// assert!(!is_secret_key("end"));
/// ```
pub fn is_secret_key(key: &str) -> bool {
    // `(?i)` of a Java regex without UNICODE_CASE folds ASCII letters only, as this does.
    let key = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| key.contains(word))
}

/// What `(?i)url` and `(?i)secret|password|token|access[.]?key` match.
const SECRET_WORDS: [&str; 6] = [
    "url",
    "secret",
    "password",
    "token",
    "accesskey",
    "access.key",
];

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
    fn a_key_is_secret_when_it_matches_sparks_default_patterns_anywhere() {
        for key in [
            "url",
            "jdbcUrl",
            "client_SECRET",
            "db.password",
            "refresh_token",
            "fs.s3a.access.key",
            "AccessKey",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in ["end", "path", "user", "access_key", "tokn", ""] {
            assert!(!is_secret_key(key), "{key}");
        }
    }

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
