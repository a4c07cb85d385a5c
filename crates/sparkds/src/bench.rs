//! The measures of `cargo sparkds bench`: reads a library through the C interface as Spark does
//! and measures it: rows/s, Arrow bytes/s, batches/s, the time spent inside the
//! library's functions against the time of the host, and the peak RSS over the process's
//! baseline.
//!
//! It measures the batch read and the micro-batch read, and the batch write when asked. Unlike
//! [`Library::batch_read`] and [`Library::stream_read`], which keep every batch for the tests, the
//! benchmark streams: each batch is imported, counted and dropped before the next `get_next`. It
//! runs each read with the conformance checks of `sparkds` (the raw checks of each C array,
//! arrow-rs's full validation and a deep copy, as [`Library::batch_read`] does), without them
//! (arrow-rs's import and its cheap structural validation only; Spark itself validates nothing),
//! and in process, so that the report shows what the checks and the interface cost. The tasks run
//! one after another on the calling thread, as one executor core runs them, so that the rates are
//! those of one core.
//!
//! In process: a library built with `spark_datasource::export!` also exports
//! `spark_ds_bench_v1`, outside the header, which runs the task side of a read (or of a write)
//! through the connector's traits with no Arrow C stream, no guard per batch and no checks, and
//! counts what it read. The planning still goes through the interface, once per run, as for the
//! other measures, so the ratio of the two is what the interface costs per batch. A library
//! without that symbol (written in C, say) is measured through the interface only.
//!
//! [`measure`] runs the measures and returns a [`BenchReport`]; the command renders it.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use arrow_array::ffi::{from_ffi_and_data_type, FFI_ArrowArray};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchIterator, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Schema, SchemaRef};
use serde::Serialize;

use crate::calls::{
    export_schema, required, schema_ptr, sink_call, sink_call_one, source_schema, still_borrowed,
};
use crate::error::{Error, Result, Violation};
use crate::filters::Filter;
use crate::header::{self, ArrowArray, ArrowArrayStream, ArrowSchema, SparkDsWriteInfo};
use crate::library::{Handle, HandleKind, Library, Source};
use crate::task::Task;

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
    /// [`REDACTED`](crate::redact::REDACTED).
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
    let library = Library::load(path)?;
    let protocols = protocols_to_measure(&library, spec)?;
    if spec.write_batch_rows == 0 || spec.write_tasks == 0 {
        return Err(Error::usage(
            "--write-batch-rows and --write-tasks must be 1 or more",
        ));
    }
    let reference = reference_entry(path);
    let modes = modes_to_measure(spec, reference);
    let mut measures = Vec::new();
    let mut filters_accepted: Option<Vec<bool>> = None;
    for protocol in protocols {
        measures.extend(measure_protocol(
            &library,
            spec,
            protocol,
            &modes,
            &mut filters_accepted,
        )?);
    }
    Ok(BenchReport {
        library: path.display().to_string(),
        options: crate::redact::redacted(&spec.options),
        columns: spec.columns.clone(),
        filters: bench_filters(spec, filters_accepted.as_deref()),
        repeat: spec.repeat,
        reference: reference.is_some(),
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
fn modes_to_measure(spec: &BenchSpec, reference: Option<BenchFunction>) -> Vec<Mode> {
    let mut modes = Vec::new();
    if spec.checks {
        modes.push(Mode::Checked);
    }
    modes.push(Mode::Unchecked);
    if let Some(entry) = reference {
        modes.push(Mode::InProcess(entry));
    }
    modes
}

/// The best run of `protocol` in each mode, with its peak RSS over all runs; the filters the
/// source accepted go to `filters_accepted`.
fn measure_protocol(
    library: &Library,
    spec: &BenchSpec,
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
    for _ in 0..spec.repeat {
        for (i, &mode) in modes.iter().enumerate() {
            let (counts, peak) = run_once(library, spec, protocol, mode)?;
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
                matches!(mode, Mode::InProcess(_)),
                peak,
            ));
        }
    }
    Ok(measures)
}

/// One run of `protocol` in `mode`: its counts and its peak RSS over the baseline.
fn run_once(
    library: &Library,
    spec: &BenchSpec,
    protocol: BenchProtocol,
    mode: Mode,
) -> Result<(Counts, Option<u64>)> {
    let driver = Driver {
        library,
        options: &spec.options,
        schema: spec.schema.clone(),
        columns: spec.columns.as_deref(),
        filters: &spec.filters,
        mode,
    };
    let rss = Rss::start();
    let counts = match protocol {
        BenchProtocol::BatchWrite => driver.run_batch_write(spec)?,
        _ => driver.run(protocol, spec.micro_batches)?,
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
            filter: crate::filters::sql(f),
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

/// What one run counted.
#[derive(Debug, Default)]
struct Counts {
    rows: u64,
    batches: u64,
    bytes: u64,
    wall: Duration,
    library: Duration,
    /// The time of the calls of the in-process reference that the library did not measure as
    /// the connector's: the pulls of the batches that a write writes, and the calls themselves.
    /// It is left out of `wall`.
    outside: Duration,
    /// What `push_filters` answered, when filters were offered to a library that has it.
    filters_accepted: Option<Vec<bool>>,
}

impl Counts {
    /// Runs `f`, a call into the library, and adds its time to the library's.
    fn in_library<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let result = f();
        self.library += start.elapsed();
        result
    }

    fn measure(
        &self,
        protocol: &str,
        checks: bool,
        in_process: bool,
        peak_rss_bytes: Option<u64>,
    ) -> Measure {
        let seconds = self.wall.as_secs_f64();
        let rate = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let library_seconds = self.library.as_secs_f64().min(seconds);
        Measure {
            protocol: protocol.to_string(),
            checks,
            in_process,
            rows: self.rows,
            batches: self.batches,
            arrow_bytes: self.bytes,
            seconds,
            library_seconds,
            host_seconds: seconds - library_seconds,
            rows_per_second: rate(self.rows),
            arrow_bytes_per_second: rate(self.bytes),
            batches_per_second: rate(self.batches),
            peak_rss_bytes,
        }
    }
}

/// The tasks of a batch read or of a micro-batch.
struct Tasks<'a> {
    stage: i32,
    /// A prefix of the context of each task, such as "micro-batch 2, ".
    prefix: &'a str,
    partitions: &'a [Vec<u8>],
    state: Option<&'a [u8]>,
    /// The schema of the streams.
    schema: &'a SchemaRef,
    /// The columns that the host keeps of each batch, when the library did not prune.
    kept: Option<&'a [usize]>,
    /// The filters that the library accepted, checked on every row with the checks (rule 31).
    accepted: &'a [Filter],
}

