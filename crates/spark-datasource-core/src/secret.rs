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

/// The parts of the value of option `key` that no message of a host may show, beside Spark's
/// plans (which redact every secret option's value whole, by Spark's rule):
///
/// - the whole value of a key with `secret`, `password`, `token` or `access[.]key` in it;
/// - of a key with `url` in it, the credentials the URL carries: its user information
///   (`user:password@`), the password alone (as written and percent-decoded), and the values of
///   parameters whose names are secret (`?password=...`, JDBC's `;password=...`), so that a
///   message still names the host that failed; the whole value when it is not a URL
///   (no `://`);
/// - nothing of any other key.
///
/// ```
/// use spark_datasource_core::secret::secret_parts;
///
/// assert_eq!(secret_parts("token", "abc"), ["abc"]);
/// assert!(secret_parts("url", "https://api.example.com/v1").is_empty());
/// assert_eq!(
///     secret_parts("url", "postgresql://me:p%40ss@db/shop"),
///     ["me:p%40ss", "me:p@ss", "p%40ss", "p@ss"]
/// );
/// assert_eq!(secret_parts("jdbcUrl", "jdbc:postgresql://db/shop?user=me&password=s3cret"), ["s3cret"]);
/// ```
pub fn secret_parts(key: &str, value: &str) -> Vec<String> {
    if value.is_empty() || !is_secret_key(key) {
        return Vec::new();
    }
    if is_secret_word_key(key) {
        return vec![value.to_string()];
    }
    url_credentials(value).unwrap_or_else(|| vec![value.to_string()])
}

/// `value` of option `key` as a message may show it: with each of its [`secret_parts`]
/// replaced by [`REDACTED`] (the whole value for a secret key, the credentials of a URL).
pub fn shown_value(key: &str, value: &str) -> String {
    let mut parts = secret_parts(key, value);
    // Longest first, so that no part of a longer secret survives a shorter one.
    parts.sort_by_key(|part| std::cmp::Reverse(part.len()));
    parts.iter().fold(value.to_string(), |shown, part| {
        shown.replace(part.as_str(), REDACTED)
    })
}

/// The fewest characters of a URL's password or secret parameter that messages are scrubbed of
/// on its own (the URL's whole user information always is).
const MIN_SCRUBBED: usize = 4;

/// Whether `key` is secret by a word other than `url`: its value is a secret whole.
fn is_secret_word_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_WORDS[1..].iter().any(|word| key.contains(word))
}

/// The credentials of the URL `value`, or `None` when it is not a URL.
fn url_credentials(value: &str) -> Option<Vec<String>> {
    let (_, rest) = value.split_once("://")?;
    let end = rest.find(['/', '?', '#', ';']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let mut parts = Vec::new();
    let mut push = |part: &str| {
        if !part.is_empty() {
            // A password in a URL may be escaped (`%40` for `@`): both forms are scrubbed.
            let decoded = percent_encoding::percent_decode_str(part).decode_utf8_lossy();
            for part in [part.to_string(), decoded.into_owned()] {
                if !parts.contains(&part) {
                    parts.push(part);
                }
            }
        }
    };
    // A password alone is scrubbed from messages only from 4 characters: a shorter one would
    // take every `p` or `ab` of every later message with it (and guards nothing).
    let long_enough = |part: &str| part.chars().count() >= MIN_SCRUBBED;
    if let Some((user_info, _)) = authority.rsplit_once('@') {
        push(user_info);
        if let Some((_, password)) = user_info.split_once(':').filter(|(_, p)| long_enough(p)) {
            push(password);
        }
    }
    let tail = tail.split('#').next().unwrap_or_default();
    for parameter in tail.split(['?', '&', ';']) {
        if let Some((name, value)) = parameter.split_once('=') {
            if is_secret_word_key(name) && long_enough(value) {
                push(value);
            }
        }
    }
    Some(parts)
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
    fn a_url_s_credentials_are_secret_and_its_host_is_not() {
        assert!(secret_parts("url", "https://api.example.com/v1?page=2").is_empty());
        assert_eq!(
            secret_parts("URL", "https://me:pass@api.example.com:8443/v1"),
            ["me:pass", "pass"]
        );
        // Too short to scrub alone without mangling every message: the pair only.
        assert_eq!(secret_parts("url", "https://me:pw@h/?token=abc"), ["me:pw"]);
        assert_eq!(
            secret_parts("url", "https://only-a-user@host/"),
            ["only-a-user"]
        );
        assert_eq!(
            secret_parts(
                "jdbcUrl",
                "jdbc:sqlserver://db:1433;user=sa;password=x%3By;encrypt=true"
            ),
            ["x%3By", "x;y"]
        );
        assert_eq!(
            secret_parts("url", "https://h/?access_token=tok1&refresh_token=tok2&a=b"),
            ["tok1", "tok2"]
        );
        // Not a URL: the whole value, which may be a DSN with a password in it.
        assert_eq!(
            secret_parts("url", "host=db password=pw"),
            ["host=db password=pw"]
        );
        // A key with a secret word is secret whole, url or not.
        assert_eq!(secret_parts("secretUrl", "https://h/"), ["https://h/"]);
        assert!(secret_parts("path", "https://me:pw@h/").is_empty());
        assert!(secret_parts("password", "").is_empty());
    }

    #[test]
    fn a_shown_value_keeps_the_host_and_hides_the_credentials() {
        assert_eq!(
            shown_value("url", "postgresql://me:pw@db:5432/shop?sslmode=require"),
            format!("postgresql://{REDACTED}@db:5432/shop?sslmode=require")
        );
        assert_eq!(shown_value("token", "abc"), REDACTED);
        assert_eq!(shown_value("end", "10"), "10");
    }
}
