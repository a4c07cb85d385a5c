//! `sparkds check`: every protocol of every capability that a source declares, each reported on
//! its own, optionally each in a child process so that a library that aborts the process
//! (rule 9) is reported instead of ending the check.
//!
//! The write protocols write only where nothing can be lost: into an empty directory that the
//! check creates (the option `path`, as `df.write.save(path)` gives it), or where the caller's
//! options point once the caller has said that it may be overwritten ([`Check::scratch`],
//! `--scratch` on the command line). A truncating write pointed at a real table would empty it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::isolate;
use crate::library::{Capabilities, Library};
use crate::write::WriteMode;
use crate::BatchReadOutcome;

/// A protocol that `check` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// `spark_ds_init`, the table, `create` and the capabilities.
    Load,
    /// A batch read, with pruning, a limit and a killed task when the library supports them.
    BatchRead,
    /// Micro-batches, with a restart from the last committed offset.
    MicroBatchRead,
    /// A batch write in append mode that commits.
    BatchWrite,
    /// A batch write whose second task fails, so the write aborts.
    FailingWrite,
    /// A batch write in truncate mode.
    TruncateWrite,
    /// A streaming write of two epochs.
    StreamingWrite,
}

impl Protocol {
    /// Every protocol, in the order `check` runs them: the writes first, so that a source
    /// that reads what was written (files at a `path`) has data to read.
    pub const ALL: [Protocol; 7] = [
        Protocol::Load,
        Protocol::BatchWrite,
        Protocol::FailingWrite,
        Protocol::TruncateWrite,
        Protocol::StreamingWrite,
        Protocol::BatchRead,
        Protocol::MicroBatchRead,
    ];

    /// Whether the protocol writes (and `TruncateWrite` replaces what is there).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Protocol::BatchWrite
                | Protocol::FailingWrite
                | Protocol::TruncateWrite
                | Protocol::StreamingWrite
        )
    }

    /// The name of the protocol, as `--protocol` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Load => "load",
            Protocol::BatchRead => "batch-read",
            Protocol::MicroBatchRead => "micro-batch-read",
            Protocol::BatchWrite => "batch-write",
            Protocol::FailingWrite => "failing-write",
            Protocol::TruncateWrite => "truncate-write",
            Protocol::StreamingWrite => "streaming-write",
        }
    }

    /// The protocol or group named `scope` in a scoped option (`write:path=...`): a protocol
    /// name, `read` for both reads, or `write` for every write.
    pub fn scope(scope: &str) -> Option<Vec<Protocol>> {
        match scope {
            "read" => Some(vec![Protocol::BatchRead, Protocol::MicroBatchRead]),
            "write" => Some(vec![
                Protocol::BatchWrite,
                Protocol::FailingWrite,
                Protocol::TruncateWrite,
                Protocol::StreamingWrite,
            ]),
            name => Protocol::ALL
                .into_iter()
                .find(|p| p.name() == name)
                .map(|p| vec![p]),
        }
    }
}

/// How one protocol went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// It ran and broke no rule: what it did.
    Passed(String),
    /// It did not apply: why.
    Skipped(String),
    /// It broke a rule: a violation, or a process that the library aborted.
    Failed(String),
    /// It could not run: the library failed, as the interface allows (often an option that
    /// this protocol needs), or the host could not run it.
    Errored(String),
    /// The check did not run it: a write whose options the caller gave, which may point at
    /// data of their own, without [`Check::scratch`].
    NotRun(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Passed(what) => write!(f, "ok: {what}"),
            Outcome::Skipped(why) => write!(f, "skipped: {why}"),
            Outcome::Failed(message) => write!(f, "FAILED: {message}"),
            Outcome::Errored(message) => write!(f, "error: {message}"),
            Outcome::NotRun(why) => write!(f, "not run: {why}"),
        }
    }
}

/// The report of a check: one outcome per protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub results: Vec<(Protocol, Outcome)>,
}

