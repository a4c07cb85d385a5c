//! The options of a query, `.option(key, value)` in Spark, with typed accessors whose errors
//! name the option and the form it expects, and never repeat the value of a secret option.

use std::fmt;
use std::path::PathBuf;

use super::secret::Secret;
#[cfg(doc)]
use super::secret::{is_secret_key, REDACTED};
use super::{Error, Result};

/// The options that Spark adds to a read or a write of its own accord, which
/// [`Options::expect_only`] accepts whatever a source knows (rule 27): `path` (`load(path)`,
/// `save(path)`) and `checkpointLocation` (a streaming write).
pub const SPARK_OPTIONS: &[&str] = &["path", "checkpointLocation"];

/// The options that Spark passed to `create`. Keys match without regard to case, as Spark's
/// own options do. Its `Debug` shows the value of a secret option ([`is_secret_key`]) as
/// [`REDACTED`], and so do its errors: the whole value, or the credentials of a `url`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Options {
    entries: Vec<(String, String)>,
}

impl Options {
    /// Options from key and value pairs, as the user wrote them.
    pub fn new<K: Into<String>, V: Into<String>>(
        entries: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Options {
            entries: entries
                .into_iter()
                .map(|(key, value)| (key.into(), value.into()))
                .collect(),
        }
    }

