//! What each native method does, in Rust types only: the JNI shims of `exports` convert the
//! arguments, call these, and convert the results. The tests drive these directly.
//!
//! Each handle keeps the data source name for its messages.

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use sparkds::steps::{
    Checks, DataWriter, OpenSource, PartitionStream, Reader, StreamReader, TaskContext, TaskIds,
    Writer,
};
use sparkds::WriteMode;

use crate::descriptor;
use crate::error::{Error, Result};
use crate::ipc::{schema_from_ipc, schema_to_ipc};
use crate::loaded::Loaded;

/// The environment variable that turns on full validation of every batch read and written.
pub const FULL_CHECKS_VAR: &str = "SPARKDS_JNI_FULL_CHECKS";

/// The checks of this process: full validation when `SPARKDS_JNI_FULL_CHECKS=1`, read once.
pub fn checks_from_env() -> Checks {
    static FULL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    Checks {
        full: *FULL.get_or_init(|| std::env::var(FULL_CHECKS_VAR).is_ok_and(|v| v == "1")),
    }
}

/// Asks whether the task was killed; `None` for "never".
pub type Interrupted = Option<Box<dyn Fn() -> bool + Send + Sync>>;

fn schema_arg(bytes: &[u8], what: &str) -> Result<SchemaRef> {
    schema_from_ipc(bytes, what).map(Arc::new)
}

/// An open source.
pub struct SourceHandle {
    source: OpenSource,
}

/// `create`: a source of data source `name` with `options`.
///
/// # Errors
///
/// The failure of `create` (NATIVE_DATA_SOURCE_ERROR), or a violation.
pub fn create(
    library: &'static Loaded,
    name: &str,
    options: &[(String, String)],
) -> Result<SourceHandle> {
    let name = name.to_lowercase();
    OpenSource::create(library.library, &name, options)
        .map(|source| SourceHandle { source })
        .map_err(|e| Error::from_host(&name, e))
}

impl SourceHandle {
    fn fail(&self, e: sparkds::Error) -> Error {
        Error::from_host(self.source.name(), e)
    }

    /// The capability bits that `create` declared.
    pub fn capabilities(&self) -> u64 {
        self.source.capabilities().0
    }

    /// `schema`, as an IPC message; `None` without a `schema` function.
    pub fn schema(&self) -> Result<Option<Vec<u8>>> {
        match self.source.schema().map_err(|e| self.fail(e))? {
            Some(schema) => schema_to_ipc(&schema).map(Some),
            None => Ok(None),
        }
    }

    /// `create_reader` of the schema in `schema` (an IPC message).
    pub fn create_reader(&self, schema: &[u8]) -> Result<ReaderHandle> {
        let schema = schema_arg(schema, "the schema of createReader")?;
        let reader = self
            .source
            .create_reader(schema)
            .map_err(|e| self.fail(e))?;
        Ok(ReaderHandle {
            reader,
            name: self.source.name().to_string(),
        })
    }

    /// `create_stream_reader` of the schema in `schema`.
    pub fn create_stream_reader(&self, schema: &[u8]) -> Result<StreamReaderHandle> {
        let schema = schema_arg(schema, "the schema of createStreamReader")?;
        let reader = self
            .source
            .create_stream_reader(schema)
            .map_err(|e| self.fail(e))?;
        Ok(StreamReaderHandle {
            reader,
            name: self.source.name().to_string(),
        })
    }

    /// `create_writer`; `mode` is `SPARK_DS_WRITE_APPEND` (0) or `SPARK_DS_WRITE_TRUNCATE` (1).
    pub fn create_writer(
        &self,
        schema: &[u8],
        query_id: &str,
        mode: i32,
        streaming: bool,
    ) -> Result<WriterHandle> {
        let schema = schema_arg(schema, "the schema of createWriter")?;
        let mode = match mode {
            0 => WriteMode::Append,
            1 => WriteMode::Truncate,
            other => {
                return Err(Error::argument(format!(
                    "the write mode is {other}; pass SPARK_DS_WRITE_APPEND (0) or SPARK_DS_WRITE_TRUNCATE (1)"
                )))
            }
        };
        let writer = self
            .source
            .create_writer(&schema, query_id, mode, streaming)
            .map_err(|e| self.fail(e))?;
        Ok(WriterHandle {
            writer,
            name: self.source.name().to_string(),
        })
    }
}

/// A reader of a batch read.
pub struct ReaderHandle {
    reader: Reader,
    name: String,
}

impl ReaderHandle {
    fn fail(&self, e: sparkds::Error) -> Error {
        Error::from_host(&self.name, e)
    }

    /// `push_limit`: whether the library accepted it.
    pub fn push_limit(&mut self, limit: i64) -> Result<bool> {
        let result = self.reader.push_limit(limit);
        result.map_err(|e| self.fail(e))
    }

