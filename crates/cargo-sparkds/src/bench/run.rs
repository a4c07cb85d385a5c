//! One run of a protocol, driven as Spark drives it over the steps of `sparkds` (the one code
//! that calls the library's functions), streaming: each batch is imported in place, counted and
//! dropped before the next `get_next`.

use std::sync::atomic::{AtomicI64, Ordering};

use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::SchemaRef;
use spark_datasource_abi::v1::SPARK_DS_NO_EPOCH;
use sparkds::filters::Filter;
use sparkds::steps::{
    Checks, DataWriter, OpenSource, PartitionStream, Reader, TaskContext, TaskIds,
};
use sparkds::{Error, Library, Result, WriteMode};

use super::counts::{Counts, LibraryTime};
use super::measure::BenchSpec;
use super::reference;

/// How the tasks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Through the C interface, with full validation of every value (and the accepted filters
    /// checked on every row).
    Checked,
    /// Through the C interface, with the cheap checks that the host always runs.
    Unchecked,
    /// In process, through the library's `spark_ds_bench_v1`.
    InProcess,
}

/// One run: the library, its clock, what to measure and how.
#[derive(Clone, Copy)]
pub(super) struct Run<'a> {
    pub(super) library: &'static Library,
    pub(super) time: &'a LibraryTime,
    pub(super) spec: &'a BenchSpec,
    pub(super) mode: Mode,
}

/// The tasks of a batch read or of a micro-batch.
struct Tasks<'a> {
    stage: i32,
    partitions: &'a [Vec<u8>],
    state: Option<&'a [u8]>,
    /// The schema of the streams.
    schema: &'a SchemaRef,
    /// The columns that the host keeps of each batch, when the library did not prune.
    kept: Option<&'a [usize]>,
    /// The filters that the library accepted.
    accepted: &'a [Filter],
}

/// Task IDs unique within the process, as Spark's are within the application.
static NEXT_TASK_ID: AtomicI64 = AtomicI64::new(1);

fn task_ids(stage: i32, partition: usize) -> TaskIds {
    TaskIds {
        task_id: NEXT_TASK_ID.fetch_add(1, Ordering::Relaxed),
        stage_id: stage,
        partition_id: i32::try_from(partition).unwrap_or(i32::MAX),
        attempt_number: 0,
    }
}

