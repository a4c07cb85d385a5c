//! Running a command that must succeed, for the test binaries' setup steps.

use std::process::{Command, Output};

/// Runs `command`, and panics with its output (and `what` it was for) unless it succeeds.
pub fn checked(command: &mut Command, what: &str) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: cannot run {}: {error}", shown(command)));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// What Spark says when a Python worker that it started did not connect back within the 10 s
/// that Spark allows, a fixed limit: on a loaded machine (the suite runs groups side by side) it
/// happens now and then, and says nothing of the code under test.
pub const WORKER_TIMEOUT: &str = "Python worker failed to connect back";

/// The output of `command` (a pytest run), run once more when it failed with
/// [`WORKER_TIMEOUT`], and only then: a failure of any other kind, or that one twice, stands.
pub fn output_again_on_worker_timeout(command: &mut Command) -> Output {
    let run = |command: &mut Command| {
        command
            .output()
            .unwrap_or_else(|error| panic!("cannot run {}: {error}", shown(command)))
    };
    let first = run(command);
    let said = |output: &Output| {
        String::from_utf8_lossy(&output.stdout).contains(WORKER_TIMEOUT)
            || String::from_utf8_lossy(&output.stderr).contains(WORKER_TIMEOUT)
    };
    if first.status.success() || !said(&first) {
        return first;
    }
    println!(
        "{WORKER_TIMEOUT} (a loaded machine): running {} once more",
        shown(command)
    );
    run(command)
}

/// The program and arguments of `command`, not its environment (`{command:?}` prints the
/// variables set on it, where a test may pass a secret).
fn shown(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}
