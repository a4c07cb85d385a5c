//! The reads and writes of a library, driven as the host drives them but streaming: each
//! batch is imported, counted and dropped before the next.

use std::ffi::CString;
use std::time::Instant;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, RecordBatch, RecordBatchIterator, StructArray};
use arrow_schema::{DataType, SchemaRef};

use crate::calls::{export_schema, required, sink_call_one, source_schema};
use crate::error::{Error, Result};
use crate::filters::Filter;
use crate::library::{Handle, Library, Source};
use crate::steps;
use crate::task::Task;
use crate::write::WriteMode;
use spark_datasource_abi::v1;

use super::counts::Counts;
use super::in_process::{count, new_call};
use super::stream::{
    buffer_bytes, check_end_repeats, check_filters, check_stream_schema, count_batch, next_batch,
    sample_batches, Stream,
};
use super::{BenchProtocol, BenchSpec};
use spark_datasource_abi::bench::{
    SparkDsBenchFunction, SPARK_DS_BENCH_READ, SPARK_DS_BENCH_WRITE,
};

/// The tasks of a batch read or of a micro-batch.
pub(super) struct Tasks<'a> {
    pub(super) stage: i32,
    /// A prefix of the context of each task, such as "micro-batch 2, ".
    pub(super) prefix: &'a str,
    pub(super) partitions: &'a [Vec<u8>],
    pub(super) state: Option<&'a [u8]>,
    /// The schema of the streams.
    pub(super) schema: &'a SchemaRef,
    /// The columns that the host keeps of each batch, when the library did not prune.
    pub(super) kept: Option<&'a [usize]>,
    /// The filters that the library accepted, checked on every row with the checks (rule 31).
    pub(super) accepted: &'a [Filter],
}

/// The reads of a library, driven as [`Library::batch_read`] and [`Library::stream_read`] drive
/// them, streaming their batches, and its batch writes.
pub(super) struct Driver<'a> {
    pub(super) library: &'a Library,
    pub(super) options: &'a [(String, String)],
    pub(super) schema: Option<SchemaRef>,
    pub(super) columns: Option<&'a [String]>,
    pub(super) filters: &'a [Filter],
    pub(super) mode: Mode,
}

/// How the tasks run.
#[derive(Clone, Copy)]
pub(super) enum Mode {
    /// Through the C interface, with the conformance checks of `sparkds`.
    Checked,
    /// Through the C interface, arrow-rs's import only.
    Unchecked,
    /// In process, through the library's `spark_ds_bench_v1`.
    InProcess(SparkDsBenchFunction),
}

/// One write task through the library's in-process reference (`spark_ds_bench_v1`): the
/// batches moved to it as one stream, and its commit message.
pub(super) fn bench_write_task(
    library: &Library,
    entry: SparkDsBenchFunction,
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
    let mut call = new_call(SPARK_DS_BENCH_WRITE, task, Some(state));
    let mut input = FFI_ArrowArrayStream::new(Box::new(input));
    call.input = &mut input;
    let started = Instant::now();
    let message = sink_call_one(library, "spark_ds_bench_v1", Some(context), |add, sink| {
        call.add = Some(add);
        call.sink = sink;
        // SAFETY: the call and what it points to are borrowed for the call; the stream is
        // moved to the library.
        unsafe { entry(&mut call) }
    })?;
    count(&call, counts, started.elapsed());
    Ok(message)
}

/// A streaming query's reader, open on its source.
pub(super) struct OpenStream<'l> {
    // Declared before the source: the reader closes first.
    pub(super) reader: Handle<'l>,
    pub(super) _source: Source<'l>,
    pub(super) schema: SchemaRef,
    /// The columns kept by `prune_columns`, when a projection was asked.
    pub(super) kept: Option<Vec<usize>>,
}

/// The partitions of a read, and the reader's state when the library serializes it.
pub(super) type Plan = (Vec<Vec<u8>>, Option<Vec<u8>>);

