//! The `sparkds` command. Subcommands are added by their modules.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Runs a native data source library the way Spark does, and packages and verifies `.sparkpkg`
/// files.
#[derive(Debug, Parser)]
#[command(name = "sparkds", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write `<name>-<version>.sparkpkg` from one library per platform.
    Package(sparkds::package::PackageArgs),
    /// Check a `.sparkpkg`: manifest, entries, and each library's format, architecture,
    /// `spark_ds_init` export, dependencies and glibc versions; prints each library's SHA-256.
    Verify(sparkds::verify::VerifyArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Package(args) => match sparkds::package::run(&args) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Command::Verify(args) => match sparkds::verify::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(e) => fail(&e),
        },
    }
}

/// Prints an error that stopped a command; exit code 2 tells it apart from a package that
/// failed verification (1).
fn fail(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::from(2)
}
