//! The conformance kit: the checks that every data source should pass, whatever it reads,
//! run on the options of a project's own tests in one line, so that they stay when the sample
//! of a generated project is replaced.
//!
//! ```no_run
//! #[test]
//! fn passes_the_conformance_kit() -> sparkds::Result<()> {
//!     let library = sparkds::testing::library()?;
//!     sparkds::testing::Conformance::new(library).scratch_path().assert_passes();
//!     Ok(())
//! }
//! ```
//!
//! Each check runs what Spark runs ([`KitCheck`]); the host checks every rule of the interface
//! on the way. A check that the library cannot run (no such capability or pushdown, no write
//! target, no rows) is skipped with its reason; a failure names the check, the options and
//! the fix.

use std::fmt;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use spark_datasource_core::filters::Filter;

use super::rows::{filter_rows, literal_at, sorted_rows};
use crate::error::{Error, Result};
use crate::library::{Capabilities, Library};
use crate::BatchReadOutcome;

/// The rows that each task of a write check writes.
const WRITE_ROWS: usize = 5;

/// An option that no data source has: a read (or write) that gets it must fail and name it.
pub const UNKNOWN_OPTION: &str = "conformanceUnknownOption";

/// One check of the kit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KitCheck {
    /// `count(*)`: a read of no column counts the rows of a read of every column.
    EmptyProjection,
    /// An option that the source does not know fails the read (or write), naming it.
    UnknownOption,
    /// A task killed after its first batch stops, a stream released after its first batch
    /// (a dropped task) is freed, and a read after each reads every row.
    KilledRead,
    /// An accepted limit returns at most `limit` rows per partition, and no fewer than Spark
    /// needs.
    Limit,
    /// A filter that the reader accepts returns exactly the rows that Spark's evaluation of it
    /// keeps of the rows the source holds.
    Filters,
    /// A write whose task failed, and which was aborted, leaves the target as it was.
    AbortedWrite,
    /// A task retried after its first attempt committed (its message lost) publishes its rows
    /// once.
    RetriedAttempt,
}

impl KitCheck {
    /// Every check, in the order they run.
    pub const ALL: [KitCheck; 7] = [
        KitCheck::EmptyProjection,
        KitCheck::UnknownOption,
        KitCheck::KilledRead,
        KitCheck::Limit,
        KitCheck::Filters,
        KitCheck::AbortedWrite,
        KitCheck::RetriedAttempt,
    ];

    /// The name of the check, as reports show it.
    pub fn name(self) -> &'static str {
        match self {
            KitCheck::EmptyProjection => "empty projection",
            KitCheck::UnknownOption => "unknown option",
            KitCheck::KilledRead => "killed read",
            KitCheck::Limit => "limit",
            KitCheck::Filters => "pushed filters",
            KitCheck::AbortedWrite => "aborted write",
            KitCheck::RetriedAttempt => "retried task attempt",
        }
    }

    /// What to change in the library when the check fails.
    pub fn fix(self) -> &'static str {
        match self {
            KitCheck::EmptyProjection => {
                "accept a schema of no column in `prune_columns` (rule 26) and give each batch \
                 its row count (`RecordBatchOptions::with_row_count`), so that `count(*)` counts \
                 the rows"
            }
            KitCheck::UnknownOption => {
                "refuse the keys the source does not know (`options.expect_only(OPTIONS)` of \
                 spark_datasource), with a message that names the key"
            }
            KitCheck::KilledRead => {
                "check `task.is_interrupted()` between batches (`spark_datasource::Producer` \
                 does), free what a stream holds when it is released before its end, and keep \
                 no state of a read outside its stream"
            }
            KitCheck::Limit => {
                "return at most `limit` rows per partition and no fewer than the partition \
                 holds up to it, or decline the limit (`push_limit` returns false)"
            }
            KitCheck::Filters => {
                "accept only the filters that the source evaluates exactly as Spark does (NULL, \
                 NaN, -0.0, byte order of strings) and return every row that makes them TRUE; \
                 answer false for the others, which Spark then evaluates"
            }
            KitCheck::AbortedWrite => {
                "stage each task's rows where no read sees them, publish them in `commit` only, \
                 and remove them in `abort_data_writer` and `abort` \
                 (`spark_datasource::kit::write::Staged` does)"
            }
            KitCheck::RetriedAttempt => {
                "publish in `commit` only what the messages it gets name, and remove what the \
                 other attempts staged: name staged data after the query, the partition and the \
                 attempt number (`spark_datasource::kit::write::Staged` does)"
            }
        }
    }
}

