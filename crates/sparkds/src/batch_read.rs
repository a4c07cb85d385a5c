//! The batch read protocol (`SPARK_DS_BATCH_READ`): on the driver `create`, `schema`,
//! `create_reader`, `push_filters` (the extension of `spark_datasource_filters.h`),
//! `prune_columns`, `push_limit`, `partitions`, `serialize_reader` and the closes; then one executor task per partition, on its own thread, that calls `read` with
//! copies of the bytes only.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::c_int;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use spark_datasource::filters::Filter;

use crate::calls::{
    export_schema, prune, required, run_read_tasks, schema_ptr, sink_call, sink_call_one,
    source_schema, still_borrowed, ReadTasks,
};
use crate::error::{Error, Result};
use crate::library::{Capabilities, HandleKind, Library};

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
        }
    }
}

impl<'l> BatchRead<'l> {
    /// Adds an option, `.option(key, value)` in Spark.
    pub fn option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Adds options.
    pub fn options<K: Into<String>, V: Into<String>>(
        mut self,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.options
            .extend(options.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

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
        let table = library.table();
        let source = library.create(&self.options)?;
        if !source.capabilities.batch_read() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_BATCH_READ",
                operation: "a batch read",
            });
        }
        let schema = source_schema(library, &source, self.schema.clone())?;
        let ffi_schema = export_schema(&schema)?;
        let create_reader = required(table.create_reader, "create_reader")?;
        let reader = library.open("create_reader", None, HandleKind::Reader, |reader| {
            // SAFETY: the source is open, the schema is borrowed for the call, `reader` is
            // valid for writes.
            unsafe { create_reader(source.handle.ptr(), schema_ptr(&ffi_schema), reader) }
        })?;
        still_borrowed(&ffi_schema, "create_reader", None)?;

        let filters = self.filters.as_deref().unwrap_or_default();
        let mut filters_accepted = None;
        if let (false, Some(push_filters)) = (filters.is_empty(), library.push_filters()) {
            let encoded = crate::filters::encode_all(filters)?;
            // SAFETY: the reader is open until it is dropped below.
            let answers = unsafe {
                crate::filters::push(library, push_filters, reader.ptr(), &encoded, filters.len())
            }?;
            filters_accepted = Some(answers);
        }
        let accepted: Vec<Filter> = match &filters_accepted {
            Some(answers) => filters
                .iter()
                .zip(answers)
                .filter(|(_, a)| **a)
                .map(|(f, _)| f.clone())
                .collect(),
            None => Vec::new(),
        };
        // A limit applied before Spark's own filter would drop rows (the extension's header).
        let every_filter_accepted = filters.is_empty() || accepted.len() == filters.len();

        let mut read_schema = schema.clone();
        let mut pruned = false;
        let mut projection = None;
        if let Some(columns) = &self.columns {
            let (pruned_schema, indices) = prune(&schema, columns)?;
            if let Some(prune_columns) = table.prune_columns {
                let required = export_schema(&pruned_schema)?;
                library.call("prune_columns", None, || {
                    // SAFETY: the reader is open and the schema is borrowed for the call.
                    unsafe { prune_columns(reader.ptr(), schema_ptr(&required)) }
                })?;
                still_borrowed(&required, "prune_columns", None)?;
                read_schema = pruned_schema;
                pruned = true;
            } else {
                projection = Some((pruned_schema, indices));
            }
        }
        let mut limit_accepted = None;
        if let (Some(limit), Some(push_limit), true) =
            (self.limit, table.push_limit, every_filter_accepted)
        {
            let mut accepted: c_int = 0;
            library.call("push_limit", None, || {
                // SAFETY: the reader is open and `accepted` is valid for writes.
                unsafe { push_limit(reader.ptr(), limit, &mut accepted) }
            })?;
            limit_accepted = Some(accepted != 0);
        }
        let partitions_fn = required(table.partitions, "partitions")?;
        let partitions = sink_call(library, "partitions", None, |add, sink| {
            // SAFETY: the reader is open; the sink is open for the call.
            unsafe { partitions_fn(reader.ptr(), add, sink) }
        })?;
        let reader_state = match table.serialize_reader {
            Some(serialize) => Some(sink_call_one(
                library,
                "serialize_reader",
                None,
                |add, sink| {
                    // SAFETY: the reader is open; the sink is open for the call.
                    unsafe { serialize(reader.ptr(), add, sink) }
                },
            )?),
            None => None,
        };
        let capabilities = source.capabilities;
        // The executors only get bytes: close the driver's handles first, as Spark may.
        drop(reader);
        drop(source);

        let accepted_limit = match limit_accepted {
            Some(true) => self.limit,
            _ => None,
        };
        let results = run_read_tasks(
            library,
            ReadTasks {
                stage: 0,
                context: "",
                state: reader_state.as_deref(),
                partitions: &partitions,
                schema: &read_schema,
                limit: accepted_limit,
                accepted: &accepted,
                kill: self.kill,
            },
        )?;
        let mut outcome = BatchReadOutcome {
            capabilities,
            schema: read_schema,
            partitions: partitions
                .into_iter()
                .zip(results)
                .map(|(bytes, batches)| PartitionRead { bytes, batches })
                .collect(),
            reader_state,
            limit_accepted,
            filters_accepted,
            pruned,
        };
        if let Some((schema, indices)) = projection {
            for partition in &mut outcome.partitions {
                partition.batches = partition
                    .batches
                    .iter()
                    .map(|b| b.project(&indices))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| Error::usage(format!("cannot project the columns: {e}")))?;
            }
            outcome.schema = schema;
        }
        Ok(outcome)
    }
}
