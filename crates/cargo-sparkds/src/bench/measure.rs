//! What `cargo sparkds bench` measures and its report: each protocol that the source declares
//! (or the one asked for), in each mode, the best of `repeat` runs.
//!
//! The modes: through the C interface with the full checks of `sparkds` (arrow-rs's full
//! validation of every value, the accepted filters on every row), through it with the cheap
//! checks only that the host always runs (the structure of each C array, arrow-rs's import),
//! and in process. Spark itself validates nothing. The tasks run one after another on the
//! calling thread, as one executor core runs them, so that the rates are those of one core.
//! Each batch is imported in place, counted and dropped before the next `get_next`.
//!
//! In process: a library built with `spark_datasource::export!` also exports
//! `spark_ds_bench_v1`, outside the header, which runs the task side of a read (or of a write)
//! through the connector's traits with no Arrow C stream, no guard per batch and no checks, and
//! counts what it read. The planning still goes through the interface, once per run, as for the
//! other measures, so the ratio of the two is what the interface costs per batch. A library
//! without that symbol (written in C, say) is measured through the interface only.

use std::path::Path;
use std::str::FromStr;

use arrow_schema::SchemaRef;
use serde::Serialize;

use sparkds::filters::Filter;
use sparkds::{Error, HostOptions, Library, Result};

use super::counts::{Counts, LibraryTime};
use super::rss::Rss;
use super::run::{Mode, Run};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchProtocol {
    /// `spark.read...load()`: every partition of the batch read.
    BatchRead,
    /// `spark.readStream...`: [`BenchSpec::micro_batches`] micro-batches, one after another.
    MicroBatchRead,
    /// `df.write...save()` in append mode: [`BenchSpec::write_rows`] sample rows in batches of
    /// [`BenchSpec::write_batch_rows`], over [`BenchSpec::write_tasks`] tasks. Measured only
    /// when asked, since it writes where the options say.
    BatchWrite,
}

impl BenchProtocol {
    /// The name of the protocol, as `--protocol` takes it.
    pub fn name(self) -> &'static str {
        match self {
            BenchProtocol::BatchRead => "batch-read",
            BenchProtocol::MicroBatchRead => "micro-batch-read",
            BenchProtocol::BatchWrite => "batch-write",
        }
    }

    /// Every protocol, in the order of the report.
    pub const ALL: [BenchProtocol; 3] = [
        BenchProtocol::BatchRead,
        BenchProtocol::MicroBatchRead,
        BenchProtocol::BatchWrite,
    ];
}

impl FromStr for BenchProtocol {
    type Err = Error;

    fn from_str(name: &str) -> Result<BenchProtocol> {
        BenchProtocol::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                Error::usage(format!(
                    "unknown protocol `{name}`: use batch-read, micro-batch-read or batch-write"
                ))
            })
    }
}

/// What [`measure`] measures, and how.
#[derive(Debug, Clone)]
pub struct BenchSpec {
    /// The options given to `create`.
    pub options: Vec<(String, String)>,
    /// The schema to read, as a query gives one; `None` for the source's.
    pub schema: Option<SchemaRef>,
    /// Read only these columns, in this order (`prune_columns`).
    pub columns: Option<Vec<String>>,
    /// The filters offered to a batch read (`push_filters` of the filter pushdown extension),
    /// as a query's top-level conjuncts; empty for none. The rows that a library returns are
    /// measured as they are: the filters it does not accept are not applied.
    pub filters: Vec<Filter>,
    /// Run each measure this many times, the modes in turn, and keep the fastest run of each
    /// (its peak RSS is the highest of all runs).
    pub repeat: usize,
    /// Measure with the conformance checks too (before the measure without them).
    pub checks: bool,
    /// Measure only this protocol; `None` for the batch read and the micro-batch read that the
    /// source declares.
    pub protocol: Option<BenchProtocol>,
    /// The number of micro-batches of a micro-batch read.
    pub micro_batches: usize,
    /// The rows of a batch write, in all.
    pub write_rows: u64,
    /// The rows of each batch that a batch write writes.
    pub write_batch_rows: usize,
    /// The tasks of a batch write, which share its rows.
    pub write_tasks: usize,
}