/// How one check went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It ran and passed: what it did.
    Passed(String),
    /// It could not apply to this library: why.
    Skipped(String),
    /// It failed: what went wrong.
    Failed(String),
}

/// What stops a check before it passes.
enum Stop {
    Skip(String),
    Fail(String),
}

impl From<Error> for Stop {
    fn from(error: Error) -> Self {
        Stop::Fail(error.to_string())
    }
}

type Step<T> = std::result::Result<T, Stop>;

/// The checks of the kit on a library, with the options of a read and a write target.
#[must_use = "the kit does nothing until `run` or `assert_passes`"]
pub struct Conformance<'l> {
    library: &'l Library,
    options: Vec<(String, String)>,
    write_options: Option<Vec<(String, String)>>,
    scratch_path: bool,
    write_schema: Option<SchemaRef>,
    filters: Vec<Filter>,
    /// The most reads of the source's data the checks make, and those made.
    max_reads: Option<u32>,
    reads: std::cell::Cell<u32>,
}

impl<'l> Conformance<'l> {
    /// The kit on `library`, which reads with its own create options only: add the options of
    /// a read that gives rows with [`Conformance::option`], and a write target with
    /// [`Conformance::write_options`] or [`Conformance::scratch_path`].
    pub fn new(library: &'l Library) -> Self {
        Conformance {
            library,
            options: Vec::new(),
            write_options: None,
            scratch_path: false,
            write_schema: None,
            filters: Vec::new(),
            max_reads: None,
            reads: std::cell::Cell::new(0),
        }
    }

    /// At most `reads` reads of the source's data, for a source that counts them (a metered
    /// API's quota): a check that would read more is skipped, saying so. Without it the checks
    /// read the source about ten times: once for the rows the others compare with, once with
    /// no column, four around a killed task, once for each of up to three limits, and once for
    /// each filter that the reader accepts (a filter it declines is only planned, and read
    /// nothing). The write checks read the write target, which does not count.
    pub fn max_reads(mut self, reads: u32) -> Self {
        self.max_reads = Some(reads);
        self
    }

    crate::builders::option_setters!("Adds an option of the reads.", options);

    /// The options of the write checks: a target that the checks may write to, and that a read
    /// with the same options reads back (a table of a scratch database). Without them, or
    /// [`Conformance::scratch_path`], the write checks are skipped.
    pub fn write_options<K: Into<String>, V: Into<String>>(
        mut self,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let options = options.into_iter().map(|(k, v)| (k.into(), v.into()));
        self.write_options = Some(options.collect());
        self
    }

    /// Gives each write check a new empty directory as the option `path` (removed after it),
    /// added to the write options: a source that writes files where `path` says, and reads
    /// them back with it.
    pub fn scratch_path(mut self) -> Self {
        self.scratch_path = true;
        self
    }

    /// The schema of the rows that the write checks write, for a target whose schema the
    /// source cannot tell before the first write (by default the target's, else the read's).
    pub fn write_schema(mut self, schema: SchemaRef) -> Self {
        self.write_schema = Some(schema);
        self
    }

    /// Filters of your own, checked with those the kit makes from the rows the source holds
    /// (a comparison of each column with a value of the middle row, IS NULL, IN, and prefixes
    /// of strings).
    pub fn filters(mut self, filters: Vec<Filter>) -> Self {
        self.filters.extend(filters);
        self
    }

    /// Runs every check.
    pub fn run(&self) -> ConformanceReport {
        let mut results = Vec::new();
        let baseline = self.baseline();
        for check in KitCheck::ALL {
            let verdict = match self.run_check(check, &baseline) {
                Ok(what) => Verdict::Passed(what),
                Err(Stop::Skip(why)) => Verdict::Skipped(why),
                Err(Stop::Fail(what)) => Verdict::Failed(what),
            };
            results.push((check, verdict));
        }
        ConformanceReport {
            options: crate::redact::redacted(&self.all_options()),
            write_options: self.shown_write_options(),
            results,
        }
    }

