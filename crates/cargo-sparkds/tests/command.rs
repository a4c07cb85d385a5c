//! The installed command as cargo runs it (`cargo sparkds ...` runs `cargo-sparkds sparkds ...`)
//! and as a user may run it directly (`cargo-sparkds ...`).

use std::process::{Command, Output};

fn cargo_sparkds(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-sparkds"))
        .args(args)
        .output()
        .expect("the built cargo-sparkds runs")
}

#[test]
fn the_version_is_the_crate_s_whether_cargo_runs_it_or_the_user_does() {
    let expected = format!("cargo sparkds {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["sparkds", "--version"][..], &["--version"][..]] {
        let output = cargo_sparkds(args);
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            expected,
            "{args:?}"
        );
    }
}

#[test]
fn the_help_lists_every_command() {
    let output = cargo_sparkds(&["sparkds", "--help"]);
    assert!(output.status.success(), "{output:?}");
    let help = String::from_utf8_lossy(&output.stdout);
    for command in [
        "show",
        "roundtrip",
        "check",
        "bench",
        "package",
        "spark",
        "verify",
        "doc",
    ] {
        assert!(
            help.lines()
                .any(|line| line.trim_start().starts_with(&format!("{command} "))),
            "`{command}` is not in the help:\n{help}"
        );
    }
}

#[test]
fn an_unknown_command_is_named_with_the_usage_and_exits_2() {
    let output = cargo_sparkds(&["sparkds", "shwo"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("shwo") && said.contains("Usage"), "{said}");
}
