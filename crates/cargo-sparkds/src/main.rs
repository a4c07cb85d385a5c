//! `cargo sparkds`: the command, installed once with
//! `cargo install --locked --path crates/cargo-sparkds`. Cargo runs it as
//! `cargo-sparkds sparkds <args>`; it also runs as `cargo-sparkds <args>`. Subcommands are
//! added by their modules.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod bench;
mod condition;
mod doc;
mod drive;
mod metadata;
mod options;
mod package;
mod spark;
mod verify;

/// Runs a native data source library the way Spark does, and packages and verifies `.sparkpkg`
/// files.
#[derive(Debug, Parser)]
#[command(name = "cargo sparkds", bin_name = "cargo sparkds", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the schema and the rows of a data source, like `df.printSchema()` and
    /// `df.show()`, through the whole batch read protocol and its checks.
    Show(drive::ShowArgs),
    /// Write sample rows through the whole write protocol, then read them back.
    ///
    /// Without options it writes into an empty directory that it creates (given as `path`) and
    /// removes. With options it runs only with --scratch, which says that what they point at (a
    /// directory, a table) may be overwritten: they may point at data of your own.
    Roundtrip(drive::RoundtripArgs),
    /// Run every protocol of every capability that the source declares, and report the rules
    /// it breaks.
    ///
    /// Each protocol runs in a child process, so that a library that aborts is reported. The
    /// exit code is 1 when a protocol breaks a rule or cannot run. An option `SCOPE:key=value`
    /// goes to some protocols only: SCOPE is `read`, `write` or a protocol name, as in
    /// `read:end=20`.
    ///
    /// The write protocols (truncate-write replaces what is there) write into empty directories
    /// that check creates (given as `path`). A write protocol that an option reaches is not run,
    /// since the option may point at data of your own, unless --scratch says that what the
    /// options point at may be overwritten.
    Check(drive::CheckArgs),
    /// Measure the batch read and the micro-batch read that a source declares, through the C
    /// interface: rows/s, Arrow bytes/s, batches/s, the time inside the library and in the host,
    /// and the peak RSS, with the conformance checks and without them, and in process (the
    /// `spark_ds_bench_v1` of a library made with `export!`), as a ratio. `--protocol
    /// batch-write` measures a batch write.
    ///
    /// Loads the `release` build of the current package unless `--lib`, `--release` or
    /// `--profile` says otherwise.
    Bench(bench::BenchArgs),
    /// Write `<name>-<version>.sparkpkg` from one library per platform.
    Package(package::PackageArgs),
    /// Build the library and open a local Spark 4 session in which its data source is ready:
    /// an interactive PySpark shell, one SQL statement (`--sql`), a script (`--python`) or a
    /// Spark Connect server (`--connect`).
    ///
    /// The JVM plugin loads the library (`--bridge`: the Python bridge): read it with
    /// `spark.read.format("native").option("source", NAME)` or `SELECT * FROM native.NAME`.
    /// Spark comes from SPARK_HOME, else python3's pyspark, else a pinned pyspark installed in
    /// the cache (~/.cache/sparkds, or SPARKDS_CACHE_DIR), which keeps the plugin: the released
    /// jar of the Spark's line, fetched once from Maven Central (SPARKDS_MAVEN_REPOSITORY names
    /// a mirror) and checked against the SHA-256 this command records, or, for a command built
    /// from a checkout, one built there from the project's SDK. Builds the `release` profile
    /// unless `--profile` says otherwise.
    Spark(spark::SparkArgs),
    /// Check a `.sparkpkg`: manifest, entries, and each library's format, architecture,
    /// `spark_ds_init` export, dependencies and glibc versions; prints each library's SHA-256.
    Verify(verify::VerifyArgs),
    /// Build the API documentation of the SDK crates the project uses (spark-datasource,
    /// sparkds and its `testing` module, spark-datasource-http), at the versions its Cargo.lock
    /// holds, into its target/doc; prints where each crate's page is.
    ///
    /// `cargo doc -p sparkds` panics in a project where sparkds is a dev-dependency
    /// (rust-lang/cargo#11105): this documents the crates from a manifest of their own.
    Doc(doc::DocArgs),
}

