//! The commands of `cargo sparkds` that drive a library: `show`, `roundtrip` and `check`, and
//! the [`Target`] they load. Each is a function of its parsed arguments that writes to `out` and
//! returns the exit code, so that `main.rs` stays a dispatcher and tests can run the commands
//! without a process.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use sparkds::check::{Check, Protocol};
use sparkds::filters::Filter;

use crate::condition;
use sparkds::{ddl, render, sample, Error, Library, Result, WriteMode};

/// The library and the options, common to the commands.
#[derive(Debug, Clone, clap::Args)]
pub struct Target {
    /// The library to load (.so, .dylib or .dll). By default, the cdylib of the cargo package in
    /// the current directory, built first with `cargo build`.
    #[arg(long, value_name = "PATH")]
    pub lib: Option<PathBuf>,
    /// Build and load the library of the `release` profile (`cargo build --release`), the one
    /// that is installed on Spark, rather than the debug build of the `dev` profile.
    #[arg(long, conflicts_with_all = ["lib", "profile"])]
    pub release: bool,
    /// Build and load the library of this cargo profile (`cargo build --profile NAME`).
    #[arg(long, value_name = "NAME", conflicts_with = "lib")]
    pub profile: Option<String>,
    /// The schema, as DDL (`"id bigint not null, name string"`) or as the JSON of
    /// `df.schema.json()`, for a source without `schema` or to read with another schema.
    #[arg(long, value_name = "DDL")]
    pub schema: Option<String>,
    /// The options of the data source, as `.option(key, value)` gives them. Those that look
    /// secret (`password`, `url`...) belong in --options-file: any user of the machine reads a
    /// command line (`ps`).
    #[arg(value_name = "KEY=VALUE", value_parser = crate::options::OptionParser)]
    pub options: Vec<(String, String)>,
    /// Read options from this file, one KEY=VALUE a line (blank lines and lines that start with
    /// `#` are skipped; the value is the rest of the line, as written), before those of the
    /// command line, which override them: for a password. Child processes get the options on
    /// their standard input, never on their command line.
    #[arg(long, value_name = "FILE")]
    pub options_file: Option<PathBuf>,
    /// Read the options as JSON from standard input: how the command gives them to its child
    /// processes.
    #[arg(long = "options-stdin", hide = true)]
    pub options_stdin: bool,
    /// Call the library in this process. By default the command runs again in a child process
    /// (`check`: one per protocol), so that a library that aborts the process is reported.
    #[arg(long)]
    pub in_process: bool,
}

impl Target {
    /// The cargo profile that builds the library: `release` with `--release`, the one named by
    /// `--profile`, else cargo's default, `dev`.
    pub fn profile(&self) -> &str {
        match (&self.profile, self.release) {
            (Some(name), _) => name,
            (None, true) => "release",
            (None, false) => "dev",
        }
    }

    /// The library to load: `--lib`, else the cdylib of the package in the current directory,
    /// built with the profile. A library that it built is named on standard error with its
    /// profile (a `--lib` the user gave is not repeated), except in a child process of `show`,
    /// `roundtrip`, `check` or `bench`, whose parent has said it.
    pub(crate) fn library_path(&self) -> Result<PathBuf> {
        let path = match &self.lib {
            Some(path) => return Ok(path.clone()),
            None => {
                let dir = std::env::current_dir()
                    .map_err(|e| Error::io("cannot read the current directory", e))?;
                sparkds::build_current_cdylib(&dir, self.profile())?
            }
        };
        if std::env::var_os(sparkds::isolate::BREADCRUMBS_VAR).is_none() {
            eprintln!("{}", self.loading_message(&path));
        }
        Ok(path)
    }

    /// What `library_path` says of a library it built: the library, and the profile.
    fn loading_message(&self, path: &Path) -> String {
        format!(
            "sparkds: loading {} (built with the `{}` profile)",
            path.display(),
            self.profile()
        )
    }