    /// Runs every check, prints each verdict (with the reason of each skip), and panics with
    /// the report when one failed.
    ///
    /// # Panics
    ///
    /// When a check failed: the message names each failed check, the options and the fix.
    pub fn assert_passes(&self) {
        let report = self.run();
        println!("{report}");
        assert!(report.passed(), "{report}");
    }

    /// The write options as the report shows them, with the directory of
    /// [`Conformance::scratch_path`].
    fn shown_write_options(&self) -> Option<Vec<(String, String)>> {
        let mut options = self.write_options.as_deref().map(crate::redact::redacted);
        if self.scratch_path {
            let scratch = (
                "path".to_string(),
                "<a new directory per check>".to_string(),
            );
            options.get_or_insert_with(Vec::new).push(scratch);
        }
        options
    }

    /// The library's create options, then the kit's.
    fn all_options(&self) -> Vec<(String, String)> {
        let mut options = self.library.create_options().to_vec();
        options.extend(self.options.iter().cloned());
        options
    }

    fn run_check(&self, check: KitCheck, baseline: &Step<Baseline>) -> Step<String> {
        match check {
            KitCheck::UnknownOption => return self.unknown_option(),
            KitCheck::AbortedWrite => return self.aborted_write(),
            KitCheck::RetriedAttempt => return self.retried_attempt(),
            _ => {}
        }
        let baseline = match baseline {
            Ok(baseline) => baseline,
            Err(Stop::Skip(why)) => return Err(Stop::Skip(why.clone())),
            Err(Stop::Fail(what)) => return Err(Stop::Fail(what.clone())),
        };
        match check {
            KitCheck::EmptyProjection => self.empty_projection(baseline),
            KitCheck::KilledRead => self.killed_read(baseline),
            KitCheck::Limit => self.limit(baseline),
            _ => self.filtered_reads(baseline),
        }
    }

    /// A read of every column with the read options: what the read checks compare with.
    fn baseline(&self) -> Step<Baseline> {
        let capabilities = self.library.capabilities(self.options.clone())?;
        if !capabilities.batch_read() {
            return Err(Stop::Skip(
                "the source does not declare SPARK_DS_BATCH_READ with these options".into(),
            ));
        }
        self.spend()?;
        let read = self.read().run().map_err(|e| {
            Stop::Fail(format!(
                "a read of every column with these options failed: {e}"
            ))
        })?;
        let rows = sorted_rows(&read.batches())?;
        Ok(Baseline { read, rows })
    }

    fn empty_projection(&self, baseline: &Baseline) -> Step<String> {
        self.spend()?;
        let read = self.read().columns(Vec::<String>::new()).run()?;
        let (counted, held) = (read.num_rows(), baseline.rows.len());
        if counted != held || !read.schema.fields().is_empty() {
            return Err(Stop::Fail(format!(
                "a read of no column (`count(*)`) gave {counted} rows of {} columns, a read of \
                 every column {held} rows",
                read.schema.fields().len()
            )));
        }
        Ok(format!("a read of no column counted {counted} rows"))
    }

    fn unknown_option(&self) -> Step<String> {
        let capabilities = self.library.capabilities(self.options.clone())?;
        let target = match capabilities.batch_write() {
            true => self.write_target()?,
            false => None,
        };
        let refused = if capabilities.batch_read() {
            self.read().option(UNKNOWN_OPTION, "1").run().err()
        } else if let Some(target) = target {
            let options = target.with(&[(UNKNOWN_OPTION.into(), "1".into())]);
            self.rows_to_write(&options)
                .and_then(|rows| {
                    self.library
                        .batch_write()
                        .options(options)
                        .task([rows])
                        .run()
                })
                .err()
        } else {
            return Err(Stop::Skip(
                "the source declares no batch read, and no batch write with a write target of the \
                 kit"
                .into(),
            ));
        };
        let Some(error) = refused else {
            return Err(Stop::Fail(format!(
                "the option `{UNKNOWN_OPTION}`, which no source has, was accepted: a misspelt \
                 option would be ignored"
            )));
        };
        let text = error.to_string();
        if !text.to_lowercase().contains(&UNKNOWN_OPTION.to_lowercase()) {
            return Err(Stop::Fail(format!(
                "the option `{UNKNOWN_OPTION}` was refused, but the error does not name it: \
                 {text}"
            )));
        }
        Ok(format!("refused with: {text}"))
    }

