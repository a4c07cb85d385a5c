//! The driver's steps: a source and its readers, stream readers and writers, each closed when
//! dropped.

use std::ffi::{c_int, c_void, CString};
use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use spark_datasource_core::filters::Filter;

use crate::calls::{
    export_schema, required, schema_ptr, sink_call, sink_call_one, source_schema, still_borrowed,
};
use crate::error::{Error, Result, Violation};
use crate::library::{Capabilities, Handle, HandleKind, Library, Source};
use crate::write::WriteMode;
use spark_datasource_abi::v1::{self, SparkDsWriteInfo};

/// An open source: what `create` returned. Closed (`close`) once it and every reader and writer
/// created from it are dropped.
pub struct OpenSource {
    inner: Arc<SourceInner>,
}

struct SourceInner {
    source: Source<'static>,
    library: &'static Library,
    name: String,
}

impl OpenSource {
    /// Calls `create` for the data source `name` with `options` (keys and values as the user
    /// wrote them), and checks the capabilities it declares (rule 4).
    ///
    /// # Errors
    ///
    /// The failure of `create`, with the library's message, or a violation.
    pub fn create(
        library: &'static Library,
        name: &str,
        options: &[(String, String)],
    ) -> Result<OpenSource> {
        let source = library.create_named(name, options)?;
        // Arc, not Rc: a host such as the JNI library uses a source from several threads (one at
        // a time), and its readers and writers keep it open, so the count must be atomic.
        #[allow(clippy::arc_with_non_send_sync)]
        Ok(OpenSource {
            inner: Arc::new(SourceInner {
                source,
                library,
                name: name.to_string(),
            }),
        })
    }

    /// The library of the source.
    pub fn library(&self) -> &'static Library {
        self.inner.library
    }

    /// The data source name given to `create`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The capabilities that `create` declared.
    pub fn capabilities(&self) -> Capabilities {
        self.inner.source.capabilities
    }

    /// `schema`: the source's schema, checked (a struct of the types of version 1), or `None`
    /// when the library has no `schema` function.
    ///
    /// # Errors
    ///
    /// The failure of `schema`, or a violation.
    pub fn schema(&self) -> Result<Option<SchemaRef>> {
        if self.inner.library.table().schema.is_none() {
            return Ok(None);
        }
        source_schema(self.inner.library, &self.inner.source, None).map(Some)
    }

    fn need(
        &self,
        declared: bool,
        capability: &'static str,
        operation: &'static str,
    ) -> Result<()> {
        if declared {
            Ok(())
        } else {
            Err(Error::NotSupported {
                capability,
                operation,
            })
        }
    }

    /// `create_reader` with `schema`, the source's or the one the query gave.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] without `SPARK_DS_BATCH_READ`, the failure of `create_reader`,
    /// or a violation.
    pub fn create_reader(&self, schema: SchemaRef) -> Result<Reader> {
        let caps = self.capabilities();
        self.need(caps.batch_read(), "SPARK_DS_BATCH_READ", "a batch read")?;
        let library = self.inner.library;
        let handle = open_reader(library, &self.inner.source, &schema)?;
        Ok(Reader {
            handle,
            source: self.inner.clone(),
            schema,
            accepted: Vec::new(),
        })
    }

    /// `create_stream_reader` with `schema`.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] without `SPARK_DS_MICRO_BATCH_READ`, the failure of
    /// `create_stream_reader`, or a violation.
    pub fn create_stream_reader(&self, schema: SchemaRef) -> Result<StreamReader> {
        let caps = self.capabilities();
        self.need(
            caps.micro_batch_read(),
            "SPARK_DS_MICRO_BATCH_READ",
            "a streaming read",
        )?;
        let library = self.inner.library;
        let (handle, _) = open_stream_reader(library, &self.inner.source, &schema)?;
        Ok(StreamReader {
            handle,
            source: self.inner.clone(),
        })
    }

    /// `create_writer` for data of `schema`, with the write's `query_id` and `mode`; a streaming
    /// write commits per epoch.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] when the source does not declare the write's capability (or
    /// `SPARK_DS_TRUNCATE` for [`WriteMode::Truncate`]); a `query_id` with a NUL byte; the
    /// failure of `create_writer`; a violation.
    pub fn create_writer(
        &self,
        schema: &Schema,
        query_id: &str,
        mode: WriteMode,
        streaming: bool,
    ) -> Result<Writer> {
        let caps = self.capabilities();
        if streaming {
            self.need(
                caps.streaming_write(),
                "SPARK_DS_STREAMING_WRITE",
                "a streaming write",
            )?;
        } else {
            self.need(caps.batch_write(), "SPARK_DS_BATCH_WRITE", "a batch write")?;
        }
        if mode == WriteMode::Truncate {
            self.need(caps.truncate(), "SPARK_DS_TRUNCATE", "the truncate mode")?;
        }
        let library = self.inner.library;
        let query_id = CString::new(query_id).map_err(|_| {
            Error::usage(format!(
                "the query id `{}` contains a NUL byte; pass an id without one",
                query_id.replace('\0', "\\0")
            ))
        })?;
        let handle = open_writer(
            library,
            &self.inner.source,
            schema,
            &query_id,
            mode,
            streaming,
        )?;
        Ok(Writer {
            handle,
            source: self.inner.clone(),
        })
    }
}