    /// Reads the options of `--options-file` (then those of the command line) or of
    /// `--options-stdin` into `options`.
    ///
    /// # Errors
    ///
    /// When the file or standard input cannot be read or holds something other than options.
    pub fn read_options(&mut self) -> Result<()> {
        if self.options_stdin {
            let mut options = sparkds::isolate::read_options(std::io::stdin().lock())?;
            options.append(&mut self.options);
            self.options = options;
            return Ok(());
        }
        if let Some(path) = &self.options_file {
            let mut options = crate::options::from_file(path)?;
            options.append(&mut self.options);
            self.options = options;
        }
        Ok(())
    }

    fn load(&self) -> Result<Library> {
        Library::load(self.library_path()?)
    }

    pub(crate) fn schema(&self) -> Result<Option<arrow_schema::SchemaRef>> {
        self.schema.as_deref().map(ddl::parse).transpose()
    }
}

/// Runs the current `sparkds` command again in a child process, with `--in-process` and the
/// library found (built) here, and reports a child that the library aborted (rule 9).
///
/// # Errors
///
/// When the library cannot be found or built, the child cannot run, or the library aborted it.
pub fn rerun_isolated(target: &Target) -> Result<ExitCode> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::io("cannot find the path of sparkds to run the command", e))?;
    let mut command = std::process::Command::new(exe);
    command
        .args(child_arguments(
            &crate::definition(),
            std::env::args_os().skip(1),
        ))
        .arg("--in-process")
        .arg(sparkds::isolate::OPTIONS_STDIN_FLAG);
    // Found (and said) here, so that the child, which says nothing, loads the same library.
    let library = target.library_path()?;
    if target.lib.is_none() {
        command.arg("--lib").arg(library);
    }
    command
        .env(sparkds::isolate::BREADCRUMBS_VAR, "1")
        .stdout(std::process::Stdio::inherit())
        .stderr(std::process::Stdio::piped());
    let output = sparkds::isolate::spawn_with_options(&mut command, &target.options)
        .and_then(std::process::Child::wait_with_output)
        .map_err(|e| Error::io("cannot run sparkds in a child process", e))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprint!("{}", sparkds::isolate::without_breadcrumbs(&stderr));
    if let Some(how) = sparkds::isolate::abnormal_end(&output.status) {
        let function =
            sparkds::isolate::last_call(&stderr).unwrap_or_else(|| "spark_ds_init".into());
        return Err(Error::Aborted { function, how });
    }
    let code = output.status.code().unwrap_or(2);
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(2)))
}