impl Driver<'_> {
    pub(super) fn run(&self, protocol: BenchProtocol, micro_batches: usize) -> Result<Counts> {
        match protocol {
            BenchProtocol::BatchRead => self.run_batch_read(),
            BenchProtocol::MicroBatchRead => self.run_micro_batches(micro_batches),
            BenchProtocol::BatchWrite => Err(Error::usage(
                "a batch write is run by run_batch_write; this is a bug of sparkds",
            )),
        }
    }

    pub(super) fn run_batch_read(&self) -> Result<Counts> {
        let mut counts = Counts::default();
        let start = Instant::now();
        let library = self.library;
        let source = counts.in_library(|| library.create(self.options))?;
        if !source.capabilities.batch_read() {
            return Err(Error::NotSupported {
                capability: "SPARK_DS_BATCH_READ",
                operation: "a batch read",
            });
        }
        let schema = counts.in_library(|| source_schema(library, &source, self.schema.clone()))?;
        let reader = counts.in_library(|| steps::open_reader(library, &source, &schema))?;
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
    pub(super) fn push_filters(
        &self,
        reader: &Handle<'_>,
        counts: &mut Counts,
    ) -> Result<Vec<Filter>> {
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
    pub(super) fn prune_columns(
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
            if counts.in_library(|| steps::prune_columns(library, reader, &pruned))? {
                read_schema = pruned;
            } else {
                kept = Some(indices);
            }
        }
        Ok((read_schema, kept))
    }

    /// The partitions of a batch read, and the reader's state when the library serializes it.
    pub(super) fn plan_batch_read(&self, reader: &Handle<'_>, counts: &mut Counts) -> Result<Plan> {
        let library = self.library;
        let partitions = counts.in_library(|| steps::reader_partitions(library, reader))?;
        let state = counts.in_library(|| steps::serialize_reader(library, reader))?;
        Ok((partitions, state))
    }

    /// A streaming read of `micro_batches` micro-batches, as a query with a trigger runs it:
    /// `latest_offset`, the commit of the previous end, `stream_partitions` and the tasks. A
    /// micro-batch read has no `prune_columns`: the host keeps the columns, as Spark does.
    pub(super) fn run_micro_batches(&self, micro_batches: usize) -> Result<Counts> {
        let mut counts = Counts::default();
        let start_time = Instant::now();
        let library = self.library;
        let stream = self.open_stream(&mut counts)?;
        let mut start =
            counts.in_library(|| steps::initial_offset(library, &stream.reader, None))?;
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
    pub(super) fn open_stream(&self, counts: &mut Counts) -> Result<OpenStream<'_>> {
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
        let (reader, _) =
            counts.in_library(|| steps::open_stream_reader(library, &source, &schema))?;
        Ok(OpenStream {
            reader,
            _source: source,
            schema,
            kept,
        })
    }

    /// Micro-batch `index` from `start`: `latest_offset`, the commit of the previous batch's
    /// end, and when there is new data its plan and its tasks. Returns the batch's end.
    pub(super) fn micro_batch(
        &self,
        stream: &OpenStream<'_>,
        index: usize,
        start: &[u8],
        uncommitted: Option<Vec<u8>>,
        counts: &mut Counts,
    ) -> Result<Vec<u8>> {
        let (library, reader) = (self.library, &stream.reader);
        let context = format!("micro-batch {index}");
        let ctx = Some(context.as_str());
        let end = counts.in_library(|| steps::latest_offset(library, reader, start, ctx))?;
        if let Some(done) = uncommitted {
            counts.in_library(|| steps::commit_offset(library, reader, &done, ctx))?;
        }
        if end == start {
            return Ok(end);
        }
        let partitions =
            counts.in_library(|| steps::stream_partitions(library, reader, start, &end, ctx))?;
        let state = counts.in_library(|| steps::serialize_stream_reader(library, reader, ctx))?;
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
    pub(super) fn run_batch_write(&self, spec: &BenchSpec) -> Result<Counts> {
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
        let query_id = CString::new("sparkds-bench").map_err(|_| Error::usage("a NUL byte"))?;
        let writer = counts.in_library(|| {
            steps::open_writer(
                library,
                &source,
                &schema,
                &query_id,
                WriteMode::Append,
                false,
            )
        })?;
        // `None` is a NULL `serialize_writer`, which `create` refused already (rule 4).
        let state = counts.in_library(|| steps::serialize_writer(library, &writer))?;
        let state = required(state, "serialize_writer")?;
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
    pub(super) fn commit_write(
        &self,
        writer: &Handle<'_>,
        messages: &[Vec<u8>],
        counts: &mut Counts,
    ) -> Result<()> {
        let library = self.library;
        let lent: Vec<Option<&[u8]>> = messages.iter().map(|m| Some(m.as_slice())).collect();
        counts.in_library(|| {
            steps::finish_write(library, writer, true, v1::SPARK_DS_NO_EPOCH, None, &lent)
        })
    }

    /// One write task through the interface: each batch exported as Spark exports it, moved to
    /// `write`, and its commit message.
    pub(super) fn write_task(
        &self,
        task: &Task,
        context: &str,
        state: &[u8],
        schema: &arrow_schema::ffi::FFI_ArrowSchema,
        batches: impl Iterator<Item = RecordBatch>,
        counts: &mut Counts,
    ) -> Result<Vec<u8>> {
        let library = self.library;
        let ctx = Some(context);
        let data_writer = counts.in_library(|| {
            steps::open_data_writer(library, task, Some(state), v1::SPARK_DS_NO_EPOCH, context)
        })?;
        for batch in batches {
            let data = StructArray::from(batch).into_data();
            counts.rows += data.len() as u64;
            counts.batches += 1;
            counts.bytes += buffer_bytes(&data);
            let mut array = FFI_ArrowArray::new(&data);
            // The batch is moved to the library, which releases it (arrow-rs's drop of `array`
            // then finds it released).
            counts.in_library(|| {
                steps::write_batch(library, &data_writer, schema, &mut array, ctx)
            })?;
        }
        let message =
            counts.in_library(|| steps::commit_data_writer(library, &data_writer, ctx))?;
        counts.in_library(|| drop(data_writer));
        Ok(message)
    }

    /// The executor side: one task after another, each reading its stream to the end.
    pub(super) fn read_tasks(&self, tasks: Tasks<'_>, counts: &mut Counts) -> Result<()> {
        let library = self.library;
        for (index, partition) in tasks.partitions.iter().enumerate() {
            let task = Task::new(tasks.stage, index);
            let context = format!("{}partition {index}", tasks.prefix);
            if let Mode::InProcess(entry) = self.mode {
                let mut call = new_call(SPARK_DS_BENCH_READ, &task, tasks.state);
                call.partition = partition.as_ptr();
                call.partition_length = partition.len() as i64;
                let started = Instant::now();
                library.call("spark_ds_bench_v1", Some(&context), || {
                    // SAFETY: the call and the bytes it points to are borrowed for the call.
                    unsafe { entry(&mut call) }
                })?;
                count(&call, counts, started.elapsed());
                continue;
            }
            // The task lives until the stream is released, at the end of this iteration.
            let stream = counts.in_library(|| {
                crate::calls::call_read(library, &task, tasks.state, partition, &context)
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
    pub(super) fn read_stream(
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