/// The reads of a library, driven as [`Library::batch_read`] and [`Library::stream_read`] drive
/// them, streaming their batches, and its batch writes.
struct Driver<'a> {
    library: &'a Library,
    options: &'a [(String, String)],
    schema: Option<SchemaRef>,
    columns: Option<&'a [String]>,
    filters: &'a [Filter],
    mode: Mode,
}

/// How the tasks run.
#[derive(Clone, Copy)]
enum Mode {
    /// Through the C interface, with the conformance checks of `sparkds`.
    Checked,
    /// Through the C interface, arrow-rs's import only.
    Unchecked,
    /// In process, through the library's `spark_ds_bench_v1`.
    InProcess(BenchFunction),
}

/// `SparkDsBenchCall` of the `spark_datasource` crate, version 1: what `spark_ds_bench_v1`
/// runs, and what it counted.
#[repr(C)]
struct BenchCall {
    size: i64,
    kind: i32,
    stage_id: i32,
    partition_id: i32,
    attempt_number: i32,
    task_id: i64,
    state: *const u8,
    state_length: i64,
    partition: *const u8,
    partition_length: i64,
    epoch_id: i64,
    input: *mut ArrowArrayStream,
    add: Option<header::Sink>,
    sink: *mut c_void,
    rows: i64,
    batches: i64,
    bytes: i64,
    nanos: i64,
}

/// `kind` of a [`BenchCall`] that reads a partition.
const BENCH_READ: i32 = 1;
/// `kind` of a [`BenchCall`] that runs a write task.
const BENCH_WRITE: i32 = 2;

/// The type of `spark_ds_bench_v1`.
type BenchFunction = unsafe extern "C" fn(*mut BenchCall) -> c_int;

impl BenchCall {
    /// A call of `kind` for the task `task`, with the serialized reader or writer `state`.
    fn new(kind: i32, task: &Task, state: Option<&[u8]>) -> BenchCall {
        // SAFETY: the task's context is alive for this borrow.
        let context = unsafe { &*task.as_ptr() };
        let (state, state_length) =
            state.map_or((std::ptr::null(), 0), |s| (s.as_ptr(), s.len() as i64));
        BenchCall {
            size: std::mem::size_of::<BenchCall>() as i64,
            kind,
            stage_id: context.stage_id,
            partition_id: context.partition_id,
            attempt_number: context.attempt_number,
            task_id: context.task_id,
            state,
            state_length,
            partition: std::ptr::null(),
            partition_length: 0,
            epoch_id: header::SPARK_DS_NO_EPOCH,
            input: std::ptr::null_mut(),
            add: None,
            sink: std::ptr::null_mut(),
            rows: 0,
            batches: 0,
            bytes: 0,
            nanos: 0,
        }
    }

    /// Adds what the call counted; `call` is the time the whole call took, of which the
    /// connector's share is the library's and the rest is left out of the measure.
    fn count(&self, counts: &mut Counts, call: Duration) {
        let connector = Duration::from_nanos(self.nanos.max(0) as u64);
        counts.rows += self.rows.max(0) as u64;
        counts.batches += self.batches.max(0) as u64;
        counts.bytes += self.bytes.max(0) as u64;
        counts.library += connector;
        counts.outside += call.saturating_sub(connector);
    }
}

/// The library's `spark_ds_bench_v1`, when it has one.
fn reference_entry(path: &Path) -> Option<BenchFunction> {
    // SAFETY: `Library::load` loaded this file already and never unloads it: this only takes
    // another reference to the same loaded library, whose initializers have run.
    let loaded = unsafe { libloading::Library::new(path) }.ok()?;
    // SAFETY: `spark_ds_bench_v1` has the type `BenchFunction` (the `spark_datasource` crate's
    // `bench_entry` module); the name carries the version of `BenchCall`.
    let entry = unsafe { loaded.get::<BenchFunction>(b"spark_ds_bench_v1\0") }
        .ok()
        .map(|symbol| *symbol);
    // Never unloaded, as `Library::load` does: the function stays valid for the process.
    std::mem::forget(loaded);
    entry
}