impl Report {
    /// The number of protocols that failed.
    pub fn failures(&self) -> usize {
        self.results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Failed(_)))
            .count()
    }

    /// The number of protocols that could not run.
    pub fn errors(&self) -> usize {
        self.results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Errored(_)))
            .count()
    }

    /// The number of protocols that the check did not run, since they would have written where
    /// the caller's options point.
    pub fn not_run(&self) -> usize {
        self.results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::NotRun(_)))
            .count()
    }

    /// Whether every protocol passed or was skipped: none broke a rule, none could not run,
    /// none was left out.
    pub fn passed(&self) -> bool {
        self.failures() == 0 && self.errors() == 0 && self.not_run() == 0
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (protocol, outcome) in &self.results {
            writeln!(f, "{:<18} {outcome}", protocol.name())?;
        }
        let (failures, errors, not_run) = (self.failures(), self.errors(), self.not_run());
        if failures == 0 && errors == 0 && not_run == 0 {
            return writeln!(f, "all protocols passed");
        }
        let mut parts = Vec::new();
        if failures > 0 {
            parts.push(format!(
                "{} broke a rule",
                crate::error::count(failures as i128, "protocol")
            ));
        }
        if errors > 0 {
            parts.push(format!(
                "{} could not run (the library failed: give the options they need)",
                crate::error::count(errors as i128, "protocol")
            ));
        }
        if not_run > 0 {
            parts.push(format!(
                "{} not run, to leave what the options point at as it is",
                crate::error::count(not_run as i128, "write protocol")
            ));
        }
        writeln!(f, "{}", parts.join("; "))
    }
}

/// A check of a library: every protocol, in this process or each in a child process.
///
/// The write protocols write into an empty directory that the check creates for each (the
/// option `path`), and run with options of the caller only once [`Check::scratch`] says that
/// what they point at may be overwritten: otherwise they are [`Outcome::NotRun`].
///
/// ```no_run
/// # fn main() -> Result<(), sparkds::Error> {
/// let library = sparkds::cdylib("spark_datasource_my_source")?;
/// let table = tempfile::tempdir().map_err(|e| sparkds::Error::io("a directory", e))?;
/// let report = sparkds::check::Check::new(&library)
///     .option("path", table.path().display().to_string())
///     .scratch()
///     .isolated(sparkds::sparkds_binary()?)
///     .run();
/// assert!(report.passed(), "{report}");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a check does nothing until `run`"]
pub struct Check {
    library: PathBuf,
    options: Vec<(String, String)>,
    scoped: Vec<(Protocol, String, String)>,
    schema: Option<String>,
    binary: Option<PathBuf>,
    protocols: Vec<Protocol>,
    scratch: bool,
}

impl Check {
    /// A check of the library at `library`.
    pub fn new(library: impl AsRef<Path>) -> Self {
        Check {
            library: library.as_ref().to_path_buf(),
            options: Vec::new(),
            scoped: Vec::new(),
            schema: None,
            binary: None,
            protocols: Protocol::ALL.to_vec(),
            scratch: false,
        }
    }

    /// Says that what the options point at (a directory, a table) may be overwritten: the
    /// write protocols then run with the options, one of them in truncate mode, which replaces
    /// what is there. Without it, a write protocol that any option of the check reaches is not
    /// run ([`Outcome::NotRun`]); give the reads their options with
    /// [`Check::protocol_option`] instead.
    pub fn scratch(mut self) -> Self {
        self.scratch = true;
        self
    }

    crate::builders::option_setters!("Adds an option passed to every `create`.", options);

    /// Adds an option passed only to the `create` calls of `protocol`, after the others (a
    /// source may need a `path` to write that its stream reader refuses).
    pub fn protocol_option(
        mut self,
        protocol: Protocol,
        key: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.scoped.push((protocol, key.into(), value.into()));
        self
    }

    /// The options of `protocol`: the common ones, then its own.
    fn options_of(&self, protocol: Protocol) -> Vec<(String, String)> {
        let mut options = self.options.clone();
        options.extend(
            self.scoped
                .iter()
                .filter(|(p, _, _)| *p == protocol)
                .map(|(_, k, v)| (k.clone(), v.clone())),
        );
        options
    }

