//! The micro-batch read protocol (`SPARK_DS_MICRO_BATCH_READ`): `create_stream_reader`,
//! `initial_offset`, then per micro-batch `latest_offset(start)`, `stream_partitions(start,
//! end)`, `serialize_stream_reader`, the `read` tasks and `commit_offset(end)`; and a restart,
//! a new source and stream reader that resume from the last committed offset, as a query
//! restarted from its checkpoint does.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::calls::{run_read_tasks, source_schema, ReadTasks};
use crate::error::{Error, Result, Violation};
use crate::library::{Capabilities, Handle, Library, Source};
use crate::steps;

/// A streaming read, as `spark.readStream.format(...).load()` runs it, for a number of
/// micro-batches. Built by [`Library::stream_read`].
///
/// ```no_run
/// # fn main() -> Result<(), sparkds::Error> {
/// let library = sparkds::Library::load(sparkds::cdylib("spark_datasource_my_source")?)?;
/// let stream = library.stream_read().option("rows", "5").micro_batches(4).restart_after(2).run()?;
/// assert_eq!(stream.rows_per_micro_batch(), vec![5, 5, 5, 5]);
/// # Ok(()) }
/// ```
#[must_use = "a read does nothing until `run`"]
pub struct StreamRead<'l> {
    library: &'l Library,
    options: Vec<(String, String)>,
    schema: Option<SchemaRef>,
    micro_batches: usize,
    restart_after: Option<usize>,
}

/// What a streaming read returned.
#[derive(Debug, Clone)]
pub struct StreamReadOutcome {
    pub capabilities: Capabilities,
    pub schema: SchemaRef,
    /// What `initial_offset` returned.
    pub initial_offset: Vec<u8>,
    pub micro_batches: Vec<MicroBatch>,
    /// The micro-batch before which the query restarted, if it did.
    pub restarted_before: Option<usize>,
}

/// One micro-batch: its offsets, partitions and batches.
#[derive(Debug, Clone)]
pub struct MicroBatch {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    pub partitions: Vec<Vec<u8>>,
    /// The batches of every partition, partition after partition.
    pub batches: Vec<RecordBatch>,
}

impl MicroBatch {
    /// The number of rows of the micro-batch.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }
}

impl StreamReadOutcome {
    /// The rows of each micro-batch.
    pub fn rows_per_micro_batch(&self) -> Vec<usize> {
        self.micro_batches
            .iter()
            .map(MicroBatch::num_rows)
            .collect()
    }

    /// The `(start, end)` offsets of each micro-batch, as text when printable.
    pub fn offsets(&self) -> Vec<(String, String)> {
        self.micro_batches
            .iter()
            .map(|m| (crate::render::bytes(&m.start), crate::render::bytes(&m.end)))
            .collect()
    }

    /// Every batch of every micro-batch.
    pub fn batches(&self) -> Vec<RecordBatch> {
        self.micro_batches
            .iter()
            .flat_map(|m| m.batches.iter().cloned())
            .collect()
    }
}

impl Library {
    /// Starts a streaming (micro-batch) read of this library.
    pub fn stream_read(&self) -> StreamRead<'_> {
        StreamRead {
            library: self,
            options: Vec::new(),
            schema: None,
            micro_batches: 3,
            restart_after: None,
        }
    }
}

struct Query<'l> {
    // Declared before the source: the reader closes first.
    reader: Handle<'l>,
    _schema: Box<arrow_schema::ffi::FFI_ArrowSchema>,
    source: Source<'l>,
}

impl<'l> StreamRead<'l> {
    crate::builders::option_setters!("Adds an option.", options);

    /// Reads with a schema given by the user instead of the source's.
    pub fn schema(mut self, schema: SchemaRef) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The number of micro-batches to run (3 by default).
    pub fn micro_batches(mut self, n: usize) -> Self {
        self.micro_batches = n;
        self
    }

    /// Stops the query after `n` micro-batches and restarts it from the last committed offset,
    /// with a new source and stream reader.
    pub fn restart_after(mut self, n: usize) -> Self {
        self.restart_after = Some(n);
        self
    }