/// `create_writer` in append mode, as the driver opens a write.
fn open_writer<'l>(
    library: &'l Library,
    source: &Source<'l>,
    ffi_schema: &arrow_schema::ffi::FFI_ArrowSchema,
    counts: &mut Counts,
) -> Result<Handle<'l>> {
    let query_id = CString::new("sparkds-bench").map_err(|_| Error::usage("a NUL byte"))?;
    let info = SparkDsWriteInfo {
        size: std::mem::size_of::<SparkDsWriteInfo>() as i64,
        schema: schema_ptr(ffi_schema),
        query_id: query_id.as_ptr(),
        mode: header::SPARK_DS_WRITE_APPEND,
        streaming: 0,
    };
    let create_writer = required(library.table().create_writer, "create_writer")?;
    let writer = counts.in_library(|| {
        library.open("create_writer", None, HandleKind::Writer, |writer| {
            // SAFETY: the source is open; `info` and what it points to are borrowed for the
            // call; `writer` is valid for writes.
            unsafe { create_writer(source.handle.ptr(), &info, writer) }
        })
    })?;
    still_borrowed(ffi_schema, "create_writer", None)?;
    Ok(writer)
}

/// One write task through the library's in-process reference (`spark_ds_bench_v1`): the
/// batches moved to it as one stream, and its commit message.
fn bench_write_task(
    library: &Library,
    entry: BenchFunction,
    task: &Task,
    context: &str,
    state: &[u8],
    input: RecordBatchIterator<
        impl Iterator<Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>>
            + Send
            + 'static,
    >,
    counts: &mut Counts,
) -> Result<Vec<u8>> {
    let mut call = BenchCall::new(BENCH_WRITE, task, Some(state));
    let mut input = FFI_ArrowArrayStream::new(Box::new(input));
    call.input = (&mut input as *mut FFI_ArrowArrayStream).cast();
    let started = Instant::now();
    let message = sink_call_one(library, "spark_ds_bench_v1", Some(context), |add, sink| {
        call.add = Some(add);
        call.sink = sink;
        // SAFETY: the call and what it points to are borrowed for the call; the stream is
        // moved to the library.
        unsafe { entry(&mut call) }
    })?;
    call.count(counts, started.elapsed());
    Ok(message)
}

/// A streaming query's reader, open on its source.
struct OpenStream<'l> {
    // Declared before the source: the reader closes first.
    reader: Handle<'l>,
    _source: Source<'l>,
    schema: SchemaRef,
    /// The columns kept by `prune_columns`, when a projection was asked.
    kept: Option<Vec<usize>>,
}

/// The partitions of a read, and the reader's state when the library serializes it.
type Plan = (Vec<Vec<u8>>, Option<Vec<u8>>);

