//! Options whose values are secrets, by Spark's rule: Spark redacts in plans, logs and its UI
//! the value of every option whose key matches `spark.sql.redaction.options.regex` (default
//! `(?i)url`) or `spark.redaction.regex` (default `(?i)secret|password|token|access[.]?key`).
//! Nothing built on these crates may show such a value either: the SDK's `Options` and
//! `Secret`, the host's messages, the JVM plugin and the Python bridge all follow this rule.

/// What Spark shows instead of a secret value (`Utils.REDACTION_REPLACEMENT_TEXT`).
pub const REDACTED: &str = "*********(redacted)";

/// The default values of Spark's two redaction settings, `spark.redaction.regex` and
/// `spark.sql.redaction.options.regex`, as Java regular expressions: what the Python bridge
/// matches keys with (a session may set others), and what [`is_secret_key`] implements.
pub const SPARK_REDACTION_PATTERNS: [&str; 2] =
    ["(?i)secret|password|token|access[.]?key", "(?i)url"];

/// Whether the value of the option `key` is a secret: `key` contains, in any case, one of
/// `url`, `secret`, `password`, `token`, `accesskey` or `access.key`.
///
/// These are the default patterns of Spark's two redaction settings
/// ([`SPARK_REDACTION_PATTERNS`]), matched anywhere in the key as Spark matches them
/// (`findFirstIn`): `jdbcUrl`, `client_secret`, `db.password`, `refresh_token` and
/// `fs.s3a.access.key` are secret. A session that sets other patterns makes more keys secret in
/// the JVM plugin, which reads them from the session; no key that these patterns find stops
/// being secret.
///
/// ```
/// use spark_datasource_core::is_secret_key;
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
}