    /// `push_filters` of the filter pushdown extension with `encoded`, one message of
    /// `spark_datasource_filters.h`: one answer per filter, or `None` when the library has no
    /// filter pushdown (`spark_ds_filters_init`).
    pub fn push_filters(&mut self, encoded: &[u8]) -> Result<Option<Vec<bool>>> {
        let result = self.reader.push_filters(encoded);
        result.map_err(|e| self.fail(e))
    }

    /// `prune_columns` with the schema in `required` (an IPC message).
    pub fn prune_columns(&mut self, required: &[u8]) -> Result<bool> {
        let required = schema_arg(required, "the required schema of pruneColumns")?;
        let result = self.reader.prune_columns(required);
        result.map_err(|e| self.fail(e))
    }

    /// Offers this reader what another was offered, and checks it answers the same (rule 32):
    /// the filters' message and answers, the limit and whether it was accepted, the pruned
    /// columns (an IPC message), each when it was offered.
    pub fn replay(
        &mut self,
        filters: Option<(Vec<u8>, Vec<bool>)>,
        limit: Option<(i64, bool)>,
        columns: Option<&[u8]>,
    ) -> Result<()> {
        let columns = match columns {
            Some(bytes) => Some((schema_arg(bytes, "the pruned schema of replay")?, true)),
            None => None,
        };
        let pushed = sparkds::steps::Pushdowns {
            filters,
            limit,
            columns,
        };
        let result = self.reader.replay(&pushed);
        result.map_err(|e| self.fail(e))
    }

    /// `partitions`.
    pub fn partitions(&self) -> Result<Vec<Vec<u8>>> {
        self.reader.partitions().map_err(|e| self.fail(e))
    }

    /// `serialize_reader`, or `None`.
    pub fn serialize(&self) -> Result<Option<Vec<u8>>> {
        self.reader.serialize().map_err(|e| self.fail(e))
    }
}

/// A reader of a stream of micro-batches.
pub struct StreamReaderHandle {
    reader: StreamReader,
    name: String,
}

impl StreamReaderHandle {
    fn fail(&self, e: sparkds::Error) -> Error {
        Error::from_host(&self.name, e)
    }

    /// `initial_offset`.
    pub fn initial_offset(&self) -> Result<Vec<u8>> {
        self.reader.initial_offset().map_err(|e| self.fail(e))
    }

    /// `latest_offset` after `start`.
    pub fn latest_offset(&self, start: &[u8]) -> Result<Vec<u8>> {
        self.reader.latest_offset(start).map_err(|e| self.fail(e))
    }

    /// `stream_partitions` from `start` to `end`.
    pub fn partitions(&self, start: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.reader.partitions(start, end).map_err(|e| self.fail(e))
    }

    /// `serialize_stream_reader`, or `None`.
    pub fn serialize(&self) -> Result<Option<Vec<u8>>> {
        self.reader.serialize().map_err(|e| self.fail(e))
    }

    /// `commit_offset`, when the library has it.
    pub fn commit_offset(&self, end: &[u8]) -> Result<()> {
        self.reader
            .commit_offset(end)
            .map(|_| ())
            .map_err(|e| self.fail(e))
    }
}

/// The stream of a partition, with the descriptor of its last batch.
pub struct StreamHandle {
    stream: PartitionStream,
    name: String,
    descriptor: Vec<i64>,
}

/// What a partition is read with: its bytes, the reader's state, and the filters to check.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadInputs<'a> {
    /// The reader's state (`serialize_reader`), or `None`.
    pub state: Option<&'a [u8]>,
    /// The partition's bytes.
    pub partition: &'a [u8],
    /// The filters that the reader accepted, one message of `spark_datasource_filters.h`,
    /// checked on every row (rule 31); `None` to take the rows as they are.
    pub accepted_filters: Option<&'a [u8]>,
}

/// `read`: opens the stream of a partition, whose schema must be `schema` (an IPC message).
///
/// # Errors
///
/// The failure of `read`, or a violation (such as a stream of another schema); accepted filters
/// that do not decode, or name a column that `schema` does not have.
pub fn read(
    library: &'static Loaded,
    schema: &[u8],
    inputs: ReadInputs<'_>,
    ids: TaskIds,
    interrupted: Interrupted,
    checks: Checks,
) -> Result<StreamHandle> {
    let schema = schema_arg(schema, "the schema of read")?;
    let accepted = match inputs.accepted_filters {
        Some(message) => sparkds::filters::decode(message).map_err(|e| {
            Error::argument(format!(
                "the accepted filters are not a message of spark_datasource_filters.h: {e}"
            ))
        })?,
        None => Vec::new(),
    };
    let task = TaskContext::new(ids, interrupted);
    let fail = |e| Error::from_host(&library.name, e);
    let mut stream = PartitionStream::open(
        library.library,
        task,
        schema,
        inputs.state,
        inputs.partition,
        checks,
    )
    .map_err(fail)?;
    stream.check_accepted(accepted).map_err(fail)?;
    Ok(StreamHandle {
        stream,
        name: library.name.clone(),
        descriptor: Vec::new(),
    })
}