    fn start(&self) -> Result<(Query<'l>, SchemaRef)> {
        let library = self.library;
        let source = library.create(&self.options)?;
        if !source.capabilities.micro_batch_read() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_MICRO_BATCH_READ",
                operation: "a streaming read",
            });
        }
        let schema = source_schema(library, &source, self.schema.clone())?;
        let (reader, ffi) = steps::open_stream_reader(library, &source, &schema)?;
        Ok((
            Query {
                reader,
                _schema: ffi,
                source,
            },
            schema,
        ))
    }

    /// Rule 25: a new query reads the offsets of a micro-batch again, and gets the same rows.
    fn replay(&self, micro_batch: &MicroBatch, index: usize, schema: &SchemaRef) -> Result<()> {
        let (query, _) = self.start()?;
        let context = format!("replay of micro-batch {index}");
        let (_, batches) = plan_and_read(
            self.library,
            &query.reader,
            &micro_batch.start,
            &micro_batch.end,
            &context,
            schema,
            index,
        )?;
        drop(query);
        let concat = |b: &[RecordBatch]| {
            arrow_select::concat::concat_batches(schema, b)
                .map_err(|e| Error::usage(format!("cannot compare the micro-batches: {e}")))
        };
        if concat(&batches)? != concat(&micro_batch.batches)? {
            return Err(Violation::new(
                "stream_partitions",
                25,
                format!(
                    "reading the offsets {} to {} again returned other rows; the same range must return the same rows",
                    crate::render::bytes(&micro_batch.start),
                    crate::render::bytes(&micro_batch.end)
                ),
            )
            .within(Some(&context))
            .into());
        }
        Ok(())
    }

    /// Runs the micro-batches.
    ///
    /// # Errors
    ///
    /// A failure of the library, or a violation of a rule.
    pub fn run(self) -> Result<StreamReadOutcome> {
        let library = self.library;
        let (mut query, schema) = self.start()?;
        let capabilities = query.source.capabilities;
        let initial_offset = steps::initial_offset(library, &query.reader, None)?;
        let mut start = initial_offset.clone();
        let mut micro_batches = Vec::new();
        // Spark commits the end of a micro-batch when it plans the next one, so the last
        // micro-batch stays uncommitted: a restarted query may read it again (rule 25).
        let mut uncommitted: Option<Vec<u8>> = None;
        let mut restarted_before = None;
        for index in 0..self.micro_batches {
            if self.restart_after == Some(index) && index > 0 {
                // The old query stops: its handles close before the new ones open.
                drop(query);
                query = self.start()?.0;
                restarted_before = Some(index);
            }
            let context = format!("micro-batch {index}");
            let ctx = Some(context.as_str());
            let reader = &query.reader;
            let end = steps::latest_offset(library, reader, &start, ctx)?;
            if let Some(done) = uncommitted.take() {
                steps::commit_offset(library, reader, &done, ctx)?;
            }
            if end == start {
                micro_batches.push(MicroBatch {
                    start: start.clone(),
                    end,
                    partitions: Vec::new(),
                    batches: Vec::new(),
                });
                continue;
            }
            let (partitions, batches) =
                plan_and_read(library, reader, &start, &end, &context, &schema, index)?;
            uncommitted = Some(end.clone());
            micro_batches.push(MicroBatch {
                start: std::mem::replace(&mut start, end.clone()),
                end,
                partitions,
                batches,
            });
        }
        drop(query);
        // The last micro-batch with data was never committed: a new query reads it again.
        if let Some(last) = micro_batches.iter().rposition(|m| !m.partitions.is_empty()) {
            self.replay(&micro_batches[last], last, &schema)?;
        }
        Ok(StreamReadOutcome {
            capabilities,
            schema,
            initial_offset,
            micro_batches,
            restarted_before,
        })
    }
}

/// Plans the micro-batch from `start` to `end` and reads its partitions: `stream_partitions`,
/// `serialize_stream_reader`, and one `read` task per partition.
fn plan_and_read(
    library: &Library,
    reader: &Handle<'_>,
    start: &[u8],
    end: &[u8],
    context: &str,
    schema: &SchemaRef,
    index: usize,
) -> Result<(Vec<Vec<u8>>, Vec<RecordBatch>)> {
    let ctx = Some(context);
    let partitions = steps::stream_partitions(library, reader, start, end, ctx)?;
    let state = steps::serialize_stream_reader(library, reader, ctx)?;
    let prefix = format!("{context}, ");
    let results = run_read_tasks(
        library,
        ReadTasks {
            stage: i32::try_from(index).unwrap_or(i32::MAX),
            context: &prefix,
            state: state.as_deref(),
            partitions: &partitions,
            schema,
            limit: None,
            accepted: &[],
            kill: None,
            stop: None,
        },
    )?;
    Ok((partitions, results.into_iter().flatten().collect()))
}
