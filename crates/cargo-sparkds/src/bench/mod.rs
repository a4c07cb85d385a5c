//! `cargo sparkds bench`: measures a library as Spark drives it, through the C interface with
//! the conformance checks and without them, and in process, and reports it as a table or as
//! JSON.
//!
//! The command line is here; the measures are in `measure` (what is measured and the report),
//! `run` (one run of a protocol, over the steps of `sparkds`, the host), `reference` (the
//! in-process run) and `counts` (the time inside the library, which the host's call observer
//! sums); `render` prints the report.

use std::io::Write;
use std::process::ExitCode;

use sparkds::{Error, Result};

use crate::drive::Target;

mod counts;
mod measure;
mod reference;
mod render;
mod rss;
mod run;
#[cfg(test)]
mod tests;

use measure::{measure, BenchProtocol, BenchSpec};
use render::render;

/// `sparkds bench`: measures the reads of a library through the C interface, with the
/// conformance checks and without them.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub target: Target,
    /// Read only these columns, in this order (`prune_columns`); `--columns ''` reads none, as
    /// Spark's `count(*)` does.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub columns: Option<Vec<String>>,
    /// A condition in SQL syntax, as a WHERE clause writes it: its top-level conjuncts are
    /// offered to the batch read (`push_filters`). The rows are measured as the library returns
    /// them: the filters it does not accept are not applied.
    #[arg(long = "where", value_name = "CONDITION")]
    pub condition: Option<String>,
    /// Run each measure this many times, the modes in turn, and report the fastest run of
    /// each (its peak RSS is the highest of all runs).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: usize,
    /// Measure only without the conformance checks (by default: with them, then without).
    #[arg(long)]
    pub no_checks: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Measure only this protocol. By default: the batch read and the micro-batch read that
    /// the source declares.
    #[arg(long, value_parser = protocol)]
    pub protocol: Option<BenchProtocol>,
    /// The number of micro-batches of a micro-batch read.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub micro_batches: usize,
    /// The rows of a batch write, in all.
    #[arg(long, default_value_t = 1 << 20, value_name = "N")]
    pub write_rows: u64,
    /// The rows of each batch that a batch write writes.
    #[arg(long, default_value_t = 65536, value_name = "N")]
    pub write_batch_rows: usize,
    /// The tasks of a batch write, which share its rows.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub write_tasks: usize,
    /// What the options point at may be overwritten by the batch write. Without it, the batch
    /// write writes only into an empty directory that bench creates (given as `path`), and
    /// refuses options, which may point at data of your own.
    #[arg(long)]
    pub scratch: bool,
}

/// `--protocol`: a name of [`BenchProtocol`].
fn protocol(name: &str) -> std::result::Result<BenchProtocol, String> {
    name.parse().map_err(|e: Error| e.to_string())
}

impl BenchArgs {
    /// The target to load: the `release` build of the current package unless `--lib`,
    /// `--release` or `--profile` says otherwise, since a benchmark of a debug build measures
    /// the debug build.
    pub fn target(&self) -> Target {
        let mut target = self.target.clone();
        if target.lib.is_none() && target.profile.is_none() {
            target.release = true;
        }
        target
    }
}

/// Runs `cargo sparkds bench` in this process and writes its report.
///
/// # Errors
///
/// When the library cannot be found or loaded, or a read fails or breaks a rule.
pub fn bench(args: &BenchArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let target = args.target();
    let path = target.library_path()?;
    let schema = target.schema()?;
    let filters = match &args.condition {
        Some(condition) => {
            let library = sparkds::Library::load(&path)?;
            let mut read = library.batch_read().options(target.options.clone());
            if let Some(schema) = &schema {
                read = read.schema(schema.clone());
            }
            crate::condition::parse(condition, read.read_schema()?.as_ref())?
        }
        None => Vec::new(),
    };
    // A write goes only where nothing is lost; the directory it creates lives until the end.
    let mut write_target = None;
    let options = if args.protocol == Some(BenchProtocol::BatchWrite) {
        let write = write_target.insert(
            sparkds::check::WriteTarget::new(&target.options, args.scratch)
                .map_err(|keys| crate::drive::refused_write("bench", &keys, false))?,
        );
        write.options()?
    } else {
        target.options.clone()
    };
    let spec = BenchSpec {
        options,
        schema,
        // `--columns ''` is one empty name: no column at all.
        columns: args
            .columns
            .as_ref()
            .map(|c| c.iter().filter(|n| !n.is_empty()).cloned().collect()),
        filters,
        repeat: args.repeat,
        checks: !args.no_checks,
        protocol: args.protocol,
        micro_batches: args.micro_batches,
        write_rows: args.write_rows,
        write_batch_rows: args.write_batch_rows,
        write_tasks: args.write_tasks,
    };
    let report = measure(&path, &spec)?;
    let text = if args.json {
        let json = serde_json::to_string_pretty(&report)
            .map_err(|e| Error::Usage(format!("cannot write the report as JSON: {e}")))?;
        format!("{json}\n")
    } else {
        render(&report)
    };
    out.write_all(text.as_bytes()).map_err(|e| Error::Io {
        context: "cannot write the output".into(),
        source: e,
    })?;
    Ok(ExitCode::SUCCESS)
}