impl Driver<'_> {
    fn run(&self, protocol: BenchProtocol, micro_batches: usize) -> Result<Counts> {
        match protocol {
            BenchProtocol::BatchRead => self.run_batch_read(),
            BenchProtocol::MicroBatchRead => self.run_micro_batches(micro_batches),
            BenchProtocol::BatchWrite => Err(Error::usage(
                "a batch write is run by run_batch_write; this is a bug of sparkds",
            )),
        }
    }

    fn run_batch_read(&self) -> Result<Counts> {
        let mut counts = Counts::default();
        let start = Instant::now();
        let library = self.library;
        let table = library.table();
        let source = counts.in_library(|| library.create(self.options))?;
        if !source.capabilities.batch_read() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_BATCH_READ",
                operation: "a batch read",
            });
        }
        let schema = counts.in_library(|| source_schema(library, &source, self.schema.clone()))?;
        let ffi_schema = export_schema(&schema)?;
        let create_reader = required(table.create_reader, "create_reader")?;
        let reader = counts.in_library(|| {
            library.open("create_reader", None, HandleKind::Reader, |reader| {
                // SAFETY: the source is open, the schema is borrowed for the call, `reader` is
                // valid for writes.
                unsafe { create_reader(source.handle.ptr(), schema_ptr(&ffi_schema), reader) }
            })
        })?;
        still_borrowed(&ffi_schema, "create_reader", None)?;
        let accepted = self.push_filters(&reader, &mut counts)?;
        let (read_schema, kept) = self.prune_columns(&reader, &schema, &mut counts)?;
        let (partitions, state) = self.plan_batch_read(&reader, &mut counts)?;
        counts.in_library(|| {
            drop(reader);
            drop(source);
        });
        self.read_tasks(
            Tasks {
                stage: 0,
                prefix: "",
                partitions: &partitions,
                state: state.as_deref(),
                schema: &read_schema,
                kept: kept.as_deref(),
                accepted: &accepted,
            },
            &mut counts,
        )?;
        counts.wall = start.elapsed().saturating_sub(counts.outside);
        Ok(counts)
    }

    /// Pushes the filters to the reader, when there are some and the library takes them: the
    /// filters it accepted (its answers go to `counts`).
    fn push_filters(&self, reader: &Handle<'_>, counts: &mut Counts) -> Result<Vec<Filter>> {
        let library = self.library;
        let mut accepted = Vec::new();
        if let (false, Some(push_filters)) = (self.filters.is_empty(), library.push_filters()) {
            let encoded = crate::filters::encode_all(self.filters)?;
            let answers = counts.in_library(|| {
                // SAFETY: the reader is open until it is dropped by `run_batch_read`.
                unsafe {
                    crate::calls::push_filters(
                        library,
                        push_filters,
                        reader.ptr(),
                        &encoded,
                        self.filters.len(),
                    )
                }
            })?;
            accepted = self
                .filters
                .iter()
                .zip(&answers)
                .filter(|(_, a)| **a)
                .map(|(f, _)| f.clone())
                .collect();
            counts.filters_accepted = Some(answers);
        }
        Ok(accepted)
    }

    /// The schema of the stream, and the columns the host keeps of it when the library
    /// cannot prune (Spark then projects them).
    fn prune_columns(
        &self,
        reader: &Handle<'_>,
        schema: &SchemaRef,
        counts: &mut Counts,
    ) -> Result<(SchemaRef, Option<Vec<usize>>)> {
        let library = self.library;
        let mut read_schema = schema.clone();
        let mut kept = None;
        if let Some(columns) = self.columns {
            let (pruned, indices) = crate::calls::prune(schema, columns)?;
            match library.table().prune_columns {
                Some(prune_columns) => {
                    let required = export_schema(&pruned)?;
                    counts.in_library(|| {
                        library.call("prune_columns", None, || {
                            // SAFETY: the reader is open and the schema is borrowed for the call.
                            unsafe { prune_columns(reader.ptr(), schema_ptr(&required)) }
                        })
                    })?;
                    still_borrowed(&required, "prune_columns", None)?;
                    read_schema = pruned;
                }
                None => kept = Some(indices),
            }
        }
        Ok((read_schema, kept))
    }

    /// The partitions of a batch read, and the reader's state when the library serializes it.
    fn plan_batch_read(&self, reader: &Handle<'_>, counts: &mut Counts) -> Result<Plan> {
        let library = self.library;
        let table = library.table();
        let partitions_fn = required(table.partitions, "partitions")?;
        let partitions = counts.in_library(|| {
            sink_call(library, "partitions", None, |add, sink| {
                // SAFETY: the reader is open; the sink is open for the call.
                unsafe { partitions_fn(reader.ptr(), add, sink) }
            })
        })?;
        let state = match table.serialize_reader {
            Some(serialize) => Some(counts.in_library(|| {
                sink_call_one(library, "serialize_reader", None, |add, sink| {
                    // SAFETY: the reader is open; the sink is open for the call.
                    unsafe { serialize(reader.ptr(), add, sink) }
                })
            })?),
            None => None,
        };
        Ok((partitions, state))
    }

    /// A streaming read of `micro_batches` micro-batches, as a query with a trigger runs it:
    /// `latest_offset`, the commit of the previous end, `stream_partitions` and the tasks. A
    /// micro-batch read has no `prune_columns`: the host keeps the columns, as Spark does.
    fn run_micro_batches(&self, micro_batches: usize) -> Result<Counts> {
        let mut counts = Counts::default();
        let start_time = Instant::now();
        let library = self.library;
        let stream = self.open_stream(&mut counts)?;
        let initial = required(library.table().initial_offset, "initial_offset")?;
        let mut start = counts.in_library(|| {
            sink_call_one(library, "initial_offset", None, |add, sink| {
                // SAFETY: the reader is open; the sink is open for the call.
                unsafe { initial(stream.reader.ptr(), add, sink) }
            })
        })?;
        // Spark commits the end of a micro-batch when it plans the next one.
        let mut uncommitted: Option<Vec<u8>> = None;
        for index in 0..micro_batches {
            let end = self.micro_batch(&stream, index, &start, uncommitted.take(), &mut counts)?;
            if end != start {
                uncommitted = Some(end.clone());
                start = end;
            }
        }
        counts.in_library(|| drop(stream));
        counts.wall = start_time.elapsed().saturating_sub(counts.outside);
        Ok(counts)
    }

    /// `create`, the schema, and `create_stream_reader`, as a streaming query starts.
    fn open_stream(&self, counts: &mut Counts) -> Result<OpenStream<'_>> {
        let library = self.library;
        let source = counts.in_library(|| library.create(self.options))?;
        if !source.capabilities.micro_batch_read() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_MICRO_BATCH_READ",
                operation: "a streaming read",
            });
        }
        let schema = counts.in_library(|| source_schema(library, &source, self.schema.clone()))?;
        let kept = match self.columns {
            Some(columns) => Some(crate::calls::prune(&schema, columns)?.1),
            None => None,
        };
        let ffi_schema = export_schema(&schema)?;
        let create = required(library.table().create_stream_reader, "create_stream_reader")?;
        let reader = counts.in_library(|| {
            library.open(
                "create_stream_reader",
                None,
                HandleKind::StreamReader,
                |reader| {
                    // SAFETY: the source is open; the schema is borrowed; `reader` is valid for
                    // writes.
                    unsafe { create(source.handle.ptr(), schema_ptr(&ffi_schema), reader) }
                },
            )
        })?;
        still_borrowed(&ffi_schema, "create_stream_reader", None)?;
        Ok(OpenStream {
            reader,
            _source: source,
            schema,
            kept,
        })
    }

    /// Micro-batch `index` from `start`: `latest_offset`, the commit of the previous batch's
    /// end, and when there is new data its plan and its tasks. Returns the batch's end.
    fn micro_batch(
        &self,
        stream: &OpenStream<'_>,
        index: usize,
        start: &[u8],
        uncommitted: Option<Vec<u8>>,
        counts: &mut Counts,
    ) -> Result<Vec<u8>> {
        let (library, table, reader) = (self.library, self.library.table(), &stream.reader);
        let latest = required(table.latest_offset, "latest_offset")?;
        let plan = required(table.stream_partitions, "stream_partitions")?;
        let context = format!("micro-batch {index}");
        let ctx = Some(context.as_str());
        let end = counts.in_library(|| {
            sink_call_one(library, "latest_offset", ctx, |add, sink| {
                // SAFETY: the reader is open; `start` is borrowed; the sink is open.
                unsafe { latest(reader.ptr(), start.as_ptr(), start.len() as i64, add, sink) }
            })
        })?;
        if let (Some(commit), Some(done)) = (table.commit_offset, uncommitted) {
            counts.in_library(|| {
                library.call("commit_offset", ctx, || {
                    // SAFETY: the reader is open; `done` is borrowed for the call.
                    unsafe { commit(reader.ptr(), done.as_ptr(), done.len() as i64) }
                })
            })?;
        }
        if end == start {
            return Ok(end);
        }
        let partitions = counts.in_library(|| {
            sink_call(library, "stream_partitions", ctx, |add, sink| {
                let (start_length, end_length) = (start.len() as i64, end.len() as i64);
                // SAFETY: the reader is open; the offsets are borrowed; the sink is open.
                unsafe {
                    plan(
                        reader.ptr(),
                        start.as_ptr(),
                        start_length,
                        end.as_ptr(),
                        end_length,
                        add,
                        sink,
                    )
                }
            })
        })?;
        let state = match table.serialize_stream_reader {
            Some(serialize) => Some(counts.in_library(|| {
                sink_call_one(library, "serialize_stream_reader", ctx, |add, sink| {
                    // SAFETY: the reader is open; the sink is open for the call.
                    unsafe { serialize(reader.ptr(), add, sink) }
                })
            })?),
            None => None,
        };
        let tasks = Tasks {
            stage: i32::try_from(index).unwrap_or(i32::MAX),
            prefix: &format!("{context}, "),
            partitions: &partitions,
            state: state.as_deref(),
            schema: &stream.schema,
            kept: stream.kept.as_deref(),
            accepted: &[],
        };
        self.read_tasks(tasks, counts)?;
        Ok(end)
    }

    /// A batch write in append mode, as `df.write...save()` runs it: `create_writer` and
    /// `serialize_writer` on the driver, then one task after another (`create_data_writer`,
    /// `write` of each batch, `commit_data_writer`), then `commit`. Every batch is the same
    /// batch of sample rows (its last one maybe sliced), made once, so that the time measured is
    /// the library's and the interface's, not the making of the data.
    fn run_batch_write(&self, spec: &BenchSpec) -> Result<Counts> {
        let mut counts = Counts::default();
        let library = self.library;
        let source = library.create(self.options)?;
        if !source.capabilities.batch_write() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_BATCH_WRITE",
                operation: "a batch write",
            });
        }
        let schema = source_schema(library, &source, self.schema.clone())?;
        let sample = crate::sample::rows(&schema, 0, spec.write_batch_rows)?;
        drop(source);

        let start = Instant::now();
        let source = counts.in_library(|| library.create(self.options))?;
        let ffi_schema = export_schema(&schema)?;
        let writer = open_writer(library, &source, &ffi_schema, &mut counts)?;
        let serialize = required(library.table().serialize_writer, "serialize_writer")?;
        let state = counts.in_library(|| {
            sink_call_one(library, "serialize_writer", None, |add, sink| {
                // SAFETY: the writer is open; the sink is open for the call.
                unsafe { serialize(writer.ptr(), add, sink) }
            })
        })?;
        let tasks = spec.write_tasks as u64;
        let mut messages = Vec::new();
        for index in 0..spec.write_tasks {
            let i = index as u64;
            let rows = spec.write_rows * (i + 1) / tasks - spec.write_rows * i / tasks;
            let batches = sample_batches(&sample, rows);
            let task = Task::new(0, index);
            let context = format!("task {index}");
            let message = match self.mode {
                Mode::InProcess(entry) => {
                    let input = RecordBatchIterator::new(batches.map(Ok), schema.clone());
                    bench_write_task(library, entry, &task, &context, &state, input, &mut counts)?
                }
                _ => self.write_task(&task, &context, &state, &ffi_schema, batches, &mut counts)?,
            };
            messages.push(message);
        }
        self.commit_write(&writer, &messages, &mut counts)?;
        counts.in_library(|| {
            drop(writer);
            drop(source);
        });
        counts.wall = start.elapsed().saturating_sub(counts.outside);
        Ok(counts)
    }

    /// `commit` of the tasks' messages, as the driver ends a write.
    fn commit_write(
        &self,
        writer: &Handle<'_>,
        messages: &[Vec<u8>],
        counts: &mut Counts,
    ) -> Result<()> {
        let library = self.library;
        let commit = required(library.table().commit, "commit")?;
        let pointers: Vec<*const u8> = messages.iter().map(|m| m.as_ptr()).collect();
        let lengths: Vec<i64> = messages.iter().map(|m| m.len() as i64).collect();
        counts.in_library(|| {
            library.call("commit", None, || {
                // SAFETY: the writer is open; the message arrays are borrowed for the call.
                unsafe {
                    commit(
                        writer.ptr(),
                        header::SPARK_DS_NO_EPOCH,
                        pointers.as_ptr(),
                        lengths.as_ptr(),
                        messages.len() as i64,
                    )
                }
            })
        })
    }

    /// One write task through the interface: each batch exported as Spark exports it, moved to
    /// `write`, and its commit message.
    fn write_task(
        &self,
        task: &Task,
        context: &str,
        state: &[u8],
        schema: &arrow_schema::ffi::FFI_ArrowSchema,
        batches: impl Iterator<Item = RecordBatch>,
        counts: &mut Counts,
    ) -> Result<Vec<u8>> {
        let library = self.library;
        let table = library.table();
        let ctx = Some(context);
        let create = required(table.create_data_writer, "create_data_writer")?;
        let data_writer = counts.in_library(|| {
            library.open(
                "create_data_writer",
                ctx,
                HandleKind::DataWriter,
                |handle| {
                    // SAFETY: the task and the state are borrowed for the call; `handle` is valid
                    // for writes.
                    unsafe {
                        create(
                            task.as_ptr(),
                            state.as_ptr(),
                            state.len() as i64,
                            header::SPARK_DS_NO_EPOCH,
                            handle,
                        )
                    }
                },
            )
        })?;
        let write = required(table.write, "write")?;
        for batch in batches {
            let data = StructArray::from(batch).into_data();
            counts.rows += data.len() as u64;
            counts.batches += 1;
            counts.bytes += buffer_bytes(&data);
            let mut array = FFI_ArrowArray::new(&data);
            let raw = (&mut array as *mut FFI_ArrowArray).cast::<ArrowArray>();
            counts.in_library(|| {
                library.call("write", ctx, || {
                    // SAFETY: the data writer is open; the schema is borrowed; the batch is
                    // moved to the library, which releases it (arrow-rs's drop of `array` then
                    // finds it released).
                    unsafe { write(data_writer.ptr(), schema_ptr(schema), raw) }
                })
            })?;
        }
        let commit = required(table.commit_data_writer, "commit_data_writer")?;
        let message = counts.in_library(|| {
            sink_call_one(library, "commit_data_writer", ctx, |add, sink| {
                // SAFETY: the data writer is open; the sink is open for the call.
                unsafe { commit(data_writer.ptr(), add, sink) }
            })
        })?;
        counts.in_library(|| drop(data_writer));
        Ok(message)
    }

    /// The executor side: one task after another, each reading its stream to the end.
    fn read_tasks(&self, tasks: Tasks<'_>, counts: &mut Counts) -> Result<()> {
        let library = self.library;
        let read = required(library.table().read, "read")?;
        for (index, partition) in tasks.partitions.iter().enumerate() {
            let task = Task::new(tasks.stage, index);
            let context = format!("{}partition {index}", tasks.prefix);
            if let Mode::InProcess(entry) = self.mode {
                let mut call = BenchCall::new(BENCH_READ, &task, tasks.state);
                call.partition = partition.as_ptr();
                call.partition_length = partition.len() as i64;
                let started = Instant::now();
                library.call("spark_ds_bench_v1", Some(&context), || {
                    // SAFETY: the call and the bytes it points to are borrowed for the call.
                    unsafe { entry(&mut call) }
                })?;
                call.count(counts, started.elapsed());
                continue;
            }
            // The task lives until the stream is released, at the end of this iteration.
            let stream = counts.in_library(|| {
                crate::calls::call_read(library, read, &task, tasks.state, partition, &context)
            })?;
            let mut stream = Stream::adopt(stream, &context)?;
            let result = self.read_stream(
                &mut stream,
                tasks.schema,
                tasks.kept,
                tasks.accepted,
                counts,
            );
            counts.in_library(|| drop(stream));
            result?;
        }
        Ok(())
    }

    /// Reads one stream to its end, counting and dropping each batch.
    fn read_stream(
        &self,
        stream: &mut Stream<'_>,
        schema: &SchemaRef,
        kept: Option<&[usize]>,
        accepted: &[Filter],
        counts: &mut Counts,
    ) -> Result<()> {
        check_stream_schema(stream, schema, counts)?;
        let struct_type = DataType::Struct(schema.fields().clone());
        let checks = matches!(self.mode, Mode::Checked);
        while let Some(data) = next_batch(stream, schema, &struct_type, checks, counts)? {
            if checks && !accepted.is_empty() {
                check_filters(stream, &data, accepted, counts.batches)?;
            }
            count_batch(&data, kept, counts);
            // Without the checks the buffers are the library's: dropping them releases them.
            if checks {
                drop(data);
            } else {
                counts.in_library(|| drop(data));
            }
        }
        if checks {
            check_end_repeats(stream, counts)?;
        }
        Ok(())
    }
}