    /// A schema, as DDL, for a source without `schema` (see [`crate::ddl::parse`]).
    pub fn schema(mut self, ddl: impl Into<String>) -> Self {
        self.schema = Some(ddl.into());
        self
    }

    /// Runs each protocol in a child process, `binary check --protocol ...` (the `sparkds`
    /// binary, see [`crate::sparkds_binary`]), so that a library that aborts is reported.
    pub fn isolated(mut self, binary: impl Into<PathBuf>) -> Self {
        self.binary = Some(binary.into());
        self
    }

    /// Runs only these protocols.
    pub fn protocols(mut self, protocols: impl IntoIterator<Item = Protocol>) -> Self {
        self.protocols = protocols.into_iter().collect();
        self
    }

    /// Runs the check.
    pub fn run(&self) -> Report {
        let mut results = Vec::new();
        let mut loaded = None;
        for protocol in &self.protocols {
            // When the library does not even load and create a source, every other protocol
            // would fail the same way: report it once.
            if loaded == Some(false) {
                results.push((
                    *protocol,
                    Outcome::Skipped("the library did not load and create a source".into()),
                ));
                continue;
            }
            let outcome = match &self.binary {
                Some(binary) => self.run_child(binary, *protocol),
                None => self.run_here(*protocol),
            };
            if *protocol == Protocol::Load {
                loaded = Some(matches!(outcome, Outcome::Passed(_)));
            }
            results.push((*protocol, outcome));
        }
        Report { results }
    }

    fn run_here(&self, protocol: Protocol) -> Outcome {
        let schema = match self.schema.as_deref().map(crate::ddl::parse).transpose() {
            Ok(schema) => schema,
            Err(e) => return Outcome::Errored(e.to_string()),
        };
        // Loading again is cheap: the loader returns the library already loaded.
        match Library::load(&self.library) {
            Ok(library) => run_protocol(
                &library,
                protocol,
                &self.options_of(protocol),
                schema,
                self.scratch,
            ),
            Err(e) => failure(e),
        }
    }

    /// Runs `protocol` in a child process ([`ChildCheck`]), with the options as JSON on its
    /// standard input, never on its command line, which every user of the machine can read
    /// (`ps`).
    fn run_child(&self, binary: &Path, protocol: Protocol) -> Outcome {
        let child = ChildCheck {
            library: self.library.clone(),
            protocol,
            schema: self.schema.clone(),
            scratch: self.scratch,
        };
        let mut command = Command::new(binary);
        command
            .args(child.args())
            .env(isolate::BREADCRUMBS_VAR, "1");
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let output = match isolate::spawn_with_options(&mut command, &self.options_of(protocol))
            .and_then(std::process::Child::wait_with_output)
        {
            Ok(output) => output,
            Err(e) => {
                return Outcome::Errored(format!(
                    "cannot run `{}`: {e}; install it with `cargo install --locked --path crates/cargo-sparkds` from a checkout of spark-datasource-template",
                    binary.display()
                ))
            }
        };
        let stderr = String::from_utf8_lossy(&output.stderr);
        if let Some(how) = isolate::abnormal_end(&output.status) {
            let function = isolate::last_call(&stderr).unwrap_or_else(|| "spark_ds_init".into());
            return Outcome::Failed(Error::Aborted { function, how }.to_string());
        }
        match ChildCheck::outcome(&String::from_utf8_lossy(&output.stdout)) {
            Some(outcome) => outcome,
            None => Outcome::Errored(format!(
                "the child process gave no result ({}): {}",
                output.status,
                isolate::without_breadcrumbs(&stderr).trim()
            )),
        }
    }
}

/// The flag of `cargo sparkds` that says what the options point at may be overwritten
/// ([`Check::scratch`]).
pub const SCRATCH_FLAG: &str = "--scratch";

/// The contract between `cargo sparkds check` and the child process it runs each protocol in:
/// the child's command line ([`ChildCheck::args`], which the command's parser reads back, as
/// its tests check) and its answer ([`answer`], one JSON line, which [`ChildCheck::outcome`]
/// reads). The options travel on standard input ([`isolate::spawn_with_options`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildCheck {
    /// The library the child loads.
    pub library: PathBuf,
    /// The one protocol it runs.
    pub protocol: Protocol,
    /// The schema, as DDL, for a source without `schema`.
    pub schema: Option<String>,
    /// Whether what the options point at may be overwritten ([`Check::scratch`]).
    pub scratch: bool,
}

