//! Running a command that must succeed, for the test binaries' setup steps.

use std::process::{Command, Output};

/// Runs `command`, and panics with its output (and `what` it was for) unless it succeeds.
pub fn checked(command: &mut Command, what: &str) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: cannot run {command:?}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