impl Run<'_> {
    /// `spark.read...load()`: the plan on the driver, then every partition.
    pub(super) fn batch_read(&self) -> Result<Counts> {
        let mut counts = Counts::start(self.time);
        let source = self.open()?;
        let schema = self.schema(&source)?;
        let mut reader = source.create_reader(schema.clone())?;
        let accepted = self.push_filters(&mut reader, &mut counts)?;
        let kept = self.prune_columns(&mut reader, &schema)?;
        let partitions = reader.partitions()?;
        let state = reader.serialize()?;
        let read_schema = reader.schema().clone();
        drop(reader);
        drop(source);
        self.read_tasks(
            Tasks {
                stage: 0,
                partitions: &partitions,
                state: state.as_deref(),
                schema: &read_schema,
                kept: kept.as_deref(),
                accepted: &accepted,
            },
            &mut counts,
        )?;
        Ok(counts.finish(self.time))
    }

    /// A streaming read of the spec's micro-batches, as a query with a trigger runs it:
    /// `latest_offset`, the commit of the previous end, `stream_partitions` and the tasks. A
    /// micro-batch read has no `prune_columns`: the host keeps the columns, as Spark does.
    pub(super) fn micro_batches(&self) -> Result<Counts> {
        let mut counts = Counts::start(self.time);
        let source = self.open()?;
        let schema = self.schema(&source)?;
        let kept = match &self.spec.columns {
            Some(columns) => Some(sparkds::steps::project(&schema, columns)?.1),
            None => None,
        };
        let reader = source.create_stream_reader(schema.clone())?;
        let mut start = reader.initial_offset()?;
        // Spark commits the end of a micro-batch when it plans the next one.
        let mut uncommitted: Option<Vec<u8>> = None;
        for index in 0..self.spec.micro_batches {
            let end = reader.latest_offset(&start)?;
            if let Some(done) = uncommitted.take() {
                reader.commit_offset(&done)?;
            }
            if end == start {
                continue;
            }
            let partitions = reader.partitions(&start, &end)?;
            let state = reader.serialize()?;
            let tasks = Tasks {
                stage: i32::try_from(index).unwrap_or(i32::MAX),
                partitions: &partitions,
                state: state.as_deref(),
                schema: &schema,
                kept: kept.as_deref(),
                accepted: &[],
            };
            self.read_tasks(tasks, &mut counts)?;
            uncommitted = Some(end.clone());
            start = end;
        }
        drop(reader);
        drop(source);
        Ok(counts.finish(self.time))
    }

    /// A batch write in append mode, as `df.write...save()` runs it: `create_writer` and
    /// `serialize_writer` on the driver, then one task after another (`create_data_writer`,
    /// `write` of each batch, `commit_data_writer`), then `commit`. Every batch is the same
    /// batch of sample rows (its last one maybe sliced), made once, so that the time measured is
    /// the library's and the interface's, not the making of the data.
    pub(super) fn batch_write(&self) -> Result<Counts> {
        let spec = self.spec;
        let schema = {
            let source = self.open()?;
            if !source.capabilities().batch_write() {
                return Err(Error::NotSupported {
                    capability: "SPARK_DS_BATCH_WRITE",
                    operation: "a batch write",
                });
            }
            self.schema(&source)?
        };
        let sample = sparkds::sample::rows(&schema, 0, spec.write_batch_rows)?;
        let mut counts = Counts::start(self.time);
        let source = self.open()?;
        let writer = source.create_writer(&schema, "sparkds-bench", WriteMode::Append, false)?;
        let state = writer.serialize()?.ok_or_else(|| {
            Error::usage("serialize_writer gave no state for the tasks; a write needs one")
        })?;
        let tasks = spec.write_tasks as u64;
        let mut messages = Vec::new();
        for index in 0..spec.write_tasks {
            let i = index as u64;
            let rows = spec.write_rows * (i + 1) / tasks - spec.write_rows * i / tasks;
            let batches = sample_batches(&sample, rows);
            let ids = task_ids(0, index);
            let message = match self.mode {
                Mode::InProcess => reference::write(
                    self.library,
                    ids,
                    &state,
                    schema.clone(),
                    batches,
                    &mut counts,
                )?,
                _ => self.write_task(ids, &schema, &state, batches, &mut counts)?,
            };
            messages.push(message);
        }
        writer.commit(SPARK_DS_NO_EPOCH, &messages)?;
        drop(writer);
        drop(source);
        Ok(counts.finish(self.time))
    }

    fn open(&self) -> Result<OpenSource> {
        OpenSource::create(self.library, self.library.name(), &self.spec.options)
    }

    /// The schema asked for, else the source's.
    fn schema(&self, source: &OpenSource) -> Result<SchemaRef> {
        if let Some(schema) = &self.spec.schema {
            return Ok(schema.clone());
        }
        source.schema()?.ok_or_else(|| {
            Error::usage(
                "the source has no `schema` function, so the read needs a schema: pass one (`--schema \"id bigint, name string\"`)",
            )
        })
    }

    /// Offers the spec's filters to the reader: the filters it accepted (its answers go to
    /// `counts`), none when it has no filter pushdown.
    fn push_filters(&self, reader: &mut Reader, counts: &mut Counts) -> Result<Vec<Filter>> {
        if self.spec.filters.is_empty() {
            return Ok(Vec::new());
        }
        let encoded = sparkds::filters::encode(&self.spec.filters)
            .map_err(|e| Error::usage(format!("cannot encode the filters: {e}")))?;
        counts.filters_accepted = reader.push_filters(&encoded)?;
        Ok(reader.accepted_filters().to_vec())
    }

    /// Prunes the reader to the spec's columns: the columns the host keeps of each batch when
    /// the library cannot prune (Spark then projects them).
    fn prune_columns(&self, reader: &mut Reader, schema: &SchemaRef) -> Result<Option<Vec<usize>>> {
        let Some(columns) = &self.spec.columns else {
            return Ok(None);
        };
        let (pruned, indices) = sparkds::steps::project(schema, columns)?;
        Ok((!reader.prune_columns(pruned)?).then_some(indices))
    }

    /// The executor side: one task after another, each reading its stream to the end.
    fn read_tasks(&self, tasks: Tasks<'_>, counts: &mut Counts) -> Result<()> {
        let checks = Checks {
            full: self.mode == Mode::Checked,
        };
        // The accepted filters on the columns read: Spark reads no column for a filter that
        // the library guarantees, so the others cannot be checked here.
        let checked: Vec<Filter> = tasks
            .accepted
            .iter()
            .filter(|f| {
                f.columns()
                    .iter()
                    .all(|c| sparkds::filters::has_column(tasks.schema.fields(), c))
            })
            .cloned()
            .collect();
        for (index, partition) in tasks.partitions.iter().enumerate() {
            let ids = task_ids(tasks.stage, index);
            if self.mode == Mode::InProcess {
                reference::read(self.library, ids, tasks.state, partition, counts)?;
                continue;
            }
            let task = TaskContext::new(ids, None);
            let schema = tasks.schema.clone();
            let mut stream =
                PartitionStream::open(self.library, task, schema, tasks.state, partition, checks)?;
            if checks.full && !checked.is_empty() {
                stream.check_accepted(checked.clone())?;
            }
            while let Some(batch) = stream.next_batch()? {
                counts.batch(batch.data(), tasks.kept);
            }
        }
        Ok(())
    }

    /// One write task through the interface: each batch exported as Spark exports it, moved to
    /// `write`, and its commit message.
    fn write_task(
        &self,
        ids: TaskIds,
        schema: &SchemaRef,
        state: &[u8],
        batches: impl Iterator<Item = RecordBatch>,
        counts: &mut Counts,
    ) -> Result<Vec<u8>> {
        let task = TaskContext::new(ids, None);
        let mut writer = DataWriter::create(
            self.library,
            task,
            schema.clone(),
            Some(state),
            SPARK_DS_NO_EPOCH,
            Checks::default(),
        )?;
        for batch in batches {
            let data = StructArray::from(batch).into_data();
            counts.batch(&data, None);
            writer.write(data)?;
        }
        writer.commit()
    }
}

/// `rows` rows of `sample`'s, in batches of its size: the same batch again, the last one sliced.
pub(super) fn sample_batches(
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