impl ChildCheck {
    /// The child's arguments: `check --lib <library> --in-process --json --protocol <name>
    /// --options-stdin [--schema <ddl>] [--scratch]`.
    pub fn args(&self) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["check".into(), "--lib".into()];
        args.push(self.library.clone().into_os_string());
        for arg in ["--in-process", "--json", "--protocol", self.protocol.name()] {
            args.push(arg.into());
        }
        args.push(isolate::OPTIONS_STDIN_FLAG.into());
        if let Some(schema) = &self.schema {
            args.push("--schema".into());
            args.push(schema.into());
        }
        if self.scratch {
            args.push(SCRATCH_FLAG.into());
        }
        args
    }

    /// The outcome in a child's standard output: its last line that is an [`answer`] (a
    /// library may print lines of its own before it).
    pub fn outcome(stdout: &str) -> Option<Outcome> {
        stdout
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str::<Vec<(Protocol, Outcome)>>(line).ok())
            .and_then(|results| results.into_iter().next())
            .map(|(_, outcome)| outcome)
    }
}

/// The report as the child prints it for its parent (`check --json`): one line of JSON, which
/// [`ChildCheck::outcome`] reads.
///
/// # Errors
///
/// When the outcomes cannot be written as JSON.
pub fn answer(report: &Report) -> Result<String> {
    serde_json::to_string(&report.results)
        .map_err(|e| Error::usage(format!("cannot write the report as JSON: {e}")))
}

/// Runs one protocol in this process. A write runs only where nothing can be lost (see
/// [`WriteTarget`]): `scratch` says that what `options` point at may be overwritten.
pub fn run_protocol(
    library: &Library,
    protocol: Protocol,
    options: &[(String, String)],
    schema: Option<SchemaRef>,
    scratch: bool,
) -> Outcome {
    match try_protocol(library, protocol, options, schema, scratch) {
        Ok(outcome) => outcome,
        Err(e) => failure(e),
    }
}

/// A broken rule fails the protocol; any other error only stops it.
fn failure(e: Error) -> Outcome {
    match e {
        Error::Violation(_) | Error::Aborted { .. } => Outcome::Failed(e.to_string()),
        e => Outcome::Errored(e.to_string()),
    }
}

fn try_protocol(
    library: &Library,
    protocol: Protocol,
    options: &[(String, String)],
    schema: Option<SchemaRef>,
    scratch: bool,
) -> Result<Outcome> {
    let caps = library.capabilities(options.to_vec())?;
    if let Some(flag) = undeclared_capability(protocol, caps) {
        return Ok(Outcome::Skipped(format!(
            "the source does not declare {flag}"
        )));
    }
    match protocol {
        Protocol::Load => Ok(Outcome::Passed(format!("declares {caps}"))),
        Protocol::BatchRead => batch_read(library, options, &schema),
        Protocol::MicroBatchRead => micro_batch_read(library, options, &schema),
        Protocol::BatchWrite
        | Protocol::FailingWrite
        | Protocol::TruncateWrite
        | Protocol::StreamingWrite => write(library, protocol, options, schema, scratch),
    }
}

/// A write protocol, where [`WriteTarget`] lets it write.
fn write(
    library: &Library,
    protocol: Protocol,
    options: &[(String, String)],
    schema: Option<SchemaRef>,
    scratch: bool,
) -> Result<Outcome> {
    let target = match WriteTarget::new(options, scratch) {
        Ok(target) => target,
        Err(keys) => return Ok(Outcome::NotRun(not_run(protocol, &keys))),
    };
    target.run(library, options, |options| match protocol {
        Protocol::StreamingWrite => streaming_write(library, options, schema),
        _ => batch_write(library, protocol, options, schema),
    })
}