    fn killed_read(&self, baseline: &Baseline) -> Step<String> {
        if baseline.rows.is_empty() {
            return Err(Stop::Skip(
                "the source holds no row with these options: give options of a read with rows"
                    .into(),
            ));
        }
        // The killed read, the one after it, the stopped read and the one after it.
        for _ in 0..4 {
            self.spend()?;
        }
        let killed = self.read().kill_task(0, 1).run();
        let how = match killed {
            Ok(read) => format!("ended after {} rows", read.partitions[0].num_rows()),
            Err(e @ Error::Library { .. }) => format!("failed ({e})"),
            Err(e) => return Err(Stop::Fail(e.to_string())),
        };
        self.same_rows_again(baseline, "a task killed after its first batch")?;
        let stopped = self.read().stop_task(0, 1).run()?;
        let kept = stopped.partitions[0].num_rows();
        self.same_rows_again(baseline, "a stream released after its first batch")?;
        Ok(format!(
            "the killed task {how}; a stream released after its first batch ({kept} rows) \
             freed; the read after each gave the same rows"
        ))
    }

    /// A read of every column gives the rows of `baseline` again, after `what`.
    fn same_rows_again(&self, baseline: &Baseline, what: &str) -> Step<()> {
        let again = sorted_rows(&self.read().run()?.batches())?;
        if again != baseline.rows {
            return Err(Stop::Fail(format!(
                "after {what}, a read gave {} rows, not the {} of the read before",
                again.len(),
                baseline.rows.len()
            )));
        }
        Ok(())
    }

    fn limit(&self, baseline: &Baseline) -> Step<String> {
        if self.library.table().push_limit.is_none() {
            return Err(Stop::Skip(
                "the library has no push_limit (its export! line does not name it)".into(),
            ));
        }
        let held = baseline.rows.len();
        let mut checked = Vec::new();
        // One row, a few, and all but one: each below what the source holds, when it can be.
        let mut limits = vec![1, 3, held as i64 - 1];
        limits.retain(|l| *l > 0);
        limits.sort_unstable();
        limits.dedup();
        for limit in limits {
            self.spend()?;
            let read = self.read().limit(limit).run()?;
            if read.limit_accepted != Some(true) {
                continue;
            }
            let limit = limit as usize;
            let most = read.partitions.iter().map(|p| p.num_rows()).max();
            let (got, needed) = (read.num_rows(), limit.min(held));
            if most.unwrap_or(0) > limit || got < needed {
                return Err(Stop::Fail(format!(
                    "a limit of {limit} (accepted) read {got} rows, at most {} in a partition, \
                     of the {held} that the source holds: Spark needs {needed}, at most {limit} \
                     per partition",
                    most.unwrap_or(0)
                )));
            }
            checked.push(limit.to_string());
        }
        if checked.is_empty() {
            return Err(Stop::Skip("push_limit declined every limit".into()));
        }
        Ok(format!("limits {} honoured", checked.join(", ")))
    }

    fn filtered_reads(&self, baseline: &Baseline) -> Step<String> {
        if !self.library.pushes_filters() {
            return Err(Stop::Skip(
                "the library does not push filters (its export! line does not name \
                 push_filters)"
                    .into(),
            ));
        }
        let filters = self.filters_to_check(&baseline.read);
        if filters.is_empty() {
            return Err(Stop::Skip(
                "the source holds no row with these options to make filters of".into(),
            ));
        }
        let mut accepted = 0;
        for filter in &filters {
            let failed = |e: Error| {
                Stop::Fail(format!(
                    "the read with the filter `{}` failed: {e}",
                    sql(filter)
                ))
            };
            // Planned first: a filter the reader declines is Spark's to apply, and its read
            // would check nothing.
            let planned = self.read().filters(vec![filter.clone()]).plan_only().run();
            if planned.map_err(failed)?.filters_accepted != Some(vec![true]) {
                continue;
            }
            self.spend()?;
            let read = self
                .read()
                .filters(vec![filter.clone()])
                .run()
                .map_err(failed)?;
            accepted += 1;
            let got = sorted_rows(&read.batches())?;
            let spark = filter_rows(filter, &baseline.read.batches())?;
            if got != spark {
                return Err(Stop::Fail(format!(
                    "the reader accepted `{}` and read {} rows, but Spark's evaluation of it \
                     keeps {} of the rows the source holds",
                    sql(filter),
                    got.len(),
                    spark.len()
                )));
            }
        }
        Ok(format!(
            "{accepted} of {} filters accepted, each read exactly the rows Spark keeps",
            filters.len()
        ))
    }