/// A reader of a batch read: what `create_reader` returned. Dropping it calls `close_reader`.
pub struct Reader {
    // Declared before the source: the reader closes first.
    handle: Handle<'static>,
    source: Arc<SourceInner>,
    schema: SchemaRef,
    accepted: Vec<Filter>,
}

/// What a reader was offered and how it answered, to replay on the reader that plans
/// ([`Reader::replay`], rule 32): each is `None` when it was not offered.
#[derive(Clone, Debug, Default)]
pub struct Pushdowns {
    /// The message of `push_filters` and the answers, one per filter.
    pub filters: Option<(Vec<u8>, Vec<bool>)>,
    /// The limit of `push_limit` and whether it was accepted.
    pub limit: Option<(i64, bool)>,
    /// The columns of `prune_columns` and whether they were pruned.
    pub columns: Option<(SchemaRef, bool)>,
}

impl Pushdowns {
    /// Whether nothing was offered.
    pub fn is_empty(&self) -> bool {
        self.filters.is_none() && self.limit.is_none() && self.columns.is_none()
    }

    /// Rule 32: `again`, the answers of a new reader to the same offers, are these.
    ///
    /// # Errors
    ///
    /// A violation of rule 32 naming the function and both answers.
    pub(crate) fn same_as(&self, again: &Pushdowns) -> Result<()> {
        let differs = |function: &str, first: String, then: String| -> Error {
            Violation::new(
                function,
                32,
                format!(
                    "answered {first} and then {then} for the same offer to a new reader of the \
                     same schema and options; answer from the reader's schema, options and the \
                     offer alone"
                ),
            )
            .into()
        };
        let bytes =
            |a: &[bool]| format!("{:?}", a.iter().map(|&b| u8::from(b)).collect::<Vec<_>>());
        if let (Some((_, first)), Some((_, then))) = (&self.filters, &again.filters) {
            if first != then {
                return Err(differs("push_filters", bytes(first), bytes(then)));
            }
        }
        if let (Some((limit, first)), Some((_, then))) = (self.limit, again.limit) {
            if first != then {
                let said = |a: bool| {
                    format!(
                        "{} the limit {limit}",
                        if a { "accepting" } else { "refusing" }
                    )
                };
                return Err(differs("push_limit", said(first), said(then)));
            }
        }
        if let (Some((_, first)), Some((_, then))) = (&self.columns, &again.columns) {
            if first != then {
                let said = |a: bool| if a { "pruning" } else { "not pruning" }.to_string();
                return Err(differs("prune_columns", said(*first), said(*then)));
            }
        }
        Ok(())
    }
}