/// Why `check` did not run the write `protocol`, which the options with `keys` reach.
fn not_run(protocol: Protocol, keys: &[String]) -> String {
    format!(
        "it would {} {}, which `check` did not create; give the reads their options as \
         `read:KEY=VALUE` (the writes then go into empty directories that `check` creates, as \
         `path`), or add {SCRATCH_FLAG} (`Check::scratch` in a test) if that may be overwritten",
        if protocol == Protocol::TruncateWrite {
            "replace"
        } else {
            "write into"
        },
        what_options_point_at(keys)
    )
}

/// ``what the option `path` points at`` or ``what the options `url`, `table` point at``: the
/// keys only, since a value may be secret.
pub fn what_options_point_at(keys: &[String]) -> String {
    let names: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match names.len() {
        1 => format!("what the option {} points at", names[0]),
        _ => format!("what the options {} point at", names.join(", ")),
    }
}

/// Where a write of `check`, `roundtrip` or `bench` writes: an empty directory that it creates
/// (the option `path`, removed when the write is done), unless the options name a `path`; and
/// with options of the caller only when the caller said that what they point at may be
/// overwritten. A write of sample rows in truncate mode pointed at a real table would empty it.
#[derive(Debug)]
pub struct WriteTarget {
    /// The caller's options, and `path` when this created it.
    options: Vec<(String, String)>,
    /// The directory this created, removed on drop.
    created: Option<tempfile::TempDir>,
}

impl WriteTarget {
    /// The target of a write with `options`, the caller's: `scratch` says that what they point
    /// at may be overwritten.
    ///
    /// # Errors
    ///
    /// The keys of the options (without their values, which may be secret), when there are
    /// options and `scratch` is false: the write must not run.
    pub fn new(
        options: &[(String, String)],
        scratch: bool,
    ) -> std::result::Result<WriteTarget, Vec<String>> {
        if !scratch && !options.is_empty() {
            let mut keys: Vec<String> = Vec::new();
            for (key, _) in options {
                if !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
            return Err(keys);
        }
        Ok(WriteTarget {
            options: options.to_vec(),
            created: None,
        })
    }

    /// The options of the write, with `path` set to a directory created now when the caller's
    /// options have none.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created.
    pub fn options(&mut self) -> Result<Vec<(String, String)>> {
        if has_key(&self.options, "path") {
            return Ok(self.options.clone());
        }
        if self.created.is_none() {
            self.created = Some(empty_directory("path")?);
        }
        let mut options = self.options.clone();
        if let Some(dir) = &self.created {
            options.push(("path".to_string(), dir.path().display().to_string()));
        }
        Ok(options)
    }

    /// The directory this created for `path`, if it did.
    pub fn created(&self) -> Option<&Path> {
        self.created.as_ref().map(tempfile::TempDir::path)
    }

    /// Runs `write` with the options of the target. When the write fails with `path` added
    /// here, and `create` fails with it and passes without it, the library refused `path`,
    /// which Spark adds to a write by itself (`df.write.save(path)`): rule 27.
    fn run(
        mut self,
        library: &Library,
        given: &[(String, String)],
        write: impl FnOnce(&[(String, String)]) -> Result<Outcome>,
    ) -> Result<Outcome> {
        let options = self.options()?;
        let result = write(&options);
        if self.created.is_none() {
            return result;
        }
        match result {
            Err(e @ Error::Library { .. })
                if library.create(given).is_ok() && library.create(&options).is_err() =>
            {
                Err(refused_spark_option("path", e))
            }
            result => result,
        }
    }
}

/// Whether `options` set `key`, in any case, as Spark's case-insensitive options do.
fn has_key(options: &[(String, String)], key: &str) -> bool {
    options.iter().any(|(k, _)| k.eq_ignore_ascii_case(key))
}

/// A fresh empty directory for the option `key`, owner-only, removed on drop: a fresh name
/// that nobody else can have made (a fixed one in a shared temporary directory could be a link
/// to somewhere else).
fn empty_directory(key: &str) -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("sparkds-check-{key}-"))
        .tempdir()
        .map_err(|e| {
            Error::usage(format!(
                "cannot create an empty directory for the `{key}` option in {}: {e} \
                 (set TMPDIR to a writable directory)",
                std::env::temp_dir().display()
            ))
        })
}