impl Default for BenchSpec {
    fn default() -> BenchSpec {
        BenchSpec {
            options: Vec::new(),
            schema: None,
            columns: None,
            filters: Vec::new(),
            repeat: 1,
            checks: true,
            protocol: None,
            micro_batches: 10,
            write_rows: 1 << 20,
            write_batch_rows: 65536,
            write_tasks: 2,
        }
    }
}

/// The report of `sparkds bench`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// The library measured.
    pub library: String,
    /// The options given to the source, a secret value shown as
    /// [`REDACTED`](sparkds::redact::REDACTED).
    pub options: Vec<(String, String)>,
    /// The columns asked for; `None` for every column.
    pub columns: Option<Vec<String>>,
    /// The filters offered to the batch read, as SQL, and whether the library accepted each:
    /// `None` when it has no filter pushdown or no batch read was measured.
    pub filters: Vec<BenchFilter>,
    /// How many runs each measure is the best of.
    pub repeat: usize,
    /// Whether the library has the in-process reference, `spark_ds_bench_v1`.
    pub reference: bool,
    /// One measure per protocol and mode.
    pub measures: Vec<Measure>,
}

/// A filter offered to the batch read of a benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct BenchFilter {
    /// The predicate, as Spark SQL writes it.
    pub filter: String,
    /// Whether `push_filters` accepted it; `None` when it was not offered.
    pub accepted: Option<bool>,
}

/// One measure: a protocol, with or without the checks, or in process; its best run.
#[derive(Debug, Clone, Serialize)]
pub struct Measure {
    /// The protocol, as `--protocol` of `check` names it: `batch-read`.
    pub protocol: String,
    /// Whether the conformance checks of `sparkds` ran.
    pub checks: bool,
    /// Whether the tasks ran in process (`spark_ds_bench_v1`), without the C interface.
    pub in_process: bool,
    pub rows: u64,
    pub batches: u64,
    /// The sum of the sizes of the buffers of the imported arrays.
    pub arrow_bytes: u64,
    /// The wall time of the whole protocol, driver and tasks.
    pub seconds: f64,
    /// The time spent inside the library's functions (`read`, `get_next`, the releases...).
    pub library_seconds: f64,
    /// The rest: the host's imports, checks and copies.
    pub host_seconds: f64,
    pub rows_per_second: f64,
    pub arrow_bytes_per_second: f64,
    pub batches_per_second: f64,
    /// The peak resident set size over the process's baseline, `None` where the platform does
    /// not tell.
    pub peak_rss_bytes: Option<u64>,
}

/// Measures the library at `path` as `spec` says, in this process.
///
/// # Errors
///
/// A spec that cannot run, or a library that cannot be loaded, or a read that fails or breaks a
/// rule.
pub fn measure(path: &Path, spec: &BenchSpec) -> Result<BenchReport> {
    if spec.repeat == 0 {
        return Err(Error::usage(
            "--repeat must be 1 or more: the number of runs of each measure",
        ));
    }
    let time = std::sync::Arc::new(LibraryTime::default());
    let host = HostOptions {
        observer: Some(time.clone()),
        ..HostOptions::default()
    };
    // The steps hold a library for the process, as libraries are never unloaded.
    let library: &'static Library = Box::leak(Box::new(Library::load_with(path, host)?));
    let protocols = protocols_to_measure(library, spec)?;
    if spec.write_batch_rows == 0 || spec.write_tasks == 0 {
        return Err(Error::usage(
            "--write-batch-rows and --write-tasks must be 1 or more",
        ));
    }
    let modes = modes_to_measure(spec, library.bench_entry().is_some());
    let mut measures = Vec::new();
    let mut filters_accepted: Option<Vec<bool>> = None;
    for protocol in protocols {
        measures.extend(measure_protocol(
            Run {
                library,
                time: &time,
                spec,
                mode: Mode::Unchecked,
            },
            protocol,
            &modes,
            &mut filters_accepted,
        )?);
    }
    Ok(BenchReport {
        library: path.display().to_string(),
        options: sparkds::redact::redacted(&spec.options),
        columns: spec.columns.clone(),
        filters: bench_filters(spec, filters_accepted.as_deref()),
        repeat: spec.repeat,
        reference: library.bench_entry().is_some(),
        measures,
    })
}

