//! Secret option values kept out of every message of the host: errors, logs and reports.
//!
//! An option is secret by Spark's rule, [`is_secret_key`] of `spark-datasource-core`, the
//! SDK's (its key contains `url`, `secret`, `password`, `token` or `access[.]key`, in any case).
//! The host shows its [`secret_parts`] as [`REDACTED`]: the whole value, or, of a `url`, the
//! credentials it carries, so that a message still names the host that failed (Spark's plans
//! redact the whole value; that is Spark's to do). A library may echo the options it was given
//! ("wrong password `hunter2`"), so every message that comes from a library (`last_error`, a
//! stream's `get_last_error`, its log) is scrubbed of every secret part that a `create` of this
//! process was given before anyone sees it.
//!
//! The values are kept for the life of the process, since a library may echo a secret long
//! after `create` (in a task, from a reader's state), at most [`KEPT`] of them, the latest.

use std::sync::{PoisonError, RwLock};

pub use spark_datasource_core::{is_secret_key, secret_parts, REDACTED};

/// How many distinct secret values are kept for scrubbing; the oldest go first.
pub const KEPT: usize = 1024;

/// The secret values given to libraries, oldest first.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// `value` as a message may show it: each of its [`secret_parts`] as [`REDACTED`].
pub fn shown(key: &str, value: &str) -> String {
    spark_datasource_core::shown_value(key, value)
}

/// `options` as a report may show them: each secret value replaced by [`REDACTED`].
pub fn redacted(options: &[(String, String)]) -> Vec<(String, String)> {
    options
        .iter()
        .map(|(key, value)| (key.clone(), shown(key, value)))
        .collect()
}

/// Scrubs the [`secret_parts`] of `options` from every later message, as [`treat_as_secret`]
/// does.
pub(crate) fn remember_options(options: &[(String, String)]) {
    let parts: Vec<String> = options
        .iter()
        .flat_map(|(key, value)| secret_parts(key, value))
        .collect();
    treat_as_secret(parts.iter().map(String::as_str));
}

/// Scrubs `values` from every later message of a library, as if they were the values of
/// secret options: for a host whose rule finds more secrets than [`is_secret_key`], such as a
/// Spark session with its own `spark.redaction.regex`. Empty values are ignored.
pub fn treat_as_secret<'a>(values: impl IntoIterator<Item = &'a str>) {
    let mut fresh: Vec<&str> = values.into_iter().filter(|v| !v.is_empty()).collect();
    if fresh.is_empty() {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(PoisonError::into_inner);
    fresh.retain(|value| !secrets.iter().any(|kept| kept == value));
    if fresh.is_empty() {
        return;
    }
    secrets.extend(fresh.into_iter().map(str::to_string));
    if secrets.len() > KEPT {
        let excess = secrets.len() - KEPT;
        secrets.drain(..excess);
    }
}

/// `message` with every secret value that a library was given replaced by [`REDACTED`].
pub fn scrub(message: &str) -> String {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    let mut longest_first: Vec<&String> = secrets
        .iter()
        .filter(|secret| message.contains(secret.as_str()))
        .collect();
    if longest_first.is_empty() {
        return message.to_string();
    }
    // Longest first, so that a value that holds another is replaced whole.
    longest_first.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    let mut scrubbed = message.to_string();
    for secret in longest_first {
        scrubbed = scrubbed.replace(secret.as_str(), REDACTED);
    }
    scrubbed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_loses_every_secret_value_it_repeats() {
        remember_options(&[
            ("end".into(), "10".into()),
            ("Password".into(), "sesame-9f1".into()),
            ("jdbcUrl".into(), "jdbc:pg://sesame-9f1@h".into()),
            ("url".into(), "https://api.example.org/v2".into()),
        ]);
        assert_eq!(
            scrub("wrong password `sesame-9f1` for jdbc:pg://sesame-9f1@h, end 10"),
            "wrong password `*********(redacted)` for jdbc:pg://*********(redacted)@h, end 10"
        );
        // A URL without credentials names the host that failed.
        assert_eq!(
            scrub("https://api.example.org/v2 answered 503"),
            "https://api.example.org/v2 answered 503"
        );
    }

    #[test]
    fn a_value_given_by_the_host_is_scrubbed_too() {
        treat_as_secret(["pin-4417", ""]);
        assert_eq!(scrub("pin pin-4417"), "pin *********(redacted)");
        assert_eq!(scrub(""), "");
    }

    #[test]
    fn an_option_shows_its_value_unless_its_key_is_secret() {
        let options = [
            ("end".into(), "10".into()),
            ("api_token".into(), "t-1".into()),
            ("url".into(), "https://me:pw@h/".into()),
        ];
        assert_eq!(
            redacted(&options),
            [
                ("end".to_string(), "10".to_string()),
                ("api_token".to_string(), "*********(redacted)".to_string()),
                (
                    "url".to_string(),
                    "https://*********(redacted)@h/".to_string()
                )
            ]
        );
    }
}