/// The arguments of this command for its child, which is given the library with `--lib` and
/// the options on its standard input: the arguments without the `sparkds` that cargo passes
/// first, without `--release` and `--profile NAME`, which chose the build that `--lib` now
/// names, and without the options (`KEY=VALUE`, `--options-file FILE`), which the child's
/// command line, readable by every user of the machine, must not show. `cli` tells which flags
/// take a value.
fn child_arguments(cli: &clap::Command, args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args = args.into_iter().peekable();
    if args.peek().is_some_and(|arg| arg == "sparkds") {
        args.next();
    }
    let Some(name) = args.next() else {
        return Vec::new();
    };
    let takes_value: Vec<String> = cli
        .find_subcommand(&name)
        .map(|command| {
            command
                .get_arguments()
                .filter(|arg| arg.get_action().takes_values())
                .filter_map(|arg| arg.get_long().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut kept = vec![name];
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy().into_owned();
        let Some(long) = text.strip_prefix("--") else {
            // A short flag (`-h`) stays; anything else is a positional option, KEY=VALUE.
            if text.starts_with('-') {
                kept.push(arg);
            }
            continue;
        };
        let (flag, inline) = match long.split_once('=') {
            Some((flag, _)) => (flag, true),
            None => (long, false),
        };
        let value = if !inline && takes_value.iter().any(|t| t == flag) {
            args.next()
        } else {
            None
        };
        if !matches!(flag, "release" | "profile" | "options-file") {
            kept.push(arg);
            kept.extend(value);
        }
    }
    kept
}

/// `sparkds show`: the schema and the rows, like `df.printSchema()` and `df.show()`.
#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub target: Target,
    /// Read only these columns, in this order (`prune_columns`).
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub columns: Option<Vec<String>>,
    /// Read at most this many rows (`push_limit`, pushed only when every filter of `--where`
    /// is accepted).
    #[arg(long, value_name = "N")]
    pub limit: Option<i64>,
    /// A condition in SQL syntax, as a WHERE clause writes it (`"id > 10 AND name LIKE
    /// 'a%'"`): its top-level conjuncts are pushed as filters (`push_filters`), and those the
    /// library does not accept are applied to its rows, as Spark does.
    #[arg(long = "where", value_name = "CONDITION")]
    pub condition: Option<String>,
    /// The number of rows to show.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub rows: usize,
}

/// Runs `sparkds show`.
///
/// # Errors
///
/// When the library cannot be loaded or the read fails or breaks a rule.
pub fn show(args: &ShowArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let library = args.target.load()?;
    let mut read = library.batch_read().options(args.target.options.clone());
    if let Some(schema) = args.target.schema()? {
        read = read.schema(schema);
    }
    let filters = match &args.condition {
        Some(condition) => Some(condition::parse(condition, read.read_schema()?.as_ref())?),
        None => None,
    };
    if let Some(filters) = &filters {
        read = read.filters(filters.clone());
    }
    if let Some(columns) = &args.columns {
        // The filters that Spark applies after the scan need their columns: they are read
        // too, and dropped once the rows are filtered.
        read = read.columns(with_filter_columns(
            columns,
            filters.as_deref().unwrap_or_default(),
        ));
    }
    // Like `df.show(n)`, which is `take(n + 1)`: the source reads no more rows than the
    // command prints, plus one to know whether to say "only showing top n rows".
    let shown = i64::try_from(args.rows)
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    read = read.limit(args.limit.map_or(shown, |limit| limit.min(shown)));
    if args.limit.is_some_and(|l| l < 0) {
        return Err(Error::usage(
            "--limit must be 0 or more; leave it out to read every row",
        ));
    }
    let outcome = read.run()?;
    let mut batches = outcome.batches();
    let mut schema = outcome.schema.clone();
    let mut text = String::new();
    if let Some(filters) = &filters {
        text.push_str(&pushed(filters, outcome.filters_accepted.as_deref()));
        batches = filter_left(filters, outcome.filters_accepted.as_deref(), &batches)?;
    }
    if let Some(columns) = &args.columns {
        (schema, batches) = project(&schema, &batches, columns)?;
    }
    if let Some(limit) = args.limit {
        // Spark applies the limit to the combined rows, accepted or not.
        batches = take(&batches, usize::try_from(limit).unwrap_or(0));
    }
    text.push_str(&format!(
        "{}\n{}",
        render::schema(&schema),
        render::show(&schema, &batches, args.rows)
    ));
    write_out(out, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// The rows of `batches` that satisfy the filters the source did not accept, as Spark filters
/// them after the scan (all of `filters` when the source has no filter pushdown).
fn filter_left(
    filters: &[Filter],
    accepted: Option<&[bool]>,
    batches: &[RecordBatch],
) -> Result<Vec<RecordBatch>> {
    let left: Vec<Filter> = match accepted {
        Some(accepted) => filters
            .iter()
            .zip(accepted)
            .filter(|(_, a)| !**a)
            .map(|(f, _)| f.clone())
            .collect(),
        None => filters.to_vec(),
    };
    batches
        .iter()
        .map(|b| sparkds::filters::filter_batch(&left, b))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::usage(format!("cannot apply the filters to the rows: {e}")))
}

/// `schema` and `batches` with `columns` only, in their order.
fn project(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    columns: &[String],
) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let error = |e: ArrowError| Error::usage(format!("cannot project the columns: {e}"));
    let indices = columns
        .iter()
        .map(|c| schema.index_of(c))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(error)?;
    let projected = std::sync::Arc::new(schema.project(&indices).map_err(error)?);
    let batches = batches
        .iter()
        .map(|b| b.project(&indices))
        .collect::<std::result::Result<_, _>>()
        .map_err(error)?;
    Ok((projected, batches))
}

/// `columns`, then the top-level columns that `filters` read and `columns` lacks.
fn with_filter_columns(columns: &[String], filters: &[Filter]) -> Vec<String> {
    let mut all = columns.to_vec();
    for filter in filters {
        for column in filter.columns() {
            let name = &column.path()[0];
            if !all.contains(name) {
                all.push(name.clone());
            }
        }
    }
    all
}

/// Which filters the reader accepted, and that the others are applied after the scan.
pub(crate) fn pushed(filters: &[Filter], accepted: Option<&[bool]>) -> String {
    let mut text = match accepted {
        Some(accepted) => format!(
            "filters: {} of {} accepted by the reader; the others are applied to its rows, as Spark does\n",
            accepted.iter().filter(|a| **a).count(),
            filters.len()
        ),
        None => format!(
            "filters: the library does not push filters (no `spark_ds_filters_init`), so {} applied to its rows, as Spark does\n",
            if filters.len() == 1 {
                "the filter is".to_string()
            } else {
                format!("all {} filters are", filters.len())
            }
        ),
    };
    for (i, filter) in filters.iter().enumerate() {
        let status = match accepted.and_then(|a| a.get(i)) {
            Some(true) => "accepted    ",
            Some(false) => "not accepted",
            None => "not pushed  ",
        };
        text.push_str(&format!("  {status}  {}\n", sparkds::filters::sql(filter)));
    }
    text.push('\n');
    text
}

fn take(batches: &[RecordBatch], n: usize) -> Vec<RecordBatch> {
    let mut left = n;
    let mut out = Vec::new();
    for b in batches {
        let k = b.num_rows().min(left);
        out.push(b.slice(0, k));
        left -= k;
    }
    out
}

fn write_out(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("cannot write the output", e))
}