/// The protocol asked for, else the reads the source declares.
fn protocols_to_measure(library: &Library, spec: &BenchSpec) -> Result<Vec<BenchProtocol>> {
    let protocols = match spec.protocol {
        Some(protocol) => vec![protocol],
        None => {
            let capabilities = library.capabilities(spec.options.clone())?;
            let mut protocols = Vec::new();
            if capabilities.batch_read() {
                protocols.push(BenchProtocol::BatchRead);
            }
            if capabilities.micro_batch_read() {
                protocols.push(BenchProtocol::MicroBatchRead);
            }
            protocols
        }
    };
    if protocols.is_empty() {
        return Err(Error::usage(
            "the source declares neither SPARK_DS_BATCH_READ nor SPARK_DS_MICRO_BATCH_READ, and bench measures reads only for now",
        ));
    }
    Ok(protocols)
}

/// With the checks (when asked for), without, then in-process when the library exports the
/// reference.
fn modes_to_measure(spec: &BenchSpec, reference: bool) -> Vec<Mode> {
    let mut modes = Vec::new();
    if spec.checks {
        modes.push(Mode::Checked);
    }
    modes.push(Mode::Unchecked);
    if reference {
        modes.push(Mode::InProcess);
    }
    modes
}

/// The best run of `protocol` in each mode, with its peak RSS over all runs; the filters the
/// source accepted go to `filters_accepted`.
fn measure_protocol(
    run: Run<'_>,
    protocol: BenchProtocol,
    modes: &[Mode],
    filters_accepted: &mut Option<Vec<bool>>,
) -> Result<Vec<Measure>> {
    // A write is driven as Spark drives it; `cargo sparkds check` checks writes.
    let modes: Vec<Mode> = modes
        .iter()
        .copied()
        .filter(|mode| protocol != BenchProtocol::BatchWrite || !matches!(mode, Mode::Checked))
        .collect();
    let mut best: Vec<Option<Counts>> = modes.iter().map(|_| None).collect();
    let mut peaks: Vec<Option<u64>> = vec![None; modes.len()];
    // The runs of the modes alternate, so that a machine busy with something else for a
    // while slows them alike, and their ratios hold.
    for _ in 0..run.spec.repeat {
        for (i, &mode) in modes.iter().enumerate() {
            let (counts, peak) = run_once(Run { mode, ..run }, protocol)?;
            peaks[i] = max_option(peaks[i], peak);
            if counts.filters_accepted.is_some() {
                *filters_accepted = counts.filters_accepted.clone();
            }
            if best[i].as_ref().is_none_or(|b| counts.wall < b.wall) {
                best[i] = Some(counts);
            }
        }
    }
    let mut measures = Vec::new();
    for ((mode, best), peak) in modes.iter().zip(best).zip(peaks) {
        if let Some(best) = best {
            measures.push(best.measure(
                protocol.name(),
                matches!(mode, Mode::Checked),
                matches!(mode, Mode::InProcess),
                peak,
            ));
        }
    }
    Ok(measures)
}

/// One run of `protocol`: its counts and its peak RSS over the baseline.
fn run_once(run: Run<'_>, protocol: BenchProtocol) -> Result<(Counts, Option<u64>)> {
    let rss = Rss::start();
    let counts = match protocol {
        BenchProtocol::BatchRead => run.batch_read()?,
        BenchProtocol::MicroBatchRead => run.micro_batches()?,
        BenchProtocol::BatchWrite => run.batch_write()?,
    };
    let peak = rss.peak_over_baseline();
    Ok((counts, peak))
}

/// Each filter asked for, in SQL, with whether the source accepted it.
fn bench_filters(spec: &BenchSpec, filters_accepted: Option<&[bool]>) -> Vec<BenchFilter> {
    spec.filters
        .iter()
        .enumerate()
        .map(|(i, f)| BenchFilter {
            filter: sparkds::filters::sql(f),
            accepted: filters_accepted.and_then(|a| a.get(i).copied()),
        })
        .collect()
}

fn max_option(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}