    /// The kit's filters on the columns of the middle row of `read`, then the caller's.
    fn filters_to_check(&self, read: &BatchReadOutcome) -> Vec<Filter> {
        let batches: Vec<RecordBatch> = read.batches();
        let Some(batch) = batches.iter().find(|b| b.num_rows() > 0) else {
            return self.filters.clone();
        };
        let row = batch.num_rows() / 2;
        let mut filters = Vec::new();
        for (field, column) in read.schema.fields().iter().zip(batch.columns()) {
            let name = field.name();
            filters.push(Filter::IsNull(spark_datasource_core::filters::col(name)));
            if let Some(literal) = literal_at(column.as_ref(), row) {
                filters.extend(super::rows::comparisons(name, literal));
            }
        }
        filters.extend(self.filters.iter().cloned());
        filters
    }

    fn aborted_write(&self) -> Step<String> {
        let target = self.round_trip()?;
        let before = self.read_back(&target.options)?;
        let failing = self
            .library
            .batch_write()
            .options(target.options.clone())
            .task([target.rows.clone()])
            .task([target.rows.clone()])
            .failing_task(1)
            .run()?;
        let after = self.read_back(&target.options)?;
        if !failing.aborted || after != before {
            return Err(Stop::Fail(format!(
                "a write whose task 1 failed (aborted: {}) left {} rows, not the {} of before",
                failing.aborted,
                after.len(),
                before.len()
            )));
        }
        Ok(format!(
            "the aborted write left the {} rows of before",
            before.len()
        ))
    }

    fn retried_attempt(&self) -> Step<String> {
        let target = self.round_trip()?;
        let before = self.read_back(&target.options)?.len();
        self.library
            .batch_write()
            .options(target.options.clone())
            .task([target.rows.clone()])
            .task([target.rows.clone()])
            .retried_task(0)
            .run()?;
        let added = self.read_back(&target.options)?.len() as i64 - before as i64;
        let written = 2 * target.rows.num_rows();
        if added != written as i64 {
            return Err(Stop::Fail(format!(
                "a write of {written} rows in 2 tasks, whose task 0 ran twice (attempt 0 \
                 committed but its message was lost, attempt 1 committed), added {added} rows"
            )));
        }
        Ok(format!(
            "the retried task's rows were published once ({written} rows added)"
        ))
    }

    /// The write target, after a committed write of sample rows that a read gave back.
    fn round_trip(&self) -> Step<Target> {
        let Some(target) = self.write_target()? else {
            return Err(Stop::Skip(
                "no write target: give `.write_options(...)` (a target that a read with the \
                 same options reads back), or `.scratch_path()` for a source that writes to the \
                 directory `path`"
                    .into(),
            ));
        };
        let options = target.with(&[]);
        let capabilities = self.library.capabilities(options.clone())?;
        if !capabilities.batch_write() || !capabilities.batch_read() {
            return Err(Stop::Skip(format!(
                "the source declares {} with the write options: a write check writes, then \
                 reads back",
                names(capabilities)
            )));
        }
        let rows = self.rows_to_write(&options)?;
        let before = self.read_back(&options).map_or(0, |rows| rows.len());
        let write = self.library.batch_write().options(options.clone());
        write.task([rows.clone()]).run()?;
        let after = self.read_back(&options)?.len();
        if after != before + rows.num_rows() {
            return Err(Stop::Fail(format!(
                "a committed write of {} rows changed what a read with the write options gives \
                 from {before} to {after} rows: give write options that read back what was \
                 written",
                rows.num_rows()
            )));
        }
        Ok(Target {
            options,
            rows,
            _dir: target.dir,
        })
    }

