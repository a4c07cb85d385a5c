//! The batch read protocol (`SPARK_DS_BATCH_READ`): on the driver `create`, `schema`,
//! `create_reader`, `push_filters` (the extension of `spark_datasource_filters.h`),
//! `prune_columns`, `push_limit`, `partitions`, `serialize_reader` and the closes; then one executor task per partition, on its own thread, that calls `read` with
//! copies of the bytes only.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use spark_datasource_core::filters::Filter;

use crate::calls::{prune, run_read_tasks, source_schema, ReadTasks};
use crate::error::{Error, Result};
use crate::library::{Capabilities, Handle, Library, Source};
use crate::steps::{self, Pushdowns};

/// A batch read, as `spark.read.format(...).options(...).load()` runs it. Built by
/// [`Library::batch_read`].
///
/// ```no_run
/// # fn main() -> Result<(), sparkds::Error> {
/// let library = sparkds::Library::load(sparkds::cdylib("spark_datasource_my_source")?)?;
/// let read = library.batch_read().option("end", "10").columns(["id"]).limit(3).run()?;
/// assert_eq!(read.num_rows(), 6);
/// # Ok(()) }
/// ```
#[must_use = "a read does nothing until `run`"]
pub struct BatchRead<'l> {
    library: &'l Library,
    options: Vec<(String, String)>,
    schema: Option<SchemaRef>,
    columns: Option<Vec<String>>,
    limit: Option<i64>,
    filters: Option<Vec<Filter>>,
    kill: Option<(usize, usize)>,
    stop: Option<(usize, usize)>,
    plan_only: bool,
}

/// What a batch read returned.
#[derive(Debug, Clone)]
pub struct BatchReadOutcome {
    /// The capabilities that `create` declared.
    pub capabilities: Capabilities,
    /// The schema of the rows read: the pruned schema when columns were given.
    pub schema: SchemaRef,
    /// The partitions, in order, with their bytes and batches.
    pub partitions: Vec<PartitionRead>,
    /// What `serialize_reader` returned, when the library has it.
    pub reader_state: Option<Vec<u8>>,
    /// Whether `push_limit` accepted the limit: `None` without a limit, without `push_limit`,
    /// or when a filter was not accepted (the limit is then not pushed, as Spark does not).
    pub limit_accepted: Option<bool>,
    /// Which filters `push_filters` accepted, in the order given: `None` when no filter was
    /// given or the library has no filter pushdown (`spark_ds_filters_init`). The batches are
    /// the library's: a filter that was not accepted is not applied to them (Spark applies it
    /// after the scan; [`filter_batch`](crate::filters::filter_batch) does it).
    pub filters_accepted: Option<Vec<bool>>,
    /// Whether `prune_columns` pruned (else the host projected the columns, as Spark does).
    pub pruned: bool,
}

/// One partition of a read: the bytes that `partitions` returned and the batches that `read`
/// returned for them.
#[derive(Debug, Clone)]
pub struct PartitionRead {
    pub bytes: Vec<u8>,
    pub batches: Vec<RecordBatch>,
}

impl PartitionRead {
    /// The number of rows of the partition.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

impl BatchReadOutcome {
    /// Every batch, partition after partition.
    pub fn batches(&self) -> Vec<RecordBatch> {
        self.partitions
            .iter()
            .flat_map(|p| p.batches.iter().cloned())
            .collect()
    }

    /// The number of rows of every partition.
    pub fn num_rows(&self) -> usize {
        self.partitions
            .iter()
            .flat_map(|p| &p.batches)
            .map(RecordBatch::num_rows)
            .sum()
    }

    /// The bytes of each partition.
    pub fn partition_bytes(&self) -> Vec<Vec<u8>> {
        self.partitions.iter().map(|p| p.bytes.clone()).collect()
    }
}

impl Library {
    /// Starts a batch read of this library.
    pub fn batch_read(&self) -> BatchRead<'_> {
        BatchRead {
            library: self,
            options: Vec::new(),
            schema: None,
            columns: None,
            limit: None,
            filters: None,
            kill: None,
            stop: None,
            plan_only: false,
        }
    }
}

impl<'l> BatchRead<'l> {
    crate::builders::option_setters!("Adds an option, `.option(key, value)` in Spark.", options);