/// The write mode on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Append,
    Truncate,
}

/// `sparkds roundtrip`: writes sample rows through the whole write protocol, then reads them
/// back when the source reads.
#[derive(Debug, Clone, clap::Args)]
pub struct RoundtripArgs {
    #[command(flatten)]
    pub target: Target,
    /// The write mode.
    #[arg(long, value_enum, default_value_t = ModeArg::Append)]
    pub mode: ModeArg,
    /// The number of write tasks.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub tasks: usize,
    /// The number of rows of each task.
    #[arg(long = "rows-per-task", default_value_t = 3, value_name = "N")]
    pub rows_per_task: usize,
    /// What the options point at (a directory, a table) may be overwritten. Without it,
    /// roundtrip writes only into an empty directory that it creates (given as `path`, removed
    /// at the end), and refuses options, which may point at data of your own.
    #[arg(long)]
    pub scratch: bool,
}

/// The refusal of a write of `command` that the options with `keys` reach without --scratch.
pub fn refused_write(command: &str, keys: &[String], truncate: bool) -> Error {
    Error::usage(format!(
        "{command} would write sample rows into {}{}, and writes only where nothing is lost: \
         leave the options out, and it writes into an empty directory that it creates (given \
         as `path`), or add --scratch if that may be overwritten",
        sparkds::check::what_options_point_at(keys),
        if truncate {
            ", replacing what is there (--mode truncate)"
        } else {
            ""
        }
    ))
}

/// Runs `sparkds roundtrip`.
///
/// # Errors
///
/// When the library cannot be loaded, or the write or the read fails or breaks a rule.
pub fn roundtrip(args: &RoundtripArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let mut target = sparkds::check::WriteTarget::new(&args.target.options, args.scratch)
        .map_err(|keys| refused_write("roundtrip", &keys, args.mode == ModeArg::Truncate))?;
    let library = args.target.load()?;
    let options = target.options()?;
    let schema = sparkds::check::write_schema(&library, &options, args.target.schema()?)?;
    let mut write = library
        .batch_write()
        .options(options.clone())
        .schema(schema.clone())
        .mode(match args.mode {
            ModeArg::Append => WriteMode::Append,
            ModeArg::Truncate => WriteMode::Truncate,
        });
    let mut written = Vec::new();
    for task in 0..args.tasks {
        let batch = sample::rows(
            &schema,
            (task * args.rows_per_task) as i64,
            args.rows_per_task,
        )?;
        written.push(batch.clone());
        write = write.task([batch]);
    }
    let outcome = write.run()?;
    let messages: Vec<Vec<u8>> = outcome.messages.iter().flatten().cloned().collect();
    let mut text = format!(
        "wrote {} rows in {} tasks{}:\n{}\n{}\n",
        written.iter().map(RecordBatch::num_rows).sum::<usize>(),
        args.tasks,
        if target.created().is_some() {
            " into an empty directory that roundtrip created as `path` (removed at the end)"
        } else {
            ""
        },
        render::schema(&schema),
        render::batches(&written)
    );
    text.push_str(if outcome.committed {
        "committed, with the messages:\n"
    } else {
        "aborted\n"
    });
    text.push_str(&render::partitions(&messages));
    if library.capabilities(options.clone())?.batch_read() {
        let read = library.batch_read().options(options).schema(schema).run()?;
        text.push_str(&format!(
            "\nread back {} rows:\n{}\n",
            read.num_rows(),
            render::batches(&read.batches())
        ));
    } else {
        text.push_str("\nthe source does not declare SPARK_DS_BATCH_READ: nothing to read back\n");
    }
    write_out(out, &text)?;
    Ok(ExitCode::SUCCESS)
}