impl StreamHandle {
    /// The descriptor of the next batch, or `None` at the end of the stream. The buffers it
    /// describes stay valid until the next call, or until the handle is dropped.
    pub fn next_batch(&mut self) -> Result<Option<&[i64]>> {
        match self.stream.next_batch() {
            Ok(Some(batch)) => {
                descriptor::describe(batch.data(), &mut self.descriptor);
                Ok(Some(&self.descriptor))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(Error::from_host(&self.name, e)),
        }
    }

    /// The stream, for tests that look at the batches themselves.
    pub fn stream(&mut self) -> &mut PartitionStream {
        &mut self.stream
    }
}

/// A writer.
pub struct WriterHandle {
    writer: Writer,
    name: String,
}

impl WriterHandle {
    fn fail(&self, e: sparkds::Error) -> Error {
        Error::from_host(&self.name, e)
    }

    /// `serialize_writer`, or `None`.
    pub fn serialize(&self) -> Result<Option<Vec<u8>>> {
        self.writer.serialize().map_err(|e| self.fail(e))
    }

    /// `commit` of `epoch_id` with the tasks' messages.
    pub fn commit(&self, epoch_id: i64, messages: &[Option<Vec<u8>>]) -> Result<()> {
        let messages: Vec<Vec<u8>> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                m.clone().ok_or_else(|| {
                    Error::argument(format!(
                        "the commit message of task {i} is null; commit gets a message from every task (abort takes the null ones)"
                    ))
                })
            })
            .collect::<Result<_>>()?;
        self.writer
            .commit(epoch_id, &messages)
            .map_err(|e| self.fail(e))
    }

    /// `abort` of `epoch_id`, `None` for the tasks that did not commit.
    pub fn abort(&self, epoch_id: i64, messages: &[Option<Vec<u8>>]) -> Result<()> {
        self.writer
            .abort(epoch_id, messages)
            .map_err(|e| self.fail(e))
    }
}

/// The data writer of a task.
pub struct DataWriterHandle {
    writer: DataWriter,
    schema: SchemaRef,
    name: String,
}

/// `create_data_writer` for batches of `schema` (an IPC message).
///
/// # Errors
///
/// The failure of `create_data_writer`, or a violation.
pub fn create_data_writer(
    library: &'static Loaded,
    schema: &[u8],
    state: Option<&[u8]>,
    epoch_id: i64,
    ids: TaskIds,
    interrupted: Interrupted,
    checks: Checks,
) -> Result<DataWriterHandle> {
    let schema = schema_arg(schema, "the schema of createDataWriter")?;
    let task = TaskContext::new(ids, interrupted);
    let writer = DataWriter::create(
        library.library,
        task,
        schema.clone(),
        state,
        epoch_id,
        checks,
    )
    .map_err(|e| Error::from_host(&library.name, e))?;
    Ok(DataWriterHandle {
        writer,
        schema,
        name: library.name.clone(),
    })
}

impl DataWriterHandle {
    fn fail(&self, e: sparkds::Error) -> Error {
        Error::from_host(&self.name, e)
    }

    /// The schema of the batches to write.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// `write` of the batch that `batch` describes: its buffers are copied, then moved to the
    /// library.
    ///
    /// # Safety
    ///
    /// Every `(address, length)` of the descriptor is `length` readable bytes during the call.
    pub unsafe fn write(&mut self, batch: &[i64]) -> Result<()> {
        // SAFETY: the caller's contract.
        let data = unsafe { descriptor::assemble(&self.schema, batch) }?;
        let written = self.writer.write(data);
        written.map_err(|e| self.fail(e))
    }

    /// Writes a batch that Rust code made, as [`DataWriterHandle::write`] does after the copy.
    pub fn write_batch(&mut self, batch: &arrow_array::RecordBatch) -> Result<()> {
        let data = arrow_array::StructArray::from(batch.clone()).into();
        let written = self.writer.write(data);
        written.map_err(|e| self.fail(e))
    }

    /// `commit_data_writer`: the task's message.
    pub fn commit(&mut self) -> Result<Vec<u8>> {
        let message = self.writer.commit();
        message.map_err(|e| self.fail(e))
    }

    /// `abort_data_writer`.
    pub fn abort(&mut self) -> Result<()> {
        let aborted = self.writer.abort();
        aborted.map_err(|e| self.fail(e))
    }
}