    /// Reads with a schema given by the user, `.schema(...)` in Spark, instead of the source's.
    pub fn schema(mut self, schema: SchemaRef) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Asks for these columns only, in this order: `prune_columns`, as a projection does.
    pub fn columns<S: Into<String>>(mut self, columns: impl IntoIterator<Item = S>) -> Self {
        self.columns = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Offers a limit: `push_limit`, as `.limit(n)` does.
    pub fn limit(mut self, limit: i64) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Offers `filters`, the top-level conjuncts of a query's condition, to the reader:
    /// `push_filters` of the filter pushdown extension, right after `create_reader`, when the
    /// library exports it (else nothing is pushed). The limit is then pushed only when every
    /// filter was accepted, and every row read is checked against the accepted ones (rule 31).
    /// An empty list pushes nothing, as Spark skips the call when there is no conjunct.
    pub fn filters(mut self, filters: Vec<Filter>) -> Self {
        self.filters = Some(filters);
        self
    }

    /// Kills the task of `partition` after it returned `batches` batches (`is_interrupted`
    /// then returns true): the stream must stop within one batch (rule 23).
    pub fn kill_task(mut self, partition: usize, batches: usize) -> Self {
        self.kill = Some((partition, batches));
        self
    }

    /// Releases the stream of `partition` after it returned `batches` batches, without asking
    /// for the rest, as Spark does when a query needs no more rows (a limit it applies itself)
    /// or a task is dropped: the library must free what the stream holds, and stay usable. The
    /// partition's batches are those read before.
    pub fn stop_task(mut self, partition: usize, batches: usize) -> Self {
        self.stop = Some((partition, batches));
        self
    }

    /// Plans the read as the driver does (the source, its reader, the pushdowns, the partitions
    /// and the reader's state) and reads no partition: what a pushdown's answer costs, without
    /// the rows (a metered API's requests). The partitions of the outcome have no batch.
    pub fn plan_only(mut self) -> Self {
        self.plan_only = true;
        self
    }

    /// The schema the read starts from, before pruning: the one given with
    /// [`BatchRead::schema`], else the source's (`create` with the read's options, then
    /// `schema`). What the literals of filters are typed with.
    ///
    /// # Errors
    ///
    /// The failure of `create` or `schema`, a violation, or a source without `schema` and no
    /// schema given.
    pub fn read_schema(&self) -> Result<SchemaRef> {
        if let Some(schema) = &self.schema {
            return Ok(schema.clone());
        }
        let source = self.library.create(&self.options)?;
        source_schema(self.library, &source, None)
    }

    /// Runs the read.
    ///
    /// # Errors
    ///
    /// A failure of the library (with its message), a violation of a rule, or a usage error
    /// (an unknown column, no schema at all).
    pub fn run(self) -> Result<BatchReadOutcome> {
        let library = self.library;
        let source = self.create_source()?;
        let schema = source_schema(library, &source, self.schema.clone())?;
        let mut reader = steps::open_reader(library, &source, &schema)?;
        let (mut filtering, mut pruning, mut limit_accepted) = self.push_down(&reader, &schema)?;
        let limit = |accepted| self.limit.map(|limit| (limit, accepted));
        let offered = pushdowns(&filtering, &pruning, limit(limit_accepted));
        if !offered.is_empty() {
            // Spark asks one reader while it optimizes the query and plans the partitions with
            // another, offered the same again: its answers must be the same (rule 32).
            drop(reader);
            reader = steps::open_reader(library, &source, &schema)?;
            (filtering, pruning, limit_accepted) = self.push_down(&reader, &schema)?;
            offered.same_as(&pushdowns(&filtering, &pruning, limit(limit_accepted)))?;
        }
        let partitions = steps::reader_partitions(library, &reader)?;
        let reader_state = steps::serialize_reader(library, &reader)?;
        let capabilities = source.capabilities;
        // The executors only get bytes: close the driver's handles first, as Spark may.
        drop(reader);
        drop(source);

        let accepted_limit = match limit_accepted {
            Some(true) => self.limit,
            _ => None,
        };
        let results = if self.plan_only {
            vec![Vec::new(); partitions.len()]
        } else {
            run_read_tasks(
                library,
                ReadTasks {
                    stage: 0,
                    context: "",
                    state: reader_state.as_deref(),
                    partitions: &partitions,
                    schema: &pruning.read_schema,
                    limit: accepted_limit,
                    accepted: &filtering.accepted,
                    kill: self.kill,
                    stop: self.stop,
                },
            )?
        };
        let outcome = BatchReadOutcome {
            capabilities,
            schema: pruning.read_schema,
            partitions: partitions
                .into_iter()
                .zip(results)
                .map(|(bytes, batches)| PartitionRead { bytes, batches })
                .collect(),
            reader_state,
            limit_accepted,
            filters_accepted: filtering.answers,
            pruned: pruning.pruned,
        };
        project(outcome, pruning.projection)
    }

    /// Creates the source and its reader, as the driver does first, then closes them: what
    /// `check` needs to see whether `create` and `create_reader` accept the read's options.
    ///
    /// # Errors
    ///
    /// The failure of `create`, `schema` or `create_reader`, or a violation.
    pub(crate) fn create_reader_only(self) -> Result<()> {
        let source = self.create_source()?;
        let schema = source_schema(self.library, &source, self.schema.clone())?;
        steps::open_reader(self.library, &source, &schema)?;
        Ok(())
    }

    /// Creates the source with the read's options; it must declare a batch read.
    fn create_source(&self) -> Result<Source<'l>> {
        let source = self.library.create(&self.options)?;
        if !source.capabilities.batch_read() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_BATCH_READ",
                operation: "a batch read",
            });
        }
        Ok(source)
    }

    /// Offers the read's pushdowns to `reader` in Spark's order: the filters, the columns, then
    /// the limit when every filter was accepted.
    fn push_down(
        &self,
        reader: &Handle<'_>,
        schema: &SchemaRef,
    ) -> Result<(Filtering, Pruning, Option<bool>)> {
        let filtering = self.push_filters(reader)?;
        let pruning = self.prune_columns(reader, schema)?;
        let limit_accepted = self.push_limit(reader, filtering.every_filter_accepted())?;
        Ok((filtering, pruning, limit_accepted))
    }

    /// Offers the read's filters to the reader (`push_filters`), when there are some and the
    /// library has the extension.
    fn push_filters(&self, reader: &Handle<'_>) -> Result<Filtering> {
        let filters = self.filters.as_deref().unwrap_or_default();
        let mut answers = None;
        if let (false, Some(push_filters)) = (filters.is_empty(), self.library.push_filters()) {
            let encoded = crate::filters::encode_all(filters)?;
            // SAFETY: the reader is open until the caller drops it.
            answers = Some(unsafe {
                crate::calls::push_filters(
                    self.library,
                    push_filters,
                    reader.ptr(),
                    &encoded,
                    filters.len(),
                )
            }?);
        }
        let accepted: Vec<Filter> = match &answers {
            Some(answers) => filters
                .iter()
                .zip(answers)
                .filter(|(_, a)| **a)
                .map(|(f, _)| f.clone())
                .collect(),
            None => Vec::new(),
        };
        Ok(Filtering {
            offered: filters.len(),
            answers,
            accepted,
        })
    }

    /// Prunes the reader to the read's columns (`prune_columns`), or, for a library without it,
    /// says which columns the host projects after the read, as Spark does.
    fn prune_columns(&self, reader: &Handle<'_>, schema: &SchemaRef) -> Result<Pruning> {
        let mut pruning = Pruning {
            read_schema: schema.clone(),
            pruned: false,
            projection: None,
        };
        let Some(columns) = &self.columns else {
            return Ok(pruning);
        };
        let (pruned_schema, indices) = prune(schema, columns)?;
        if steps::prune_columns(self.library, reader, &pruned_schema)? {
            pruning.read_schema = pruned_schema;
            pruning.pruned = true;
        } else {
            pruning.projection = Some((pruned_schema, indices));
        }
        Ok(pruning)
    }

    /// Offers the read's limit (`push_limit`), unless a filter was not accepted: whether the
    /// reader accepted it, `None` when it was not offered.
    fn push_limit(&self, reader: &Handle<'_>, every_filter_accepted: bool) -> Result<Option<bool>> {
        match (self.limit, every_filter_accepted) {
            (Some(limit), true) => steps::push_limit(self.library, reader, limit),
            _ => Ok(None),
        }
    }
}