/// `sparkds check`: runs every protocol of every declared capability and reports each. An
/// option `SCOPE:key=value` goes to some protocols only: SCOPE is `read`, `write` or a protocol
/// name (`batch-write`, `micro-batch-read`...).
#[derive(Debug, Clone, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: Target,
    /// Run only this protocol: load, batch-read, micro-batch-read, batch-write, failing-write,
    /// truncate-write or streaming-write.
    #[arg(long, value_parser = protocol)]
    pub protocol: Option<Protocol>,
    /// Print the outcomes as JSON, for a parent process.
    #[arg(long, hide = true)]
    pub json: bool,
    /// What the options point at (a directory, a table) may be overwritten: the write
    /// protocols run with the options, truncate-write replacing what is there. Without it,
    /// they write only into empty directories that check creates (given as `path`), and are
    /// not run when an option reaches them (scope the reads' options with `read:`).
    #[arg(long)]
    pub scratch: bool,
}

/// `--protocol` of `check`: a name of [`Protocol`].
fn protocol(name: &str) -> std::result::Result<Protocol, String> {
    Protocol::scope(name)
        .filter(|protocols| protocols.len() == 1)
        .map(|protocols| protocols[0])
        .ok_or_else(|| {
            let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
            format!("unknown protocol `{name}`: use one of {}", names.join(", "))
        })
}