impl Reader {
    /// `push_filters` of the filter pushdown extension (`spark_datasource_filters.h`) with
    /// `encoded`, one message of the header's encoding (the conjuncts of the query's condition,
    /// as [`encode`](crate::filters::encode) makes it): one answer per filter, true when the
    /// library accepted it, or `None` when the library has no filter pushdown
    /// (`spark_ds_filters_init`, or its `push_filters`, is missing). Call it right after
    /// [`OpenSource::create_reader`], and push a limit only when every filter was accepted.
    ///
    /// # Errors
    ///
    /// A message that does not decode (a usage error naming the byte); the failure of
    /// `push_filters` (a malformed message for the library, with its message); a violation of
    /// rule 30 (the sink not called exactly once, or not with one byte of 0 or 1 per filter).
    pub fn push_filters(&mut self, encoded: &[u8]) -> Result<Option<Vec<bool>>> {
        let filters = crate::filters::decode(encoded).map_err(|e| {
            Error::usage(format!(
                "the filters to push are not a message of spark_datasource_filters.h: {e}"
            ))
        })?;
        let library = self.source.library;
        let Some(push_filters) = library.push_filters() else {
            return Ok(None);
        };
        // SAFETY: the reader is open, held by `self`.
        let answers = unsafe {
            crate::calls::push_filters(
                library,
                push_filters,
                self.handle.ptr(),
                encoded,
                filters.len(),
            )
        }?;
        self.accepted = filters
            .into_iter()
            .zip(&answers)
            .filter(|(_, a)| **a)
            .map(|(f, _)| f)
            .collect();
        Ok(Some(answers))
    }

    /// The filters that the last [`Reader::push_filters`] accepted: the library guarantees them
    /// on every row it returns.
    pub fn accepted_filters(&self) -> &[Filter] {
        &self.accepted
    }

    /// The schema that `read` will return: the reader's, or the pruned one.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// `push_limit`: whether the library accepted `limit` (false when it has no
    /// `push_limit`).
    ///
    /// # Errors
    ///
    /// A negative limit; the failure of `push_limit`.
    pub fn push_limit(&mut self, limit: i64) -> Result<bool> {
        if limit < 0 {
            return Err(Error::usage(format!(
                "the limit is {limit}; a limit is 0 or more"
            )));
        }
        Ok(push_limit(self.source.library, &self.handle, limit)?.unwrap_or(false))
    }

    /// `prune_columns` with `required`, a subset of the reader's fields in any order: whether
    /// the library pruned (false when it has no `prune_columns`, and the stream then returns the
    /// reader's schema). Zero fields, as `count(*)` asks, are a valid subset.
    ///
    /// # Errors
    ///
    /// A field that the reader's schema does not have, with that type and nullability; the
    /// failure of `prune_columns`.
    pub fn prune_columns(&mut self, required: SchemaRef) -> Result<bool> {
        for field in required.fields() {
            let known = self.schema.field_with_name(field.name()).ok();
            // Names, types and nullability: metadata is not part of what is read.
            let same = |k: &arrow_schema::Field| {
                k.is_nullable() == field.is_nullable()
                    && k.data_type().equals_datatype(field.data_type())
            };
            if !known.is_some_and(same) {
                let names: Vec<String> = self
                    .schema
                    .fields()
                    .iter()
                    .map(|f| format!("{}: {}", f.name(), f.data_type()))
                    .collect();
                return Err(Error::usage(format!(
                    "the required column `{}: {}` is not a column of the reader's schema ({}); ask for some of those columns, as they are",
                    field.name(),
                    field.data_type(),
                    names.join(", ")
                )));
            }
        }
        if !prune_columns(self.source.library, &self.handle, &required)? {
            return Ok(false);
        }
        self.schema = required;
        Ok(true)
    }