/// What the library answered to the pushdowns offered, as [`Pushdowns`] (without the filters'
/// message, which the comparison does not need).
fn pushdowns(
    filtering: &Filtering,
    pruning: &Pruning,
    limit: Option<(i64, Option<bool>)>,
) -> Pushdowns {
    Pushdowns {
        filters: filtering
            .answers
            .clone()
            .map(|answers| (Vec::new(), answers)),
        limit: limit.and_then(|(limit, accepted)| Some((limit, accepted?))),
        columns: pruning.pruned.then(|| (pruning.read_schema.clone(), true)),
    }
}

/// What `push_filters` answered.
struct Filtering {
    /// How many filters were offered.
    offered: usize,
    /// The answers, when the filters were pushed.
    answers: Option<Vec<bool>>,
    /// The filters accepted, in the order given.
    accepted: Vec<Filter>,
}

impl Filtering {
    /// A limit applied before Spark's own filter would drop rows (the extension's header): it
    /// is pushed only when every filter was accepted.
    fn every_filter_accepted(&self) -> bool {
        self.offered == 0 || self.accepted.len() == self.offered
    }
}

/// What the read returns after `prune_columns`.
struct Pruning {
    /// The schema that the streams return.
    read_schema: SchemaRef,
    /// Whether `prune_columns` pruned.
    pruned: bool,
    /// The schema and columns the host projects after the read, for a library without
    /// `prune_columns`.
    projection: Option<(SchemaRef, Vec<usize>)>,
}

/// Projects the columns of a read whose library has no `prune_columns`, as Spark does.
fn project(
    mut outcome: BatchReadOutcome,
    projection: Option<(SchemaRef, Vec<usize>)>,
) -> Result<BatchReadOutcome> {
    let Some((schema, indices)) = projection else {
        return Ok(outcome);
    };
    for partition in &mut outcome.partitions {
        partition.batches = partition
            .batches
            .iter()
            .map(|b| b.project(&indices))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::usage(format!("cannot project the columns: {e}")))?;
    }
    outcome.schema = schema;
    Ok(outcome)
}
