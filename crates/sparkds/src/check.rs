//! `sparkds check`: every protocol of every capability that a source declares, each reported on
//! its own, optionally each in a child process so that a library that aborts the process
//! (rule 9) is reported instead of ending the check.

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
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Passed(what) => write!(f, "ok: {what}"),
            Outcome::Skipped(why) => write!(f, "skipped: {why}"),
            Outcome::Failed(message) => write!(f, "FAILED: {message}"),
            Outcome::Errored(message) => write!(f, "error: {message}"),
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

    /// Whether every protocol passed or was skipped: none broke a rule, none could not run.
    pub fn passed(&self) -> bool {
        self.failures() == 0 && self.errors() == 0
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (protocol, outcome) in &self.results {
            writeln!(f, "{:<18} {outcome}", protocol.name())?;
        }
        let (failures, errors) = (self.failures(), self.errors());
        if failures == 0 && errors == 0 {
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
                "{} could not run (the library failed: give the options they need, such as `write:path=...`)",
                crate::error::count(errors as i128, "protocol")
            ));
        }
        writeln!(f, "{}", parts.join("; "))
    }
}

/// A check of a library: every protocol, in this process or each in a child process.
///
/// ```no_run
/// # fn main() -> Result<(), sparkds::Error> {
/// let library = sparkds::cdylib("spark_datasource_my_source")?;
/// let report = sparkds::check::Check::new(&library)
///     .option("end", "10")
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
        }
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
            Ok(library) => run_protocol(&library, protocol, &self.options_of(protocol), schema),
            Err(e) => failure(e),
        }
    }

    fn run_child(&self, binary: &Path, protocol: Protocol) -> Outcome {
        let mut command = Command::new(binary);
        command
            .arg("check")
            .arg("--lib")
            .arg(&self.library)
            .args(["--in-process", "--json", "--protocol", protocol.name()])
            .env(isolate::BREADCRUMBS_VAR, "1");
        if let Some(schema) = &self.schema {
            command.arg("--schema").arg(schema);
        }
        command.args(
            self.options_of(protocol)
                .iter()
                .map(|(k, v)| format!("{k}={v}")),
        );
        let output = match command.output() {
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
        let stdout = String::from_utf8_lossy(&output.stdout);
        let parsed = stdout
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Vec<(Protocol, Outcome)>>(l).ok());
        match parsed.and_then(|r| r.into_iter().next()) {
            Some((_, outcome)) => outcome,
            None => Outcome::Errored(format!(
                "the child process gave no result ({}): {}",
                output.status,
                isolate::without_breadcrumbs(&stderr).trim()
            )),
        }
    }
}

/// Runs one protocol in this process.
pub fn run_protocol(
    library: &Library,
    protocol: Protocol,
    options: &[(String, String)],
    schema: Option<SchemaRef>,
) -> Outcome {
    match try_protocol(library, protocol, options, schema) {
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
        Protocol::BatchWrite | Protocol::FailingWrite | Protocol::TruncateWrite => {
            batch_write(library, protocol, options, schema)
        }
        Protocol::StreamingWrite => streaming_write(library, options, schema),
    }
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
    if options.iter().any(|(k, _)| k.eq_ignore_ascii_case(key)) {
        return Ok(());
    }
    // A fresh name that nobody else can have made (a fixed one in a shared temporary
    // directory could be a link to somewhere else), removed when the attempt is over.
    let directory = tempfile::Builder::new()
        .prefix(&format!("sparkds-check-{key}-"))
        .tempdir()
        .map_err(|e| {
            Error::usage(format!(
                "cannot create an empty directory for the `{key}` option in {}: {e} \
                 (set TMPDIR to a writable directory)",
                std::env::temp_dir().display()
            ))
        })?;
    let mut with_key = options.to_vec();
    with_key.push((key.to_string(), directory.path().display().to_string()));
    let result = attempt(with_key);
    drop(directory);
    result.map_err(|e| match e {
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
    })
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
