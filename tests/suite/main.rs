//! `cargo suite`: the whole test suite, its groups run side by side.
//!
//! `cargo test --workspace` runs its test binaries one after another. Much of the suite's time
//! is spent in groups that wait (Spark's JVMs starting, executors killed and replaced, streams
//! polled) or that build generated projects, and those overlap well even on two cores. This
//! command builds every test binary once (`cargo test --no-run`), then runs them as cargo would,
//! each in its package's directory, `--jobs` at a time (2 by default), the longest first.
//! Groups may share anything: cargo locks its target directories, the plugin's jar and the C
//! example are renamed into place, the generated projects are rebuilt only when they change (so
//! no library is replaced under a running session), and `cargo sparkds spark` builds again when
//! another build replaced its JNI library under it.
//!
//! Each group's output goes to `target/suite/<group>.log`, printed whole when the group fails.
//! The run ends with the time of each group and of the compilation, and fails if a group failed.
//!
//! ```text
//! cargo suite                  every group
//! cargo suite jvm spark        these groups only
//! cargo suite --jobs 3         three groups at a time
//! cargo suite --jobs 1         one at a time, as cargo test runs them
//! cargo suite --list           the groups, in the order they start
//! ```

mod groups;
mod report;
mod run;

use std::process::ExitCode;
use std::time::Instant;

use groups::Group;

/// What the command line asks.
struct Arguments {
    jobs: usize,
    list: bool,
    only: Vec<String>,
}

fn parse_arguments() -> Result<Arguments, String> {
    let mut arguments = Arguments {
        jobs: 2,
        list: false,
        only: Vec::new(),
    };
    let mut given = std::env::args().skip(1);
    while let Some(argument) = given.next() {
        match argument.as_str() {
            "--jobs" | "-j" => {
                let value = given.next().unwrap_or_default();
                arguments.jobs = match value.parse::<usize>() {
                    Ok(jobs) if jobs >= 1 => jobs,
                    _ => return Err(format!("--jobs takes a number of 1 or more, not `{value}`")),
                };
            }
            "--list" => arguments.list = true,
            "-h" | "--help" => {
                return Err("usage: cargo suite [--jobs N] [--list] [GROUP ...]".to_string())
            }
            flag if flag.starts_with('-') => {
                return Err(format!(
                    "unknown option `{flag}`; the options are --jobs N and --list"
                ))
            }
            group => arguments.only.push(group.to_string()),
        }
    }
    Ok(arguments)
}

fn main() -> ExitCode {
    let arguments = match parse_arguments() {
        Ok(arguments) => arguments,
        Err(message) => {
            eprintln!("cargo suite: {message}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let mut all = match groups::build_all() {
        Ok(all) => all,
        Err(message) => {
            eprintln!("cargo suite: {message}");
            return ExitCode::FAILURE;
        }
    };
    let compilation = started.elapsed();
    if arguments.list {
        for group in &all {
            println!("{}", group.name);
        }
        return ExitCode::SUCCESS;
    }
    if !arguments.only.is_empty() {
        if let Some(unknown) = arguments
            .only
            .iter()
            .find(|name| !all.iter().any(|g| &g.name == *name))
        {
            let names: Vec<&str> = all.iter().map(|g| g.name.as_str()).collect();
            eprintln!(
                "cargo suite: no group `{unknown}`; the groups are: {}",
                names.join(", ")
            );
            return ExitCode::from(2);
        }
        all.retain(|g| arguments.only.contains(&g.name));
    }
    let outcomes = run::run_all(all, arguments.jobs);
    report::print_table(&outcomes, compilation, started.elapsed());
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.passed)
        .map(|o| o.name.as_str())
        .collect();
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("cargo suite: failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// How one group ended.
pub struct Outcome {
    pub name: String,
    pub passed: bool,
    pub seconds: f64,
}

impl Group {
    fn outcome(&self, passed: bool, seconds: f64) -> Outcome {
        Outcome {
            name: self.name.clone(),
            passed,
            seconds,
        }
    }
}