    /// Offers `pushed` again, to this reader (just created, of the schema and options of the
    /// reader that answered it), in Spark's order: the filters, the limit, then the columns; and
    /// checks that the library answers as it did (rule 32). Spark has dropped what was accepted
    /// from its plan by the time the reader that plans the partitions is asked again.
    ///
    /// # Errors
    ///
    /// The failure of a pushdown, or a violation of rule 32 naming the function and both answers.
    pub fn replay(&mut self, pushed: &Pushdowns) -> Result<()> {
        let mut again = Pushdowns::default();
        if let Some((message, _)) = &pushed.filters {
            let answers = self.push_filters(message)?.unwrap_or_default();
            again.filters = Some((message.clone(), answers));
        }
        if let Some((limit, _)) = pushed.limit {
            again.limit = Some((limit, self.push_limit(limit)?));
        }
        if let Some((columns, _)) = &pushed.columns {
            again.columns = Some((columns.clone(), self.prune_columns(columns.clone())?));
        }
        pushed.same_as(&again)
    }

    /// `partitions`: the bytes of each partition, in order.
    ///
    /// # Errors
    ///
    /// The failure of `partitions`, or a violation of its sink (rule 10).
    pub fn partitions(&self) -> Result<Vec<Vec<u8>>> {
        reader_partitions(self.source.library, &self.handle)
    }

    /// `serialize_reader`: the state that `read` gets, or `None` when the library has none.
    ///
    /// # Errors
    ///
    /// The failure of `serialize_reader`, or a violation of its sink.
    pub fn serialize(&self) -> Result<Option<Vec<u8>>> {
        serialize_reader(self.source.library, &self.handle)
    }
}

/// A function of the table that returns one byte array through a sink.
type SinkFunction = unsafe extern "C" fn(*mut c_void, v1::SparkDsSink, *mut c_void) -> c_int;

/// A reader of a stream of micro-batches: what `create_stream_reader` returned. Dropping it
/// calls `close_stream_reader`.
pub struct StreamReader {
    handle: Handle<'static>,
    source: Arc<SourceInner>,
}

impl StreamReader {
    /// `initial_offset`.
    ///
    /// # Errors
    ///
    /// The failure of `initial_offset`, or a violation of its sink.
    pub fn initial_offset(&self) -> Result<Vec<u8>> {
        initial_offset(self.source.library, &self.handle, None)
    }

    /// `latest_offset` after `start`.
    ///
    /// # Errors
    ///
    /// The failure of `latest_offset`, or a violation of its sink.
    pub fn latest_offset(&self, start: &[u8]) -> Result<Vec<u8>> {
        latest_offset(self.source.library, &self.handle, start, None)
    }

    /// `stream_partitions` of the micro-batch after `start` up to `end`.
    ///
    /// # Errors
    ///
    /// The failure of `stream_partitions`, or a violation of its sink.
    pub fn partitions(&self, start: &[u8], end: &[u8]) -> Result<Vec<Vec<u8>>> {
        stream_partitions(self.source.library, &self.handle, start, end, None)
    }

    /// `serialize_stream_reader`, or `None` when the library has none.
    ///
    /// # Errors
    ///
    /// The failure of `serialize_stream_reader`, or a violation of its sink.
    pub fn serialize(&self) -> Result<Option<Vec<u8>>> {
        serialize_stream_reader(self.source.library, &self.handle, None)
    }

    /// `commit_offset` of `end`: false when the library has none.
    ///
    /// # Errors
    ///
    /// The failure of `commit_offset`.
    pub fn commit_offset(&self, end: &[u8]) -> Result<bool> {
        commit_offset(self.source.library, &self.handle, end, None)
    }
}

// The calls of a stream reader, with the context of their messages ("micro-batch 3"), for the
// steps and the whole-protocol stream read.

