//! Builds the libraries the hardening tests run, and runs `cargo sparkds` under a checker.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "../support/checked.rs"]
mod checked;
use checked::checked;

#[path = "../template/helpers/mod.rs"]
#[allow(dead_code)]
pub mod template;

pub use template::{repo_root, run_dir, Generate};

/// Whether the long runs were asked for (`SPARKDS_HARDENING_FULL=1`).
pub fn full() -> bool {
    std::env::var_os("SPARKDS_HARDENING_FULL").is_some_and(|v| v != "0" && !v.is_empty())
}

/// The `cargo-sparkds` binary of this workspace, built once.
pub fn sparkds_binary() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| sparkds::sparkds_binary().expect("build the cargo-sparkds binary"))
}

/// A directory under the target directory for this run's builds and tables.
pub fn build_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| run_dir::new_run_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "hardening-"))
        .path()
}

/// What a command printed, for failure messages.
pub fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The library of an example of this workspace (`examples/<name>`): the test runner's build of
/// it (`CARGO_CDYLIB_FILE_<NAME>`, tests/suite), else built with `cargo build`, which resolves
/// the example's features alone and so builds its dependencies once more.
pub fn example_library(name: &str) -> PathBuf {
    if let Some(built) = sparkds::given_cdylib(name) {
        return built;
    }
    sparkds::build_current_cdylib(&repo_root().join("examples").join(name), "dev")
        .unwrap_or_else(|e| panic!("cannot build examples/{name}: {e}"))
}

/// `examples/c_range`, built with make into this run's directory, with extra `CFLAGS`.
pub fn c_range(cflags: &str, name: &str) -> PathBuf {
    let library = build_dir().join(format!(
        "{name}/{}",
        sparkds::library_file_name("spark_datasource_c_range")
    ));
    std::fs::create_dir_all(library.parent().expect("a parent")).expect("mkdir");
    checked(
        Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(repo_root().join("examples/c_range"))
            .arg(format!("LIBRARY={}", library.display()))
            .arg(format!("CFLAGS=-O1 -g {cflags}"))
            .arg(format!("LDFLAGS={cflags}")),
        "make -C examples/c_range",
    );
    library
}

/// The conformance suite's C fixture `range.c`, with `-D<define>`s and extra flags.
pub fn c_fixture(defines: &[&str], cflags: &[&str], name: &str) -> PathBuf {
    let library = build_dir().join(sparkds::library_file_name(&format!(
        "spark_datasource_{name}"
    )));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let mut command = Command::new(cc);
    command
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-O1", "-g", "-pthread",
        ])
        .args(cflags)
        .arg("-I")
        .arg(repo_root().join("crates/spark-datasource"))
        .arg("-o")
        .arg(&library)
        .arg(repo_root().join("tests/conformance/fixtures/range.c"));
    for define in defines {
        command.arg(format!("-D{define}"));
    }
    checked(&mut command, "the C compiler ($CC, else cc)");
    library
}

/// A project generated with these capabilities and built (debug), with its library.
pub fn generated_library(name: &str, capabilities: &str, pushdowns: Option<&str>) -> PathBuf {
    let mut generate = Generate::named(name).define("capabilities", capabilities);
    if let Some(pushdowns) = pushdowns {
        generate = generate.define("pushdowns", pushdowns);
    }
    let project = generate.project();
    project.cargo(&["build", "--quiet"]);
    let library = project.built_library();
    assert!(library.is_file(), "{} was not built", library.display());
    // The project's folder goes with `project`; the library stays in the shared target.
    library
}

/// One run of `cargo sparkds check --in-process` under a checker.
pub struct Checked {
    pub output: Output,
    pub elapsed: Duration,
}

/// Runs `prefix... cargo-sparkds check --lib <library> --in-process <options>`, with `envs`.
pub fn check_under(
    prefix: &[&str],
    envs: &[(&str, String)],
    library: &Path,
    options: &[String],
) -> Checked {
    let (program, args) = prefix.split_first().expect("a checker");
    let start = Instant::now();
    let output = Command::new(program)
        .args(args)
        .arg(sparkds_binary())
        .arg("check")
        .arg("--lib")
        .arg(library)
        .arg("--in-process")
        .args(options)
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (install it: .ci/install): {e}"));
    Checked {
        output,
        elapsed: start.elapsed(),
    }
}
