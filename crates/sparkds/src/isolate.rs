//! Crash isolation: a library that aborts the process (an escaping Rust panic aborts since Rust
//! 1.81; a C++ exception across `extern "C"` terminates) is run in a child process, the
//! `sparkds` binary, which leaves breadcrumbs on stderr, one per call into the library, so the
//! parent can name the function that was running when the child died (rule 9).
//!
//! A parent gives its child the options on the child's standard input ([`spawn_with_options`],
//! [`read_options`]), never on its command line, which every user of the machine can read
//! (`ps`, `/proc/<pid>/cmdline`): an option may be a password.

use std::io::Write;
use std::sync::OnceLock;

/// The environment variable that turns breadcrumbs on, in the child.
pub const BREADCRUMBS_VAR: &str = "SPARKDS_BREADCRUMBS";
/// The prefix of a breadcrumb line on stderr.
pub const BREADCRUMB_PREFIX: &str = "sparkds-calling: ";

fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var_os(BREADCRUMBS_VAR).is_some())
}

/// Records that the host is about to call `function` of the library.
pub fn breadcrumb(function: &str) {
    if enabled() {
        // Unbuffered and flushed: the process may die during the call.
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "{BREADCRUMB_PREFIX}{function}");
        let _ = stderr.flush();
    }
}

/// The function that was running when a child died: the last breadcrumb of its stderr.
pub fn last_call(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(BREADCRUMB_PREFIX))
        .map(|f| f.trim().to_string())
}

/// The stderr of a child without its breadcrumbs.
pub fn without_breadcrumbs(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.starts_with(BREADCRUMB_PREFIX))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The flag with which a parent tells a child process of `cargo sparkds` to read its options
/// from its standard input, as the JSON of `[[key, value], ...]`.
pub const OPTIONS_STDIN_FLAG: &str = "--options-stdin";

/// Starts `command` (given [`OPTIONS_STDIN_FLAG`] by the caller) with `options` written to its
/// standard input, then closed; the caller sets its standard output and error.
///
/// # Errors
///
/// When the command cannot start.
pub fn spawn_with_options(
    command: &mut std::process::Command,
    options: &[(String, String)],
) -> std::io::Result<std::process::Child> {
    let json = serde_json::to_vec(options).map_err(std::io::Error::other)?;
    let mut child = command.stdin(std::process::Stdio::piped()).spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that ends before it reads (a library that aborts in `spark_ds_init`) closes
        // the pipe: how it ended is what the caller reports, not this write.
        let _ = stdin.write_all(&json);
    }
    Ok(child)
}

/// Reads the options that a parent wrote with [`spawn_with_options`].
///
/// # Errors
///
/// When `input` cannot be read or is not the JSON of `[[key, value], ...]`.
pub fn read_options(mut input: impl std::io::Read) -> crate::Result<Vec<(String, String)>> {
    let mut text = String::new();
    input
        .read_to_string(&mut text)
        .map_err(|e| crate::Error::io("cannot read the options from standard input", e))?;
    serde_json::from_str(&text).map_err(|e| {
        crate::Error::usage(format!(
            "{OPTIONS_STDIN_FLAG}: standard input is not the JSON of [[key, value], ...] \
             (line {}, column {}); the flag is for the child processes of `cargo sparkds`: \
             give options as KEY=VALUE or with --options-file",
            e.line(),
            e.column()
        ))
    })
}

/// How a child process ended, when it did not exit normally: "signal 6", or on Windows "exit
/// code 0xc0000409".
pub fn abnormal_end(status: &std::process::ExitStatus) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Some(format!("signal {signal}"));
        }
    }
    match status.code() {
        Some(0..=2) => None,
        Some(code) => Some(format!("exit code {code:#x}")),
        None => Some("killed".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_breadcrumb_names_the_function() {
        let stderr =
            "sparkds-calling: spark_ds_init\nnoise\nsparkds-calling: create\nthread panicked\n";
        assert_eq!(last_call(stderr).as_deref(), Some("create"));
        assert_eq!(without_breadcrumbs(stderr), "noise\nthread panicked\n");
    }
}