/// A function of the table that returns one byte array through a sink, called on an open
/// handle (a reader, a stream reader or a writer).
fn sink_one(
    library: &Library,
    handle: &Handle<'_>,
    function: &'static str,
    f: SinkFunction,
    context: Option<&str>,
) -> Result<Vec<u8>> {
    let handle = handle.ptr();
    sink_call_one(library, function, context, |add, sink| {
        // SAFETY: the handle is open; the sink is open for the call.
        unsafe { f(handle, add, sink) }
    })
}

/// `initial_offset`.
pub(crate) fn initial_offset(
    library: &Library,
    reader: &Handle<'_>,
    context: Option<&str>,
) -> Result<Vec<u8>> {
    let f = required(library.table().initial_offset, "initial_offset")?;
    sink_one(library, reader, "initial_offset", f, context)
}

/// `latest_offset` after `start`.
pub(crate) fn latest_offset(
    library: &Library,
    reader: &Handle<'_>,
    start: &[u8],
    context: Option<&str>,
) -> Result<Vec<u8>> {
    let latest = required(library.table().latest_offset, "latest_offset")?;
    let reader = reader.ptr();
    sink_call_one(library, "latest_offset", context, |add, sink| {
        // SAFETY: the reader is open; `start` is borrowed; the sink is open.
        unsafe { latest(reader, start.as_ptr(), start.len() as i64, add, sink) }
    })
}

/// `stream_partitions` of the micro-batch after `start` up to `end`.
pub(crate) fn stream_partitions(
    library: &Library,
    reader: &Handle<'_>,
    start: &[u8],
    end: &[u8],
    context: Option<&str>,
) -> Result<Vec<Vec<u8>>> {
    let plan = required(library.table().stream_partitions, "stream_partitions")?;
    let reader = reader.ptr();
    sink_call(library, "stream_partitions", context, |add, sink| {
        // SAFETY: the reader is open; the offsets are borrowed; the sink is open.
        unsafe {
            plan(
                reader,
                start.as_ptr(),
                start.len() as i64,
                end.as_ptr(),
                end.len() as i64,
                add,
                sink,
            )
        }
    })
}

/// `serialize_stream_reader`, or `None` when the library has none.
pub(crate) fn serialize_stream_reader(
    library: &Library,
    reader: &Handle<'_>,
    context: Option<&str>,
) -> Result<Option<Vec<u8>>> {
    let Some(f) = library.table().serialize_stream_reader else {
        return Ok(None);
    };
    sink_one(library, reader, "serialize_stream_reader", f, context).map(Some)
}

/// `commit_offset` of `end`: false when the library has none.
pub(crate) fn commit_offset(
    library: &Library,
    reader: &Handle<'_>,
    end: &[u8],
    context: Option<&str>,
) -> Result<bool> {
    let Some(commit) = library.table().commit_offset else {
        return Ok(false);
    };
    let reader = reader.ptr();
    library.call("commit_offset", context, || {
        // SAFETY: the reader is open; `end` is borrowed for the call.
        unsafe { commit(reader, end.as_ptr(), end.len() as i64) }
    })?;
    Ok(true)
}

/// A writer: what `create_writer` returned. Dropping it calls `close_writer`.
pub struct Writer {
    handle: Handle<'static>,
    source: Arc<SourceInner>,
}

impl Writer {
    /// `serialize_writer`: the state that each data writer gets, or `None` when the library
    /// has none.
    ///
    /// # Errors
    ///
    /// The failure of `serialize_writer`, or a violation of its sink.
    pub fn serialize(&self) -> Result<Option<Vec<u8>>> {
        serialize_writer(self.source.library, &self.handle)
    }

    /// `commit` of `epoch_id` (`SPARK_DS_NO_EPOCH`, -1, for a batch write) with the commit
    /// messages of the tasks, in partition order.
    ///
    /// # Errors
    ///
    /// The failure of `commit`.
    pub fn commit(&self, epoch_id: i64, messages: &[Vec<u8>]) -> Result<()> {
        let messages: Vec<Option<&[u8]>> = messages.iter().map(|m| Some(m.as_slice())).collect();
        self.finish("commit", epoch_id, &messages)
    }