/// The stream's schema is the schema asked for (rule 19).
fn check_stream_schema(
    stream: &mut Stream<'_>,
    schema: &SchemaRef,
    counts: &mut Counts,
) -> Result<()> {
    let mut raw_schema = ArrowSchema::empty();
    // SAFETY: the stream is live and `raw_schema` is valid for writes.
    let rc = counts.in_library(|| unsafe { (stream.get_schema)(stream.ptr(), &mut raw_schema) });
    if rc != 0 {
        return Err(stream.failure("get_schema", rc));
    }
    let got = crate::import::import_schema(&mut raw_schema)
        .map_err(|(rule, m)| stream.violation(rule, format!("the stream's schema: {m}")))?;
    if !crate::import::same_schema(&got, schema) {
        return Err(stream.violation(
            19,
            "the stream's schema is not the schema asked for; return exactly the schema to read, after `prune_columns`".into(),
        ));
    }
    Ok(())
}

/// The next batch of the stream, imported with the checks or as arrow-rs imports it; `None` at
/// the end of the stream.
fn next_batch(
    stream: &mut Stream<'_>,
    schema: &SchemaRef,
    struct_type: &DataType,
    checks: bool,
    counts: &mut Counts,
) -> Result<Option<ArrayData>> {
    let mut raw = ArrowArray::empty();
    // SAFETY: the stream is live and `raw` is valid for writes.
    let rc = counts.in_library(|| unsafe { (stream.get_next)(stream.ptr(), &mut raw) });
    if rc != 0 {
        return Err(stream.failure("get_next", rc));
    }
    if raw.release.is_none() {
        return Ok(None);
    }
    let index = counts.batches;
    let data = if checks {
        // SAFETY: `raw` was just written by `get_next`, which moved it to the host.
        unsafe { import_checked(&mut raw, schema, counts) }
    } else {
        // SAFETY: as above.
        unsafe { import_unchecked(raw, struct_type) }
    }
    .map_err(|(rule, m)| stream.violation(rule, format!("batch {index}{m}")))?;
    Ok(Some(data))
}

