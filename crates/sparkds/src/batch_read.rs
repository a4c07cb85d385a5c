//! The batch read protocol (`SPARK_DS_BATCH_READ`): on the driver `create`, `schema`,
//! `create_reader`, `prune_columns`, `push_limit`, `partitions`, `serialize_reader` and the
//! closes; then one executor task per partition, on its own thread, that calls `read` with
//! copies of the bytes only.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::c_int;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

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
    /// Whether `push_limit` accepted the limit: `None` without a limit or without `push_limit`.
    pub limit_accepted: Option<bool>,
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

    /// Kills the task of `partition` after it returned `batches` batches (`is_interrupted`
    /// then returns true): the stream must stop within one batch (rule 23).
    pub fn kill_task(mut self, partition: usize, batches: usize) -> Self {
        self.kill = Some((partition, batches));
        self
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
        if let (Some(limit), Some(push_limit)) = (self.limit, table.push_limit) {
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