/// The capability flag that `protocol` needs and the source does not declare, if any.
fn undeclared_capability(protocol: Protocol, caps: Capabilities) -> Option<&'static str> {
    let needs = |declared: bool, flag| (!declared).then_some(flag);
    match protocol {
        Protocol::Load => None,
        Protocol::BatchRead => needs(caps.batch_read(), "SPARK_DS_BATCH_READ"),
        Protocol::MicroBatchRead => needs(caps.micro_batch_read(), "SPARK_DS_MICRO_BATCH_READ"),
        Protocol::BatchWrite | Protocol::FailingWrite => {
            needs(caps.batch_write(), "SPARK_DS_BATCH_WRITE")
        }
        Protocol::TruncateWrite => needs(caps.batch_write(), "SPARK_DS_BATCH_WRITE")
            .or_else(|| needs(caps.truncate(), "SPARK_DS_TRUNCATE")),
        Protocol::StreamingWrite => needs(caps.streaming_write(), "SPARK_DS_STREAMING_WRITE"),
    }
}

/// A batch read of everything, then pruned and limited when the table can push those down,
/// then with a killed task, then created with the options Spark adds.
fn batch_read(
    library: &Library,
    options: &[(String, String)],
    schema: &Option<SchemaRef>,
) -> Result<Outcome> {
    let new_read = || with_user_schema(library.batch_read().options(options.to_vec()), schema);
    let outcome = new_read().run()?;
    let mut done = format!(
        "{} partitions, {} rows",
        outcome.partitions.len(),
        outcome.num_rows()
    );
    let table = library.table();
    if let (Some(_), Some(first)) = (table.prune_columns, outcome.schema.fields().first()) {
        let pruned = read_pruned(new_read(), first.name())?;
        done.push_str("; pruned");
        read_again_after_another_reader(library, &pruned, new_read())?;
    }
    if table.prune_columns.is_some() {
        read_no_column(new_read(), outcome.num_rows())?;
    }
    if table.push_limit.is_some() {
        read_limited(new_read())?;
        done.push_str("; limit pushed");
    }
    if let (Some(_), Some(first)) = (library.push_filters(), outcome.schema.fields().first()) {
        plan_with_a_filter(new_read(), first.name())?;
        done.push_str("; filters replayed");
    }
    read_with_killed_task(new_read())?;
    done.push_str("; killed task stopped");
    accept_spark_option(options, "path", |options| {
        with_user_schema(library.batch_read().options(options), schema).create_reader_only()
    })?;
    Ok(Outcome::Passed(done))
}

/// Rule 22: a read pruned to one column returns exactly that column.
fn read_pruned(read: crate::BatchRead<'_>, column: &str) -> Result<BatchReadOutcome> {
    read.columns([column]).run()
}

/// Rule 28: the partitions of a pruned read, read again with its state after `reader` (a read
/// of every column) ran, return the pruned columns still. Executors share no memory with the
/// driver: a library that keeps the pruning in its own memory instead of the state reads what
/// the last reader of the process was told.
fn read_again_after_another_reader(
    library: &Library,
    pruned: &BatchReadOutcome,
    reader: crate::BatchRead<'_>,
) -> Result<()> {
    reader.run()?;
    let columns = column_list(&pruned.schema);
    crate::calls::run_read_tasks(
        library,
        crate::calls::ReadTasks {
            stage: 1,
            context: "read again, ",
            state: pruned.reader_state.as_deref(),
            partitions: &pruned.partition_bytes(),
            schema: &pruned.schema,
            limit: None,
            accepted: &[],
            kill: None,
            stop: None,
        },
    )
    .map_err(|e| match e {
        Error::Violation(v) if v.rule == 19 => Error::Violation(crate::Violation {
            rule: 28,
            message: format!(
                "the partitions of a reader pruned to {columns}, read with its state after a \
                 reader of every column: {}; the state of `serialize_reader` must carry the \
                 pruning, since executors get nothing else",
                v.message.split("; ").next().unwrap_or_default()
            ),
            ..v
        }),
        e => e,
    })?;
    Ok(())
}

