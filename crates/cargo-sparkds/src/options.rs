//! The options of a data source on the command line: `KEY=VALUE` arguments, the lines of an
//! `--options-file`, and the JSON on standard input with which a parent gives them to its child
//! process (`--options-stdin`). A value is never repeated in a message: it may be a secret.

use std::path::Path;

use sparkds::{Error, Result};

/// Parses a `key=value` option of the command line.
///
/// # Errors
///
/// A message that names the argument and shows the form it must take.
pub fn parse_option(arg: &str) -> std::result::Result<(String, String), String> {
    match arg.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        // What follows `=`, or an argument without one that names a secret
        // (`password:hunter2`), may be a secret value: it is not repeated.
        Some(_) => Err("an option needs a key before `=`, such as `end=20`".to_string()),
        None if sparkds::redact::is_secret_key(arg) => Err(
            "an option whose key looks secret must be written key=value, such as `password=...`; \
             the argument is not shown, since it may hold the secret"
                .to_string(),
        ),
        None => Err(format!(
            "option `{arg}` must be written key=value, such as `{}=20`",
            if arg.is_empty() {
                "end"
            } else {
                arg.trim_end_matches('=')
            }
        )),
    }
}

/// Parses an option with [`parse_option`]. Its error is the message alone: clap's own would
/// repeat the argument, which may hold a secret value.
#[derive(Clone)]
pub struct OptionParser;

impl clap::builder::TypedValueParser for OptionParser {
    type Value = (String, String);

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<Self::Value, clap::Error> {
        let message = match value.to_str() {
            Some(text) => match parse_option(text) {
                Ok(option) => return Ok(option),
                Err(message) => message,
            },
            None => "an option must be UTF-8 text, written key=value".to_string(),
        };
        Err(clap::Error::raw(
            clap::error::ErrorKind::ValueValidation,
            format!("{message}\n"),
        )
        .with_cmd(cmd))
    }
}

/// The options of the file at `path`: one `KEY=VALUE` a line.
///
/// # Errors
///
/// When the file cannot be read, or a line is not `KEY=VALUE` (named by its number only).
pub fn from_file(path: &Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::io(
            format!("cannot read the options file {}", path.display()),
            e,
        )
    })?;
    let options = of_file(&text).map_err(|(line, message)| {
        Error::usage(format!("{} line {line}: {message}", path.display()))
    })?;
    if let Some(warning) = readable_by_others(path, &options) {
        eprintln!("warning: {warning}");
    }
    Ok(options)
}

/// The KEY=VALUE lines of an options file, or the number of the first line that is not one
/// and why (never the line itself, which may hold a secret). Blank lines and lines that start
/// with `#` are skipped; the value is the rest of the line, as written.
pub fn of_file(text: &str) -> std::result::Result<Vec<(String, String)>, (usize, String)> {
    text.lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.strip_suffix('\r').unwrap_or(line)))
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|(number, line)| match line.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
            _ => Err((
                number,
                "not KEY=VALUE, such as `end=20` (the line is not shown: it may hold a secret)"
                    .to_string(),
            )),
        })
        .collect()
}

/// A warning when the options file at `path` holds a secret option and other users may read
/// it.
fn readable_by_others(path: &Path, options: &[(String, String)]) -> Option<String> {
    let secret = options
        .iter()
        .find(|(key, _)| sparkds::redact::is_secret_key(key))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        (mode & 0o044 != 0).then(|| {
            format!(
                "{} holds the secret option `{}` and other users of the machine may read it \
                 (mode {:o}): `chmod 600 {}`",
                path.display(),
                secret.0,
                mode & 0o777,
                path.display()
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = (path, secret);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_without_equals_is_explained() {
        assert_eq!(
            parse_option("end"),
            Err("option `end` must be written key=value, such as `end=20`".to_string())
        );
        assert_eq!(parse_option("end=20"), Ok(("end".into(), "20".into())));
        assert_eq!(parse_option("a=b=c"), Ok(("a".into(), "b=c".into())));
    }

    #[test]
    fn an_option_that_may_hold_a_secret_is_not_repeated() {
        assert_eq!(
            parse_option("=hunter2"),
            Err("an option needs a key before `=`, such as `end=20`".to_string())
        );
        assert_eq!(
            parse_option("db.password:hunter2"),
            Err(
                "an option whose key looks secret must be written key=value, such as \
                 `password=...`; the argument is not shown, since it may hold the secret"
                    .to_string()
            )
        );
    }
    #[test]
    fn an_options_file_holds_key_value_lines_and_comments() {
        let text = "# the database\r\nhost=db.example.com\n\n  # port below\nport=5432\npassword= a=b #c\n";
        assert_eq!(
            of_file(text),
            Ok(vec![
                ("host".to_string(), "db.example.com".to_string()),
                ("port".to_string(), "5432".to_string()),
                ("password".to_string(), " a=b #c".to_string()),
            ])
        );
        // A line that is not KEY=VALUE is named by its number, never shown.
        let error = of_file("end=1\nhunter2\n").expect_err("a bad line");
        assert_eq!(error.0, 2);
        assert!(!error.1.contains("hunter2"), "{}", error.1);
    }
}