    /// `abort` of `epoch_id`, with the messages of the tasks that committed and `None` for the
    /// others.
    ///
    /// # Errors
    ///
    /// The failure of `abort`.
    pub fn abort(&self, epoch_id: i64, messages: &[Option<Vec<u8>>]) -> Result<()> {
        let messages: Vec<Option<&[u8]>> = messages.iter().map(|m| m.as_deref()).collect();
        self.finish("abort", epoch_id, &messages)
    }

    fn finish(
        &self,
        function: &'static str,
        epoch_id: i64,
        messages: &[Option<&[u8]>],
    ) -> Result<()> {
        let context = (epoch_id != v1::SPARK_DS_NO_EPOCH).then(|| format!("epoch {epoch_id}"));
        let commit = function == "commit";
        finish_write(
            self.source.library,
            &self.handle,
            commit,
            epoch_id,
            context.as_deref(),
            messages,
        )
    }
}

/// `commit` (when `commit` is true) or `abort` of `epoch_id` on an open writer, with the
/// messages of the tasks (`None` for those that did not commit): the one call of either in the
/// host, for the steps and the whole-protocol write.
pub(crate) fn finish_write(
    library: &Library,
    writer: &Handle<'_>,
    commit: bool,
    epoch_id: i64,
    context: Option<&str>,
    messages: &[Option<&[u8]>],
) -> Result<()> {
    let table = library.table();
    let (function, f) = if commit {
        ("commit", required(table.commit, "commit")?)
    } else {
        ("abort", required(table.abort, "abort")?)
    };
    let pointers: Vec<*const u8> = messages
        .iter()
        .map(|m| m.map_or(std::ptr::null(), <[u8]>::as_ptr))
        .collect();
    let lengths: Vec<i64> = messages
        .iter()
        .map(|m| m.map_or(0, |m| m.len() as i64))
        .collect();
    let writer = writer.ptr();
    library.call(function, context, || {
        // SAFETY: the writer is open; the message arrays are borrowed for the call.
        unsafe {
            f(
                writer,
                epoch_id,
                pointers.as_ptr(),
                lengths.as_ptr(),
                messages.len() as i64,
            )
        }
    })
}

/// `create_reader` of `schema` on an open source. For the steps and the whole-protocol read.
pub(crate) fn open_reader<'l>(
    library: &'l Library,
    source: &Source<'l>,
    schema: &SchemaRef,
) -> Result<Handle<'l>> {
    let create = required(library.table().create_reader, "create_reader")?;
    let ffi = export_schema(schema)?;
    let source = source.handle.ptr();
    let handle = library.open("create_reader", None, HandleKind::Reader, |reader| {
        // SAFETY: the source is open, the schema is borrowed for the call, `reader` is valid
        // for writes.
        unsafe { create(source, schema_ptr(&ffi), reader) }
    })?;
    still_borrowed(&ffi, "create_reader", None)?;
    Ok(handle)
}

/// `create_stream_reader` of `schema` on an open source. For the steps and the whole-protocol
/// stream read: the reader and the schema lent to the call, which the stream read keeps as
/// long as the reader.
pub(crate) fn open_stream_reader<'l>(
    library: &'l Library,
    source: &Source<'l>,
    schema: &SchemaRef,
) -> Result<(Handle<'l>, Box<arrow_schema::ffi::FFI_ArrowSchema>)> {
    let create = required(library.table().create_stream_reader, "create_stream_reader")?;
    let ffi = export_schema(schema)?;
    let source = source.handle.ptr();
    let handle = library.open(
        "create_stream_reader",
        None,
        HandleKind::StreamReader,
        |reader| {
            // SAFETY: the source is open, the schema is borrowed for the call, `reader` is
            // valid for writes.
            unsafe { create(source, schema_ptr(&ffi), reader) }
        },
    )?;
    still_borrowed(&ffi, "create_stream_reader", None)?;
    Ok((handle, ffi))
}