/// Rule 26: a read pruned to no column, as `count(*)` asks, works and counts every row.
fn read_no_column(read: crate::BatchRead<'_>, rows: usize) -> Result<()> {
    let outcome = read
        .columns(Vec::<String>::new())
        .run()
        .map_err(|e| match e {
            Error::Library {
                function,
                context,
                message,
            } => Error::Violation(
                crate::Violation::new(
                    function,
                    26,
                    format!(
                        "a read pruned to no column failed: {message}; Spark prunes to no column \
                     for `count(*)`: accept it and return batches of a row count only"
                    ),
                )
                .within(context.as_deref()),
            ),
            e => e,
        })?;
    if outcome.num_rows() != rows {
        return Err(crate::Violation::new(
            "read",
            26,
            format!(
                "a read pruned to no column returned {} where the read of every column returned \
                 {}; `count(*)` counts the rows of batches of no column: give them the row count",
                crate::error::count(outcome.num_rows() as i128, "row"),
                rows
            ),
        )
        .into());
    }
    Ok(())
}

/// Rule 27: `create` and what follows it accept `key`, an option that Spark adds by itself,
/// when the options of the check do not set it: `attempt` runs with the options and `key` set
/// to an empty directory. A failure there, when the same run without it passed, is a refusal.
fn accept_spark_option(
    options: &[(String, String)],
    key: &str,
    attempt: impl FnOnce(Vec<(String, String)>) -> Result<()>,
) -> Result<()> {
    if has_key(options, key) {
        return Ok(());
    }
    let directory = empty_directory(key)?;
    let mut with_key = options.to_vec();
    with_key.push((key.to_string(), directory.path().display().to_string()));
    let result = attempt(with_key);
    drop(directory);
    result.map_err(|e| refused_spark_option(key, e))
}

/// The error of a library that failed with the option `key`, which Spark adds by itself, and
/// passed without it: a rule 27 violation.
fn refused_spark_option(key: &str, e: Error) -> Error {
    match e {
        Error::Library {
            function,
            context,
            message,
        } => Error::Violation(
            crate::Violation::new(
                function,
                27,
                format!(
                    "failed with the option `{key}`, which Spark adds by itself, and passed \
                     without it: {message}; accept `{key}`, and ignore it when the source does \
                     not use it"
                ),
            )
            .within(context.as_deref()),
        ),
        e => e,
    }
}

/// `` `id`, `name` `` or "no column".
fn column_list(schema: &arrow_schema::Schema) -> String {
    if schema.fields().is_empty() {
        return "no column".into();
    }
    let names: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("`{}`", f.name()))
        .collect();
    names.join(", ")
}

/// Rules 30 and 32: a read planned with a filter on `column` (`IS NOT NULL`, which any column
/// has) gets one answer per filter, and the same from the reader that plans as from the one
/// first offered it. Planned only: what rows an accepted filter keeps is the conformance kit's,
/// which knows the data.
fn plan_with_a_filter(read: crate::BatchRead<'_>, column: &str) -> Result<()> {
    let filter = spark_datasource_core::filters::Filter::IsNotNull(
        spark_datasource_core::filters::col(column),
    );
    read.filters(vec![filter]).plan_only().run()?;
    Ok(())
}

/// Rule 22: a read whose limit of one row was pushed returns at most one row.
fn read_limited(read: crate::BatchRead<'_>) -> Result<()> {
    read.limit(1).run()?;
    Ok(())
}