/// The rows of batch `index` satisfy the accepted filters (rule 31).
fn check_filters(
    stream: &Stream<'_>,
    data: &ArrayData,
    accepted: &[Filter],
    index: u64,
) -> Result<()> {
    let batch = RecordBatch::from(StructArray::from(data.clone()));
    crate::filters::check_batch(accepted, &batch, index as usize)
        .map_err(|(rule, m)| stream.violation(rule, m))
}

/// Counts the rows, the batch and the bytes of its kept columns.
fn count_batch(data: &ArrayData, kept: Option<&[usize]>, counts: &mut Counts) {
    counts.rows += data.len() as u64;
    counts.batches += 1;
    counts.bytes += match kept {
        Some(indices) => indices
            .iter()
            .filter_map(|&i| data.child_data().get(i))
            .map(buffer_bytes)
            .sum(),
        None => buffer_bytes(data),
    };
}

/// The end of the stream repeats (rule 19): one more `get_next` gives 0 and a released array.
fn check_end_repeats(stream: &mut Stream<'_>, counts: &mut Counts) -> Result<()> {
    let mut raw = ArrowArray::empty();
    // SAFETY: the stream is live and `raw` is valid for writes.
    let rc = counts.in_library(|| unsafe { (stream.get_next)(stream.ptr(), &mut raw) });
    if let Some(release) = raw.release {
        // SAFETY: the array was moved to the host; it is released once, here.
        counts.in_library(|| unsafe { release(&mut raw) });
    }
    if rc != 0 || raw.release.is_some() {
        return Err(stream.violation(19, "`get_next` returned a batch or an error after the end of the stream; the end must repeat (0 and a released array)".into()));
    }
    Ok(())
}