/// `partitions`: the bytes of each partition, in order.
pub(crate) fn reader_partitions(library: &Library, reader: &Handle<'_>) -> Result<Vec<Vec<u8>>> {
    let partitions = required(library.table().partitions, "partitions")?;
    let reader = reader.ptr();
    sink_call(library, "partitions", None, |add, sink| {
        // SAFETY: the reader is open; the sink is open for the call.
        unsafe { partitions(reader, add, sink) }
    })
}

/// `serialize_reader`: the state that `read` gets, or `None` when the library has none.
pub(crate) fn serialize_reader(library: &Library, reader: &Handle<'_>) -> Result<Option<Vec<u8>>> {
    let Some(f) = library.table().serialize_reader else {
        return Ok(None);
    };
    sink_one(library, reader, "serialize_reader", f, None).map(Some)
}

/// `serialize_writer`: the state that each data writer gets, or `None` when the library has
/// none.
pub(crate) fn serialize_writer(library: &Library, writer: &Handle<'_>) -> Result<Option<Vec<u8>>> {
    let Some(f) = library.table().serialize_writer else {
        return Ok(None);
    };
    sink_one(library, writer, "serialize_writer", f, None).map(Some)
}

/// `push_limit`: whether the library accepted `limit`, `None` when it has no `push_limit`.
pub(crate) fn push_limit(
    library: &Library,
    reader: &Handle<'_>,
    limit: i64,
) -> Result<Option<bool>> {
    let Some(push_limit) = library.table().push_limit else {
        return Ok(None);
    };
    let mut accepted: c_int = 0;
    let reader = reader.ptr();
    library.call("push_limit", None, || {
        // SAFETY: the reader is open and `accepted` is valid for writes.
        unsafe { push_limit(reader, limit, &mut accepted) }
    })?;
    Ok(Some(accepted != 0))
}

/// `prune_columns` with `required`: false when the library has no `prune_columns`.
pub(crate) fn prune_columns(
    library: &Library,
    reader: &Handle<'_>,
    required: &Schema,
) -> Result<bool> {
    let Some(prune_columns) = library.table().prune_columns else {
        return Ok(false);
    };
    let ffi = export_schema(required)?;
    let reader = reader.ptr();
    library.call("prune_columns", None, || {
        // SAFETY: the reader is open and the schema is borrowed for the call.
        unsafe { prune_columns(reader, schema_ptr(&ffi)) }
    })?;
    still_borrowed(&ffi, "prune_columns", None)?;
    Ok(true)
}

/// `create_writer` on an open source for data of `schema`, with the write's query id, mode and
/// kind. For the steps and the whole-protocol write.
pub(crate) fn open_writer<'l>(
    library: &'l Library,
    source: &Source<'l>,
    schema: &Schema,
    query_id: &std::ffi::CStr,
    mode: WriteMode,
    streaming: bool,
) -> Result<Handle<'l>> {
    let create = required(library.table().create_writer, "create_writer")?;
    let ffi = export_schema(schema)?;
    let info = SparkDsWriteInfo {
        size: std::mem::size_of::<SparkDsWriteInfo>() as i64,
        schema: schema_ptr(&ffi),
        query_id: query_id.as_ptr(),
        mode: match mode {
            WriteMode::Append => v1::SPARK_DS_WRITE_APPEND,
            WriteMode::Truncate => v1::SPARK_DS_WRITE_TRUNCATE,
        },
        streaming: i32::from(streaming),
    };
    let source = source.handle.ptr();
    let handle = library.open("create_writer", None, HandleKind::Writer, |writer| {
        // SAFETY: the source is open; `info` and what it points to are borrowed for the call;
        // `writer` is valid for writes.
        unsafe { create(source, &info, writer) }
    })?;
    still_borrowed(&ffi, "create_writer", None)?;
    Ok(handle)
}