/// Rule 23: a read whose first task is killed after one batch stops within one batch.
fn read_with_killed_task(read: crate::BatchRead<'_>) -> Result<()> {
    match read.kill_task(0, 1).run() {
        // A killed task may end its stream or fail it (the header's `is_interrupted`).
        Ok(_) | Err(Error::Library { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Three micro-batches, restarted from the last committed offset before the third.
fn micro_batch_read(
    library: &Library,
    options: &[(String, String)],
    schema: &Option<SchemaRef>,
) -> Result<Outcome> {
    let read = library
        .stream_read()
        .options(options.to_vec())
        .micro_batches(3)
        .restart_after(2);
    let read = match schema {
        Some(s) => read.schema(s.clone()),
        None => read,
    };
    let outcome = read.run()?;
    let rows: Vec<String> = outcome
        .rows_per_micro_batch()
        .iter()
        .map(usize::to_string)
        .collect();
    Ok(Outcome::Passed(format!(
        "3 micro-batches of {} rows, restarted before micro-batch 2",
        rows.join(", ")
    )))
}

/// Two tasks of three sample rows: appended and committed, truncating, or with the second
/// task failing so that the write aborts, as `protocol` says.
fn batch_write(
    library: &Library,
    protocol: Protocol,
    options: &[(String, String)],
    schema: Option<SchemaRef>,
) -> Result<Outcome> {
    let schema = write_schema(library, options, schema)?;
    let mut write = library
        .batch_write()
        .options(options.to_vec())
        .schema(schema.clone())
        .task([crate::sample::rows(&schema, 0, 3)?])
        .task([crate::sample::rows(&schema, 3, 3)?]);
    if protocol == Protocol::TruncateWrite {
        write = write.mode(WriteMode::Truncate);
    }
    if protocol == Protocol::FailingWrite {
        write = write.failing_task(1);
    }
    let outcome = write.run()?;
    Ok(Outcome::Passed(if outcome.committed {
        "2 tasks of 3 rows committed".into()
    } else {
        "task 1 failed and the write aborted".into()
    }))
}

/// Three epochs of two tasks of two sample rows; the third epoch's first task fails. Then one
/// more epoch, with the option `checkpointLocation` that Spark adds (rule 27).
fn streaming_write(
    library: &Library,
    options: &[(String, String)],
    schema: Option<SchemaRef>,
) -> Result<Outcome> {
    let schema = write_schema(library, options, schema)?;
    let epoch = |first: i64| -> Result<Vec<Vec<arrow_array::RecordBatch>>> {
        Ok(vec![
            vec![crate::sample::rows(&schema, first, 2)?],
            vec![crate::sample::rows(&schema, first + 2, 2)?],
        ])
    };
    library
        .streaming_write()
        .options(options.to_vec())
        .schema(schema.clone())
        .epoch(epoch(0)?)
        .epoch(epoch(4)?)
        .epoch(epoch(8)?)
        .failing_task(2, 0)
        .run()?;
    accept_spark_option(options, "checkpointLocation", |options| {
        library
            .streaming_write()
            .options(options)
            .schema(schema.clone())
            .epoch(epoch(12)?)
            .run()
            .map(drop)
    })?;
    Ok(Outcome::Passed(
        "epochs 0 and 1 committed, epoch 2 aborted".into(),
    ))
}

fn with_user_schema<'l>(
    read: crate::BatchRead<'l>,
    schema: &Option<SchemaRef>,
) -> crate::BatchRead<'l> {
    match schema {
        Some(s) => read.schema(s.clone()),
        None => read,
    }
}

/// The schema of sample rows to write: the user's, else the source's, else
/// `id bigint not null, name string`.
///
/// # Errors
///
/// When `create` or `schema` fails.
pub fn write_schema(
    library: &Library,
    options: &[(String, String)],
    user: Option<SchemaRef>,
) -> Result<SchemaRef> {
    if let Some(schema) = user {
        return Ok(schema);
    }
    if library.table().schema.is_some() {
        let source = library.create(options)?;
        return crate::calls::source_schema(library, &source, None);
    }
    crate::ddl::parse("id bigint not null, name string")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_s_answer_reads_back_after_lines_of_the_library_s_own() {
        let report = Report {
            results: vec![(Protocol::BatchRead, Outcome::Failed("rule 31".into()))],
        };
        let stdout = format!(
            "a line the library printed\n{}\n",
            answer(&report).expect("JSON")
        );
        assert_eq!(
            ChildCheck::outcome(&stdout),
            Some(Outcome::Failed("rule 31".into()))
        );
        assert_eq!(ChildCheck::outcome("no answer\n"), None);
    }
}