    /// The write options, with a new `path` for [`Conformance::scratch_path`]; `None` when the
    /// kit has no write target.
    fn write_target(&self) -> Step<Option<WriteTarget>> {
        if self.write_options.is_none() && !self.scratch_path {
            return Ok(None);
        }
        let mut options = self.write_options.clone().unwrap_or_default();
        let mut dir = None;
        if self.scratch_path {
            let created = tempfile::tempdir()
                .map_err(|e| Error::io("cannot create a directory for `path`", e))?;
            options.push(("path".into(), created.path().display().to_string()));
            dir = Some(created);
        }
        Ok(Some(WriteTarget { options, dir }))
    }

    /// Sample rows of the schema of the target, else of the read's.
    fn rows_to_write(&self, options: &[(String, String)]) -> Result<RecordBatch> {
        let schema = match &self.write_schema {
            Some(schema) => schema.clone(),
            None => self
                .library
                .batch_read()
                .options(options.to_vec())
                .read_schema()
                .or_else(|_| self.read().read_schema())?,
        };
        crate::sample::rows(&schema, 0, WRITE_ROWS)
    }

    /// The rows that a read with `options` gives, sorted.
    fn read_back(&self, options: &[(String, String)]) -> Result<Vec<String>> {
        let read = self.library.batch_read().options(options.to_vec()).run()?;
        sorted_rows(&read.batches())
    }

    fn read(&self) -> crate::BatchRead<'l> {
        self.library.batch_read().options(self.options.clone())
    }

    /// Counts a read of the source's data, within [`Conformance::max_reads`].
    fn spend(&self) -> Step<()> {
        let made = self.reads.get();
        if let Some(most) = self.max_reads {
            if made >= most {
                return Err(Stop::Skip(format!(
                    "the budget of {most} reads of the source is spent (max_reads)"
                )));
            }
        }
        self.reads.set(made + 1);
        Ok(())
    }
}

/// A full read and its rows, sorted.
struct Baseline {
    read: BatchReadOutcome,
    rows: Vec<String>,
}

/// Where the write checks write: the options, and the directory made for `path`.
struct WriteTarget {
    options: Vec<(String, String)>,
    dir: Option<tempfile::TempDir>,
}

impl WriteTarget {
    fn with(&self, more: &[(String, String)]) -> Vec<(String, String)> {
        let mut options = self.options.clone();
        options.extend(more.iter().cloned());
        options
    }
}

/// A target that reads back what is written, and the rows that each task writes.
struct Target {
    options: Vec<(String, String)>,
    rows: RecordBatch,
    _dir: Option<tempfile::TempDir>,
}

fn names(capabilities: Capabilities) -> String {
    let names = capabilities.names();
    match names.is_empty() {
        true => "no capability".into(),
        false => names.join(", "),
    }
}

fn sql(filter: &Filter) -> String {
    crate::filters::sql(filter)
}

/// What the kit found: one verdict per check, with the options it ran with.
#[derive(Debug, Clone)]
pub struct ConformanceReport {
    /// The options of the reads, secret values redacted.
    pub options: Vec<(String, String)>,
    /// The options of the writes, secret values redacted.
    pub write_options: Option<Vec<(String, String)>>,
    /// Each check and how it went, in the order they ran.
    pub results: Vec<(KitCheck, Verdict)>,
}

impl ConformanceReport {
    /// Whether no check failed.
    pub fn passed(&self) -> bool {
        self.failed().is_empty()
    }

    /// The checks that failed.
    pub fn failed(&self) -> Vec<KitCheck> {
        let failed = self
            .results
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Failed(_)));
        failed.map(|(check, _)| *check).collect()
    }

    /// The verdict of `check`.
    pub fn verdict(&self, check: KitCheck) -> Option<&Verdict> {
        self.results
            .iter()
            .find(|(c, _)| *c == check)
            .map(|(_, v)| v)
    }
}

impl fmt::Display for ConformanceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "conformance kit, read options {:?}", self.options)?;
        if let Some(write) = &self.write_options {
            writeln!(f, "  write options {write:?}")?;
        }
        for (check, verdict) in &self.results {
            let name = check.name();
            match verdict {
                Verdict::Passed(what) => writeln!(f, "  {name}: ok: {what}")?,
                Verdict::Skipped(why) => writeln!(f, "  {name}: skipped: {why}")?,
                Verdict::Failed(what) => {
                    writeln!(f, "  {name}: FAILED: {what}")?;
                    writeln!(f, "    fix: {}", check.fix())?;
                }
            }
        }
        Ok(())
    }
}