/// What `show` does with each batch (`import::checked_copy`: the raw checks of the C array,
/// arrow-rs's import, its full validation and a deep copy), then the release of the library's
/// array, timed as the library's. Errors continue "batch N".
///
/// # Safety
///
/// `raw` was moved to the host by `get_next` and is not released yet.
unsafe fn import_checked(
    raw: &mut ArrowArray,
    schema: &Schema,
    counts: &mut Counts,
) -> std::result::Result<ArrayData, (u32, String)> {
    // SAFETY: the caller's contract.
    let result = unsafe { crate::import::checked_copy(raw, schema) };
    if let Some(release) = raw.release {
        // SAFETY: the array was moved to the host, which releases it once, here.
        counts.in_library(|| unsafe { release(raw) });
    }
    result
}

/// arrow-rs's import alone, with its structural validation (buffer sizes, first and last
/// offsets), which reads no values: the array stays the library's until the data is dropped.
///
/// # Safety
///
/// `raw` was moved to the host by `get_next` and is not released yet.
unsafe fn import_unchecked(
    raw: ArrowArray,
    struct_type: &DataType,
) -> std::result::Result<ArrayData, (u32, String)> {
    // SAFETY: the layouts are identical; `raw` is moved, so arrow-rs releases it, once.
    let owned: FFI_ArrowArray =
        unsafe { std::ptr::read(&raw as *const ArrowArray as *const FFI_ArrowArray) };
    // `ArrowArray` has no `Drop`: the struct read here is the only owner of the array.
    let data = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract; arrow-rs reads the structure as the type says.
        unsafe { from_ffi_and_data_type(owned, struct_type.clone()) }
    }))
    .map_err(|_| (12, ": arrow-rs panicked importing it".to_string()))?
    .map_err(|e| (12, format!(": arrow-rs cannot import it: {e}")))?;
    data.validate()
        .map_err(|e| (12, format!(": fails arrow-rs's validation: {e}")))?;
    Ok(data)
}

/// `rows` rows of `sample`'s, in batches of its size: the same batch again, the last one sliced.
fn sample_batches(
    sample: &RecordBatch,
    rows: u64,
) -> impl Iterator<Item = RecordBatch> + Send + 'static {
    let size = sample.num_rows().max(1) as u64;
    let sample = sample.clone();
    (0..rows.div_ceil(size)).map(move |i| {
        let n = (rows - i * size).min(size) as usize;
        if n == sample.num_rows() {
            sample.clone()
        } else {
            sample.slice(0, n)
        }
    })
}

/// The sum of the sizes of the buffers of an array and of its children.
fn buffer_bytes(data: &ArrayData) -> u64 {
    let own: usize = data.buffers().iter().map(|b| b.len()).sum();
    let nulls = data.nulls().map_or(0, |n| n.buffer().len());
    (own + nulls) as u64 + data.child_data().iter().map(buffer_bytes).sum::<u64>()
}

/// A stream that `read` returned, released exactly once when dropped.
struct Stream<'c> {
    raw: Box<ArrowArrayStream>,
    context: &'c str,
    get_schema: unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowSchema) -> c_int,
    get_next: unsafe extern "C" fn(*mut ArrowArrayStream, *mut ArrowArray) -> c_int,
}

