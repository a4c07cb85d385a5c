//! Crash isolation: a library that aborts the process (an escaping Rust panic aborts since Rust
//! 1.81; a C++ exception across `extern "C"` terminates) is run in a child process, the
//! `sparkds` binary, which leaves breadcrumbs on stderr, one per call into the library, so the
//! parent can name the function that was running when the child died (rule 9).

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
        Some(0) | Some(1) | Some(2) => None,
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