/// The arguments without the `sparkds` that cargo passes first to a subcommand.
fn arguments() -> Vec<OsString> {
    let mut args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == "sparkds") {
        args.remove(1);
    }
    args
}

/// The command line's definition, which also tells a parent which arguments its child gets.
fn definition() -> clap::Command {
    Cli::command()
}

fn main() -> ExitCode {
    let mut cli = Cli::parse_from(arguments());
    let target = match &mut cli.command {
        Command::Show(args) => Some(&mut args.target),
        Command::Roundtrip(args) => Some(&mut args.target),
        Command::Check(args) => Some(&mut args.target),
        Command::Bench(args) => Some(&mut args.target),
        _ => None,
    };
    if let Some(Err(e)) = target.map(drive::Target::read_options) {
        return fail(&e);
    }
    // A child that `show`, `roundtrip` or `check` started runs with breadcrumbs: its parent
    // has warned already.
    let child = std::env::var_os(sparkds::isolate::BREADCRUMBS_VAR).is_some();
    if let Some(warning) = sparkds::version::mismatch_in_current_project().filter(|_| !child) {
        eprintln!("warning: {warning}");
    }
    match cli.command {
        Command::Show(args) if !args.target.in_process => exit(drive::rerun_isolated(&args.target)),
        Command::Show(args) => exit(drive::show(&args, &mut std::io::stdout())),
        Command::Roundtrip(args) if !args.target.in_process => {
            exit(drive::rerun_isolated(&args.target))
        }
        Command::Roundtrip(args) => exit(drive::roundtrip(&args, &mut std::io::stdout())),
        Command::Bench(args) if !args.target.in_process => {
            exit(drive::rerun_isolated(&args.target()))
        }
        Command::Bench(args) => exit(bench::bench(&args, &mut std::io::stdout())),
        Command::Check(args) => exit(drive::check(&args, &mut std::io::stdout())),
        Command::Package(args) => match package::run(&args) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Command::Spark(args) => exit(spark::run(&args)),
        Command::Doc(args) => match doc::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Command::Verify(args) => match verify::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(e) => fail(&e),
        },
    }
}

/// The exit code of a command of `drive` or `bench`, which returns its own on success.
fn exit(result: sparkds::Result<ExitCode>) -> ExitCode {
    result.unwrap_or_else(|e| fail(&e))
}

/// Prints an error that stopped a command; exit code 2 tells it apart from a package that
/// failed verification (1).
fn fail(error: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: {error}");
    ExitCode::from(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The child process of `check` is this command: the arguments that
    /// `sparkds::check::ChildCheck` gives it parse back into the same check.
    #[test]
    fn the_command_line_of_a_check_s_child_parses_back_into_its_check() {
        for (schema, scratch) in [(None, false), (Some("id bigint not null"), true)] {
            let child = sparkds::check::ChildCheck {
                library: "/t/libspark_datasource_x.so".into(),
                protocol: sparkds::check::Protocol::TruncateWrite,
                schema: schema.map(str::to_string),
                scratch,
            };
            let args = std::iter::once(OsString::from("cargo-sparkds")).chain(child.args());
            let Command::Check(parsed) = Cli::try_parse_from(args).expect("parses").command else {
                panic!("not a check");
            };
            assert_eq!(parsed.target.lib.as_deref(), Some(child.library.as_path()));
            assert_eq!(parsed.protocol, Some(child.protocol));
            assert_eq!(parsed.target.schema, child.schema);
            assert_eq!(parsed.scratch, child.scratch);
            assert!(parsed.json && parsed.target.in_process && parsed.target.options_stdin);
        }
    }
}