impl<'c> Stream<'c> {
    fn adopt(raw: Box<ArrowArrayStream>, context: &'c str) -> Result<Stream<'c>> {
        let violation = |message: &str| -> Error {
            Violation::new("read", 11, message)
                .within(Some(context))
                .into()
        };
        if raw.release.is_none() {
            return Err(violation(
                "returned 0 but a released stream (its `release` is NULL); write a stream to `out`",
            ));
        }
        match (raw.get_schema, raw.get_next) {
            (Some(get_schema), Some(get_next)) => Ok(Stream {
                raw,
                context,
                get_schema,
                get_next,
            }),
            _ => {
                let mut raw = raw;
                if let Some(release) = raw.release {
                    // SAFETY: the stream was moved to the host by `read`; this is its only
                    // release.
                    unsafe { release(&mut *raw) };
                }
                Err(violation(
                    "returned a stream whose `get_schema` or `get_next` is NULL; fill every callback",
                ))
            }
        }
    }

    fn ptr(&mut self) -> *mut ArrowArrayStream {
        &mut *self.raw
    }

    fn violation(&self, rule: u32, message: String) -> Error {
        Violation::new("read", rule, message)
            .within(Some(self.context))
            .into()
    }

    /// The error of a failing `get_schema` or `get_next`, with the stream's message.
    fn failure(&mut self, callback: &str, rc: c_int) -> Error {
        let message = self.raw.get_last_error.and_then(|get_last_error| {
            // SAFETY: the stream is live; the message is copied at once.
            let message = unsafe { get_last_error(self.ptr()) };
            if message.is_null() {
                return None;
            }
            // SAFETY: a non-NULL message is NUL-terminated and valid until the next call.
            unsafe { CStr::from_ptr(message) }
                .to_str()
                .ok()
                .map(str::to_string)
        });
        match message {
            Some(message) => Error::Library {
                function: "read".into(),
                context: Some(format!("{}, `{callback}` of the stream", self.context)),
                message: crate::redact::scrub(&message),
            },
            None => self.violation(
                7,
                format!("`{callback}` of the stream returned {rc} without a message from `get_last_error`; a failing callback must set one"),
            ),
        }
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        if let Some(release) = self.raw.release {
            // SAFETY: the stream was moved to the host by `read`; this is its only release.
            unsafe { release(&mut *self.raw) };
            self.raw.release = None;
        }
    }
}

/// The peak resident set size of this process over a baseline taken at `start`.
struct Rss {
    baseline: Option<u64>,
}

impl Rss {
    /// Takes the baseline: on Linux the peak is reset first (`/proc/self/clear_refs`), so that
    /// the baseline is the current RSS; where it cannot be reset, the peak so far.
    fn start() -> Rss {
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let status = std::fs::read_to_string("/proc/self/status").ok();
        let key = if reset { "VmRSS" } else { "VmHWM" };
        Rss {
            baseline: status.as_deref().and_then(|s| status_bytes(s, key)),
        }
    }

    /// The peak since `start` over the baseline: `None` where the platform does not tell.
    fn peak_over_baseline(&self) -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let peak = status_bytes(&status, "VmHWM")?;
        Some(peak.saturating_sub(self.baseline?))
    }
}

/// A field of `/proc/self/status` in bytes, such as `VmHWM:  123456 kB`.
pub fn status_bytes(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        if name.trim() != key {
            return None;
        }
        let mut words = value.split_whitespace();
        let number: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") => number.checked_mul(1024),
            None => Some(number),
            Some(_) => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_bytes_reads_a_field_of_proc_status_in_bytes() {
        let status = "Name:\tcargo-sparkds\nVmPeak:\t  200000 kB\nVmHWM:\t    4096 kB\nVmRSS:\t    2048 kB\nThreads:\t1\n";
        assert_eq!(status_bytes(status, "VmHWM"), Some(4096 * 1024));
        assert_eq!(status_bytes(status, "VmRSS"), Some(2048 * 1024));
        assert_eq!(status_bytes(status, "Threads"), Some(1));
        assert_eq!(status_bytes(status, "VmSwap"), None);
        assert_eq!(status_bytes("VmHWM:\t lots kB\n", "VmHWM"), None);
        assert_eq!(status_bytes("VmHWM:\t 12 MB\n", "VmHWM"), None);
    }

    #[test]
    fn the_bench_call_is_the_sdk_s_field_by_field() {
        // The library's side of the call is `SparkDsBenchCall` of spark-datasource, whose own
        // test freezes the layout of version 1: every field here sits at the same offset, and
        // the two structs have one size.
        use spark_datasource::__private::SparkDsBenchCall as Sdk;
        use std::mem::offset_of;
        macro_rules! same_offsets {
            ($($field:ident),+) => {$(
                assert_eq!(
                    offset_of!(BenchCall, $field),
                    offset_of!(Sdk, $field),
                    concat!("`", stringify!($field), "` moved")
                );
            )+};
        }
        same_offsets!(
            size,
            kind,
            stage_id,
            partition_id,
            attempt_number,
            task_id,
            state,
            state_length,
            partition,
            partition_length,
            epoch_id,
            input,
            add,
            sink,
            rows,
            batches,
            bytes,
            nanos
        );
        assert_eq!(std::mem::size_of::<BenchCall>(), std::mem::size_of::<Sdk>());
    }

    #[test]
    fn protocols_are_named_as_the_command_line_names_them() {
        for protocol in BenchProtocol::ALL {
            assert_eq!(
                protocol.name().parse::<BenchProtocol>().ok(),
                Some(protocol)
            );
        }
        assert_eq!(
            "batch"
                .parse::<BenchProtocol>()
                .err()
                .map(|e| e.to_string()),
            Some(
                "unknown protocol `batch`: use batch-read, micro-batch-read or batch-write"
                    .to_string()
            )
        );
    }
}
