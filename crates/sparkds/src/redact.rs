//! Secret option values kept out of every message of the host: errors, logs and reports.
//!
//! An option is secret by Spark's rule, [`is_secret_key`] of `spark-datasource-core`, the
//! SDK's (its key contains `url`, `secret`, `password`, `token` or `access[.]key`, in any case).
//! The host shows its value as [`REDACTED`], as Spark does in plans and in its UI. A library may echo the options it was
//! given ("wrong password `hunter2`"), so every message that comes from a library (`last_error`,
//! a stream's `get_last_error`, its log) is scrubbed of every secret value that a `create` of
//! this process was given before anyone sees it.
//!
//! The values are kept for the life of the process, since a library may echo a secret long
//! after `create` (in a task, from a reader's state), at most [`KEPT`] of them, the latest.

use std::sync::{PoisonError, RwLock};

pub use spark_datasource_core::{is_secret_key, REDACTED};

/// How many distinct secret values are kept for scrubbing; the oldest go first.
pub const KEPT: usize = 1024;

/// The secret values given to libraries, oldest first.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// `value` as a message may show it: [`REDACTED`] when `key` is secret.
pub fn shown<'v>(key: &str, value: &'v str) -> &'v str {
    if is_secret_key(key) {
        REDACTED
    } else {
        value
    }
}

/// `options` as a report may show them: each secret value replaced by [`REDACTED`].
pub fn redacted(options: &[(String, String)]) -> Vec<(String, String)> {
    options
        .iter()
        .map(|(key, value)| (key.clone(), shown(key, value).to_string()))
        .collect()
}

/// Scrubs the values of the secret options of `options` from every later message, as
/// [`treat_as_secret`] does.
pub(crate) fn remember_options(options: &[(String, String)]) {
    treat_as_secret(
        options
            .iter()
            .filter(|(key, _)| is_secret_key(key))
            .map(|(_, value)| value.as_str()),
    );
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
        ]);
        assert_eq!(
            scrub("wrong password `sesame-9f1` for jdbc:pg://sesame-9f1@h, end 10"),
            "wrong password `*********(redacted)` for *********(redacted), end 10"
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
        ];
        assert_eq!(
            redacted(&options),
            [
                ("end".to_string(), "10".to_string()),
                ("api_token".to_string(), "*********(redacted)".to_string())
            ]
        );
    }
}