    /// The raw value of `key`, if the query set it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, value)| value.as_str())
    }

    /// The value of the secret option `key` (a password, a token, a URL with credentials), or
    /// `None` when the query did not set it: a [`Secret`], which no message shows by accident.
    ///
    /// ```
    /// use spark_datasource::Options;
    ///
    /// let options = Options::new([("password", "hunter2")]);
    /// let password = options.secret("password");
    /// assert_eq!(format!("{password:?}"), "Some(Secret(*********(redacted)))");
    /// assert_eq!(password.as_ref().map(|p| p.expose()), Some("hunter2"));
    /// ```
    pub fn secret(&self, key: &str) -> Option<Secret> {
        self.get(key).map(Secret::new)
    }

    /// The value of `key` parsed as `T`, or `None` when the query did not set it.
    ///
    /// # Errors
    /// When the value does not parse.
    pub fn optional<T: OptionValue>(&self, key: &str) -> Result<Option<T>> {
        self.get(key).map(|value| parse(key, value)).transpose()
    }

    /// The value of `key` parsed as `T`, or `default` when the query did not set it.
    ///
    /// # Errors
    /// When the value does not parse: "option `end` must be an integer, got `ten`".
    pub fn get_or<T: OptionValue>(&self, key: &str, default: T) -> Result<T> {
        match self.get(key) {
            Some(value) => parse(key, value),
            None => Ok(default),
        }
    }

    /// The value of `key` parsed as `T`, which the query must set.
    ///
    /// # Errors
    /// When it is missing or does not parse.
    pub fn required<T: OptionValue>(&self, key: &str) -> Result<T> {
        match self.get(key) {
            Some(value) => parse(key, value),
            None => Err(Error::Option(format!(
                "missing option `{key}`: set it with .option(\"{key}\", ...), it must be {}",
                T::EXPECTED
            ))),
        }
    }

    /// Fails on an option that is not in `known` nor one that Spark adds itself
    /// ([`SPARK_OPTIONS`]: `path` for `load(path)` and `save(path)`, `checkpointLocation` for a
    /// streaming write), a likely typo that would otherwise be ignored silently.
    ///
    /// # Errors
    /// "unknown option `ned`; the options of this data source are: end, num_partitions".
    pub fn expect_only(&self, known: &[&str]) -> Result<()> {
        let is_known = |key: &str| {
            known
                .iter()
                .chain(SPARK_OPTIONS)
                .any(|k| k.eq_ignore_ascii_case(key))
        };
        match self.entries.iter().find(|(key, _)| !is_known(key)) {
            Some((key, _)) => Err(Error::Option(format!(
                "unknown option `{key}`; the options of this data source are: {}",
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// The options, in the order the user gave them.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(key, value)| (key, shown(key, value))))
            .finish()
    }
}

/// `value` as a message may show it: the whole value as [`REDACTED`] when `key` is secret, or
/// the credentials of a `url` (see [`spark_datasource_core::secret_parts`]).
fn shown(key: &str, value: &str) -> String {
    spark_datasource_core::shown_value(key, value)
}

fn parse<T: OptionValue>(key: &str, value: &str) -> Result<T> {
    T::parse_option(value).ok_or_else(|| {
        Error::Option(format!(
            "option `{key}` must be {}, got `{}`",
            T::EXPECTED,
            shown(key, value)
        ))
    })
}

/// A type that an option's value can be parsed as.
pub trait OptionValue: Sized {
    /// The expected form, for error messages: "an integer".
    const EXPECTED: &'static str;
    /// The value, or `None` if `value` does not have the expected form.
    fn parse_option(value: &str) -> Option<Self>;
}

impl OptionValue for i64 {
    const EXPECTED: &'static str = "an integer";
    fn parse_option(value: &str) -> Option<Self> {
        value.trim().parse().ok()
    }
}

impl OptionValue for u64 {
    const EXPECTED: &'static str = "a non-negative integer";
    fn parse_option(value: &str) -> Option<Self> {
        value.trim().parse().ok()
    }
}

impl OptionValue for usize {
    const EXPECTED: &'static str = "a non-negative integer";
    fn parse_option(value: &str) -> Option<Self> {
        value.trim().parse().ok()
    }
}

impl OptionValue for bool {
    const EXPECTED: &'static str = "`true` or `false`";
    fn parse_option(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }
}

/// A secret read with `required::<Secret>` or `optional::<Secret>`, as with
/// [`Options::secret`].
impl OptionValue for Secret {
    const EXPECTED: &'static str = "a secret";
    fn parse_option(value: &str) -> Option<Self> {
        Some(Secret::new(value))
    }
}

impl OptionValue for String {
    const EXPECTED: &'static str = "a string";
    fn parse_option(value: &str) -> Option<Self> {
        Some(value.to_string())
    }
}

/// A local path, or a `file:` URI: the form in which Spark gives the location of a catalog
/// table (`CREATE TABLE ... LOCATION`). Other URIs (`s3://...`) are refused: a `PathBuf` names a
/// local file.
impl OptionValue for PathBuf {
    const EXPECTED: &'static str = "a local path or a file: URI";
    fn parse_option(value: &str) -> Option<Self> {
        let Some(uri) = value.strip_prefix("file:") else {
            return (!value.is_empty() && !value.contains("://")).then(|| PathBuf::from(value));
        };
        // file:/x, file:///x or file://localhost/x, with `%xx` escapes (a space is `%20`).
        let local = uri
            .strip_prefix("//localhost")
            .or(uri.strip_prefix("//"))
            .unwrap_or(uri);
        let (raw, mut bytes, mut i) = (local.as_bytes(), Vec::new(), 0);
        while i < raw.len() {
            let escape = raw
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match (raw[i], escape.and_then(|h| u8::from_str_radix(h, 16).ok())) {
                (b'%', Some(byte)) => (bytes.push(byte), i += 3),
                (byte, _) => (bytes.push(byte), i += 1),
            };
        }
        let path = String::from_utf8(bytes).ok()?;
        path.starts_with('/').then(|| PathBuf::from(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_without_regard_to_case() {
        let options = Options::new([("End", "5")]);
        assert_eq!(options.get_or("end", 10_i64).ok(), Some(5));
    }

    #[test]
    fn a_malformed_value_names_the_option_and_the_expected_form() {
        let options = Options::new([("end", "ten")]);
        let error = options.get_or("end", 10_i64).unwrap_err();
        assert_eq!(
            error.to_string(),
            "option `end` must be an integer, got `ten`"
        );
    }

    #[test]
    fn a_missing_required_option_says_how_to_set_it() {
        let error = Options::default().required::<PathBuf>("path").unwrap_err();
        assert_eq!(
            error.to_string(),
            "missing option `path`: set it with .option(\"path\", ...), it must be a local path or \
             a file: URI"
        );
    }

    #[test]
    fn a_path_is_local_or_a_file_uri() {
        let path = |value: &str| Options::new([("path", value)]).required::<PathBuf>("path");
        assert_eq!(path("/data/t").ok(), Some(PathBuf::from("/data/t")));
        assert_eq!(path("rel/t").ok(), Some(PathBuf::from("rel/t")));
        assert_eq!(path("file:/data/t").ok(), Some(PathBuf::from("/data/t")));
        assert_eq!(
            path("file:///data/my%20t").ok(),
            Some(PathBuf::from("/data/my t"))
        );
        assert_eq!(
            path("file://localhost/data/t").ok(),
            Some(PathBuf::from("/data/t"))
        );
        assert_eq!(
            path("s3://bucket/t").unwrap_err().to_string(),
            "option `path` must be a local path or a file: URI, got `s3://bucket/t`"
        );
        assert!(path("").is_err() && path("file:relative").is_err());
    }

    #[test]
    fn a_malformed_secret_option_names_the_option_without_its_value() {
        let options = Options::new([("Access.Key", "AKIA-not-a-number")]);
        let error = options.required::<i64>("access.key").unwrap_err();
        assert_eq!(
            error.to_string(),
            "option `access.key` must be an integer, got `*********(redacted)`"
        );
    }

    #[test]
    fn a_missing_secret_says_how_to_set_it() {
        let error = Options::default().required::<Secret>("token").unwrap_err();
        assert_eq!(
            error.to_string(),
            "missing option `token`: set it with .option(\"token\", ...), it must be a secret"
        );
    }

    #[test]
    fn a_secret_option_is_read_as_a_secret() {
        let options = Options::new([("PASSWORD", "hunter2")]);
        let password = options.secret("password");
        assert_eq!(password.as_ref().map(Secret::expose), Some("hunter2"));
        assert_eq!(options.secret("token"), None);
    }

    #[test]
    fn debug_redacts_the_values_of_secret_options() {
        let options = Options::new([
            ("end", "5"),
            ("jdbcUrl", "jdbc:pg://u:pw@h"),
            ("token", "t"),
        ]);
        assert_eq!(
            format!("{options:?}"),
            r#"{"end": "5", "jdbcUrl": "jdbc:pg://*********(redacted)@h", "token": "*********(redacted)"}"#
        );
    }

    #[test]
    fn an_unknown_option_lists_the_known_ones() {
        let options = Options::new([("ned", "5")]);
        let error = options.expect_only(&["end", "batch_rows"]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown option `ned`; the options of this data source are: end, batch_rows"
        );
    }

    #[test]
    fn the_options_spark_adds_are_always_known() {
        let options = Options::new([
            ("path", "/data/t"),
            ("checkpointLocation", "/c"),
            ("end", "1"),
        ]);
        assert!(options.expect_only(&["end"]).is_ok());
    }
}