/// Runs `sparkds check`: exit code 1 when a protocol failed.
///
/// # Errors
///
/// When the library cannot be found or built, or the output cannot be written.
pub fn check(args: &CheckArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let path = args.target.library_path()?;
    let mut check = Check::new(&path);
    for (key, value) in &args.target.options {
        // `write:path=/tmp/x` applies to the writes only, `batch-read:end=5` to one protocol.
        let scoped = key
            .split_once(':')
            .and_then(|(scope, key)| Some((Protocol::scope(scope)?, key)));
        match scoped {
            Some((protocols, key)) => {
                for protocol in protocols {
                    check = check.protocol_option(protocol, key, value.clone());
                }
            }
            None => check = check.option(key.clone(), value.clone()),
        }
    }
    if let Some(schema) = &args.target.schema {
        check = check.schema(schema.clone());
    }
    if let Some(protocol) = args.protocol {
        check = check.protocols([protocol]);
    }
    if args.scratch {
        check = check.scratch();
    }
    if !args.target.in_process {
        let binary = std::env::current_exe()
            .map_err(|e| Error::io("cannot find the path of sparkds to run the checks", e))?;
        check = check.isolated(binary);
    }
    let report = check.run();
    if args.json {
        write_out(out, &format!("{}\n", sparkds::check::answer(&report)?))?;
    } else {
        let mut text = format!("sparkds check {}\n{report}", path.display());
        if args.target.schema.is_none() && write_schema_failed(&report) {
            text.push_str(WRITE_SCHEMA_HINT);
        }
        write_out(out, &text)?;
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What `check` adds when a write could not ask the source for its schema: a source whose
/// schema comes from what it reads (a table that the write creates) has none to give yet.
const WRITE_SCHEMA_HINT: &str = "hint: the writes ask the source for the schema of the rows to write (`schema`), which failed with these options; give it with --schema, for example --schema \"id bigint not null, name string\"\n";

/// Whether a write protocol could not run because the source's `schema` call failed.
fn write_schema_failed(report: &sparkds::check::Report) -> bool {
    report.results.iter().any(|(protocol, outcome)| {
        protocol.writes()
            && matches!(outcome, sparkds::check::Outcome::Errored(m) if m.contains("`schema` failed"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The common arguments, parsed as a command parses them.
    #[derive(Debug, clap::Parser)]
    struct Parsed {
        #[command(flatten)]
        target: Target,
    }

    #[test]
    fn check_suggests_a_schema_when_a_write_cannot_ask_for_one() {
        use sparkds::check::{Outcome, Report};
        let failed = "`schema` failed: no table `t` in /tmp/db; create it or give a schema";
        let report = |protocol, outcome| Report {
            results: vec![
                (Protocol::BatchRead, Outcome::Passed("read".into())),
                (protocol, outcome),
            ],
        };
        assert!(write_schema_failed(&report(
            Protocol::BatchWrite,
            Outcome::Errored(failed.into())
        )));
        // A read that fails the same way needs its options, not a schema for the writes.
        assert!(!write_schema_failed(&report(
            Protocol::MicroBatchRead,
            Outcome::Errored(failed.into())
        )));
        assert!(!write_schema_failed(&report(
            Protocol::BatchWrite,
            Outcome::Errored("`create` failed: option `path` is missing".into())
        )));
    }

    fn parse(args: &[&str]) -> std::result::Result<Target, clap::Error> {
        use clap::Parser;
        Parsed::try_parse_from(std::iter::once("sparkds").chain(args.iter().copied()))
            .map(|parsed| parsed.target)
    }

    #[test]
    fn the_profile_is_dev_unless_release_or_a_profile_is_asked_for() {
        let profile = |args: &[&str]| parse(args).map(|t| t.profile().to_string()).ok();
        assert_eq!(profile(&["end=3"]).as_deref(), Some("dev"));
        assert_eq!(profile(&["--release", "end=3"]).as_deref(), Some("release"));
        assert_eq!(profile(&["--profile", "bench"]).as_deref(), Some("bench"));
        assert_eq!(
            profile(&["--profile=dist", "end=3"]).as_deref(),
            Some("dist")
        );
    }

    #[test]
    fn a_profile_with_lib_or_with_release_is_refused() {
        for args in [
            &["--release", "--lib", "x.so"][..],
            &["--profile", "bench", "--lib", "x.so"],
            &["--release", "--profile", "bench"],
        ] {
            let error = parse(args).err().map(|e| e.kind());
            assert_eq!(
                error,
                Some(clap::error::ErrorKind::ArgumentConflict),
                "{args:?}"
            );
        }
    }

    #[test]
    fn the_loaded_build_is_named_with_its_profile() {
        let built = parse(&["--release"]).expect("parses");
        assert_eq!(
            built.loading_message(Path::new("target/release/libx.so")),
            "sparkds: loading target/release/libx.so (built with the `release` profile)"
        );
    }

    #[test]
    fn the_child_is_not_asked_for_a_profile_again() {
        let args = [
            "sparkds",
            "show",
            "--release",
            "--profile",
            "bench",
            "--profile=dist",
            "--limit",
            "5",
        ]
        .map(OsString::from);
        assert_eq!(
            child_arguments(&crate::definition(), args),
            ["show", "--limit", "5"].map(OsString::from)
        );
    }

    #[test]
    fn the_child_gets_no_option_on_its_command_line() {
        let args = [
            "show",
            "password=hunter2",
            "--where",
            "name = 'x'",
            "--options-file",
            "secrets.txt",
            "--schema=id bigint",
            "--lib",
            "lib=x.so",
            "url=jdbc:x",
            "--options-file=other.txt",
            "-h",
        ]
        .map(OsString::from);
        assert_eq!(
            child_arguments(&crate::definition(), args),
            [
                "show",
                "--where",
                "name = 'x'",
                "--schema=id bigint",
                "--lib",
                "lib=x.so",
                "-h"
            ]
            .map(OsString::from)
        );
    }
}
