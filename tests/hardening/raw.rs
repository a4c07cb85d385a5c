//! The C interface of a library, called directly: no check of the host stands between the
//! inputs the tests generate and the library, as a buggy or hostile host would call it. Every
//! failing call must leave a message in `last_error` (rule 7); [`Raw::failure`] panics otherwise.

#![allow(dead_code)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::ptr;

use spark_datasource_abi::v1::{
    SparkDsCreateInfo, SparkDsHost, SparkDsInitFunction, SparkDsLibrary, SparkDsTaskContext,
    SparkDsWriteInfo, SPARK_DS_ABI_VERSION,
};
use sparkds::arrow_array::ffi::{to_ffi, FFI_ArrowArray};
use sparkds::arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use sparkds::arrow_array::{Array, RecordBatch, StructArray};
use sparkds::arrow_schema::ffi::FFI_ArrowSchema;
use sparkds::arrow_schema::{Schema, SchemaRef};

pub type Handle = *mut c_void;

/// A loaded library and its table.
pub struct Raw {
    table: SparkDsLibrary,
    // Kept loaded for the process, as Spark keeps a library.
    _library: &'static libloading::Library,
}

// SAFETY: the table holds function pointers and sizes only; a library is called from any thread
// (rule 10), which is what the concurrency tests check.
unsafe impl Send for Raw {}
unsafe impl Sync for Raw {}

/// What a failed call left in `last_error`.
pub type Failure = String;

unsafe extern "C" fn collect(sink: *mut c_void, data: *const u8, length: i64) {
    // SAFETY: `sink` is the `Vec<Vec<u8>>` that the caller passed; `data` holds `length` bytes.
    let out = unsafe { &mut *(sink as *mut Vec<Vec<u8>>) };
    let bytes = if length <= 0 || data.is_null() {
        Vec::new()
    } else {
        unsafe { std::slice::from_raw_parts(data, length as usize) }.to_vec()
    };
    out.push(bytes);
}

unsafe extern "C" fn never_interrupted(_: *const SparkDsTaskContext) -> c_int {
    0
}

unsafe extern "C" fn interrupted_when_flagged(task: *const SparkDsTaskContext) -> c_int {
    // SAFETY: `host_data` is the `AtomicBool` of the task, alive for the task's calls.
    let flag = unsafe { &*((*task).host_data as *const std::sync::atomic::AtomicBool) };
    c_int::from(flag.load(std::sync::atomic::Ordering::SeqCst))
}

/// A task context; `interrupted`, when given, is what `is_interrupted` reads.
pub fn task(
    task_id: i64,
    partition_id: i32,
    interrupted: Option<&std::sync::atomic::AtomicBool>,
) -> SparkDsTaskContext {
    SparkDsTaskContext {
        size: std::mem::size_of::<SparkDsTaskContext>() as i64,
        task_id,
        is_interrupted: Some(if interrupted.is_some() {
            interrupted_when_flagged
        } else {
            never_interrupted
        }),
        host_data: interrupted.map_or(ptr::null_mut(), |f| f as *const _ as *mut c_void),
        stage_id: 1,
        partition_id,
        attempt_number: 0,
    }
}

/// A string without NUL bytes, which a C string cannot hold.
pub fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{fffd}")).expect("no NUL left")
}

impl Raw {
    /// Loads the library at `path` and reads its table.
    pub fn load(path: &Path) -> Raw {
        // SAFETY: loading a data source library runs its initializers, as Spark does.
        let library: &'static libloading::Library = Box::leak(Box::new(
            unsafe { libloading::Library::new(path) }
                .unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display())),
        ));
        // SAFETY: `spark_ds_init` has the type of the header.
        let init: SparkDsInitFunction =
            *unsafe { library.get::<SparkDsInitFunction>(b"spark_ds_init\0") }
                .expect("the library exports spark_ds_init");
        let host: &'static SparkDsHost = Box::leak(Box::new(SparkDsHost {
            size: std::mem::size_of::<SparkDsHost>() as i64,
            abi_version: SPARK_DS_ABI_VERSION,
            spark_version: c"4.4.0".as_ptr(),
            log: None,
            log_context: ptr::null_mut(),
        }));
        let mut table: *const SparkDsLibrary = ptr::null();
        // SAFETY: the host lives forever and `table` is writable.
        let rc = unsafe { init(host, &mut table) };
        assert!(rc == 0 && !table.is_null(), "spark_ds_init failed");
        let mut copy = SparkDsLibrary::empty();
        // SAFETY: the table is valid for its `size`, which the copy never exceeds.
        unsafe {
            let size = ((*table).size as usize).min(std::mem::size_of::<SparkDsLibrary>());
            ptr::copy_nonoverlapping(table as *const u8, &mut copy as *mut _ as *mut u8, size);
        }
        Raw {
            table: copy,
            _library: library,
        }
    }

    /// The message of the call that just failed with `rc`, on this thread; panics when there
    /// is none, or it is empty or not UTF-8 (rule 7).
    pub fn failure(&self, function: &str, rc: c_int) -> Failure {
        let last_error = self.table.last_error.expect("last_error is set");
        // SAFETY: `last_error` returns NULL or a string valid until the next call here.
        let message = unsafe { last_error() };
        assert!(
            !message.is_null(),
            "{function} returned {rc} but last_error is NULL"
        );
        let message = unsafe { CStr::from_ptr(message) }
            .to_str()
            .unwrap_or_else(|_| panic!("{function}: last_error is not UTF-8"))
            .to_string();
        assert!(
            !message.trim().is_empty(),
            "{function} returned {rc} with an empty message"
        );
        message
    }

    fn outcome(&self, function: &str, rc: c_int) -> Result<(), Failure> {
        if rc == 0 {
            Ok(())
        } else {
            Err(self.failure(function, rc))
        }
    }

    /// `create` with `name` and `options`, in order (keys may repeat).
    pub fn create(&self, name: &str, options: &[(String, String)]) -> Result<Handle, Failure> {
        let name = c_string(name);
        let keys: Vec<CString> = options.iter().map(|(k, _)| c_string(k)).collect();
        let values: Vec<CString> = options.iter().map(|(_, v)| c_string(v)).collect();
        let key_ptrs: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr()).collect();
        let value_ptrs: Vec<*const c_char> = values.iter().map(|v| v.as_ptr()).collect();
        let info = SparkDsCreateInfo {
            size: std::mem::size_of::<SparkDsCreateInfo>() as i64,
            name: name.as_ptr(),
            option_keys: key_ptrs.as_ptr(),
            option_values: value_ptrs.as_ptr(),
            num_options: options.len() as i64,
        };
        let (mut capabilities, mut source) = (0u64, ptr::null_mut());
        let create = self.table.create.expect("create");
        // SAFETY: every pointer is valid for the call.
        let rc = unsafe { create(&info, &mut capabilities, &mut source) };
        self.outcome("create", rc).map(|()| source)
    }

    pub fn close(&self, source: Handle) {
        // SAFETY: `source` came from `create` and is closed once.
        unsafe { self.table.close.expect("close")(source) }
    }

    /// `schema`, when the source has it.
    pub fn schema(&self, source: Handle) -> Result<Option<SchemaRef>, Failure> {
        let Some(schema_fn) = self.table.schema else {
            return Ok(None);
        };
        let mut out = FFI_ArrowSchema::empty();
        // SAFETY: `out` is a writable, released schema.
        let rc = unsafe { schema_fn(source, ffi_schema(&mut out)) };
        self.outcome("schema", rc)?;
        Schema::try_from(&out)
            .map(|s| Some(std::sync::Arc::new(s)))
            .map_err(|e| format!("schema: the library returned an invalid schema: {e}"))
    }

    pub fn create_reader(&self, source: Handle, schema: &Schema) -> Result<Handle, Failure> {
        let mut ffi = FFI_ArrowSchema::try_from(schema).expect("export the schema");
        let mut reader = ptr::null_mut();
        // SAFETY: the schema is borrowed for the call.
        let rc = unsafe {
            self.table.create_reader.expect("create_reader")(
                source,
                ffi_schema(&mut ffi),
                &mut reader,
            )
        };
        self.outcome("create_reader", rc).map(|()| reader)
    }

    pub fn create_stream_reader(&self, source: Handle, schema: &Schema) -> Result<Handle, Failure> {
        let mut ffi = FFI_ArrowSchema::try_from(schema).expect("export the schema");
        let mut reader = ptr::null_mut();
        // SAFETY: as create_reader.
        let rc = unsafe {
            self.table
                .create_stream_reader
                .expect("create_stream_reader")(
                source, ffi_schema(&mut ffi), &mut reader
            )
        };
        self.outcome("create_stream_reader", rc).map(|()| reader)
    }

    pub fn prune_columns(&self, reader: Handle, schema: &Schema) -> Result<(), Failure> {
        let Some(prune) = self.table.prune_columns else {
            return Ok(());
        };
        let mut ffi = FFI_ArrowSchema::try_from(schema).expect("export the schema");
        // SAFETY: borrowed for the call.
        let rc = unsafe { prune(reader, ffi_schema(&mut ffi)) };
        self.outcome("prune_columns", rc)
    }

    fn sink_call(
        &self,
        function: &str,
        call: impl FnOnce(unsafe extern "C" fn(*mut c_void, *const u8, i64), *mut c_void) -> c_int,
    ) -> Result<Vec<Vec<u8>>, Failure> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        let rc = call(collect, &mut out as *mut _ as *mut c_void);
        self.outcome(function, rc).map(|()| out)
    }

    pub fn partitions(&self, reader: Handle) -> Result<Vec<Vec<u8>>, Failure> {
        let f = self.table.partitions.expect("partitions");
        // SAFETY: the sink collects into a live Vec.
        self.sink_call("partitions", |add, sink| unsafe { f(reader, add, sink) })
    }

    /// `serialize_reader`'s state, or empty without the function.
    pub fn serialize_reader(&self, reader: Handle) -> Result<Vec<u8>, Failure> {
        let Some(f) = self.table.serialize_reader else {
            return Ok(Vec::new());
        };
        // SAFETY: as partitions.
        self.sink_call("serialize_reader", |add, sink| unsafe {
            f(reader, add, sink)
        })
        .map(|parts| parts.concat())
    }

    pub fn close_reader(&self, reader: Handle) {
        // SAFETY: `reader` came from create_reader and is closed once.
        unsafe { self.table.close_reader.expect("close_reader")(reader) }
    }

    pub fn close_stream_reader(&self, reader: Handle) {
        // SAFETY: as close_reader.
        unsafe { self.table.close_stream_reader.expect("close_stream_reader")(reader) }
    }

    /// `read` of one partition, the batches read to the end (at most `max_batches`), each
    /// imported with arrow's checks. A failing `get_next` must also say why.
    pub fn read(
        &self,
        task: &SparkDsTaskContext,
        state: &[u8],
        partition: &[u8],
        max_batches: usize,
    ) -> Result<Vec<RecordBatch>, Failure> {
        let mut stream = FFI_ArrowArrayStream::empty();
        // SAFETY: the bytes are borrowed for the call; `stream` is writable.
        let rc = unsafe {
            self.table.read.expect("read")(
                task,
                state.as_ptr(),
                state.len() as i64,
                partition.as_ptr(),
                partition.len() as i64,
                &mut stream,
            )
        };
        self.outcome("read", rc)?;
        let reader = RecordBatchStreamReader::try_new(stream)
            .map_err(|e| format!("read: get_schema failed: {e}"))?;
        let mut batches = Vec::new();
        for batch in reader.take(max_batches) {
            let batch = batch.map_err(|e| format!("read: get_next failed: {e}"))?;
            batches.push(batch);
        }
        Ok(batches)
    }

    pub fn initial_offset(&self, reader: Handle) -> Result<Vec<u8>, Failure> {
        let f = self.table.initial_offset.expect("initial_offset");
        // SAFETY: as partitions.
        self.sink_call("initial_offset", |add, sink| unsafe {
            f(reader, add, sink)
        })
        .map(|parts| parts.concat())
    }

    pub fn latest_offset(&self, reader: Handle, start: &[u8]) -> Result<Vec<u8>, Failure> {
        let f = self.table.latest_offset.expect("latest_offset");
        // SAFETY: `start` is borrowed for the call.
        self.sink_call("latest_offset", |add, sink| unsafe {
            f(reader, start.as_ptr(), start.len() as i64, add, sink)
        })
        .map(|parts| parts.concat())
    }

    pub fn stream_partitions(
        &self,
        reader: Handle,
        start: &[u8],
        end: &[u8],
    ) -> Result<Vec<Vec<u8>>, Failure> {
        let f = self.table.stream_partitions.expect("stream_partitions");
        // SAFETY: the offsets are borrowed for the call.
        self.sink_call("stream_partitions", |add, sink| unsafe {
            f(
                reader,
                start.as_ptr(),
                start.len() as i64,
                end.as_ptr(),
                end.len() as i64,
                add,
                sink,
            )
        })
    }

    pub fn serialize_stream_reader(&self, reader: Handle) -> Result<Vec<u8>, Failure> {
        let Some(f) = self.table.serialize_stream_reader else {
            return Ok(Vec::new());
        };
        // SAFETY: as partitions.
        self.sink_call("serialize_stream_reader", |add, sink| unsafe {
            f(reader, add, sink)
        })
        .map(|parts| parts.concat())
    }

    pub fn commit_offset(&self, reader: Handle, end: &[u8]) -> Result<(), Failure> {
        let Some(f) = self.table.commit_offset else {
            return Ok(());
        };
        // SAFETY: `end` is borrowed for the call.
        let rc = unsafe { f(reader, end.as_ptr(), end.len() as i64) };
        self.outcome("commit_offset", rc)
    }

    pub fn create_writer(
        &self,
        source: Handle,
        schema: &Schema,
        mode: i32,
        streaming: bool,
    ) -> Result<Handle, Failure> {
        self.create_writer_of_query(source, schema, mode, streaming, "hardening-query")
    }

    /// `create_writer` for the query `query_id` (Spark gives each write its own).
    pub fn create_writer_of_query(
        &self,
        source: Handle,
        schema: &Schema,
        mode: i32,
        streaming: bool,
        query_id: &str,
    ) -> Result<Handle, Failure> {
        let mut ffi = FFI_ArrowSchema::try_from(schema).expect("export the schema");
        let query = c_string(query_id);
        let info = SparkDsWriteInfo {
            size: std::mem::size_of::<SparkDsWriteInfo>() as i64,
            schema: ffi_schema(&mut ffi),
            query_id: query.as_ptr(),
            mode,
            streaming: c_int::from(streaming),
        };
        let mut writer = ptr::null_mut();
        // SAFETY: `info` and its schema are borrowed for the call.
        let rc =
            unsafe { self.table.create_writer.expect("create_writer")(source, &info, &mut writer) };
        self.outcome("create_writer", rc).map(|()| writer)
    }

    pub fn serialize_writer(&self, writer: Handle) -> Result<Vec<u8>, Failure> {
        let Some(f) = self.table.serialize_writer else {
            return Ok(Vec::new());
        };
        // SAFETY: as partitions.
        self.sink_call("serialize_writer", |add, sink| unsafe {
            f(writer, add, sink)
        })
        .map(|parts| parts.concat())
    }

    fn messages_call(
        &self,
        function: &str,
        f: unsafe extern "C" fn(Handle, i64, *const *const u8, *const i64, i64) -> c_int,
        writer: Handle,
        epoch: i64,
        messages: &[Vec<u8>],
    ) -> Result<(), Failure> {
        let pointers: Vec<*const u8> = messages.iter().map(|m| m.as_ptr()).collect();
        let lengths: Vec<i64> = messages.iter().map(|m| m.len() as i64).collect();
        // SAFETY: the messages are borrowed for the call.
        let rc = unsafe {
            f(
                writer,
                epoch,
                pointers.as_ptr(),
                lengths.as_ptr(),
                messages.len() as i64,
            )
        };
        self.outcome(function, rc)
    }

    pub fn commit(&self, writer: Handle, epoch: i64, messages: &[Vec<u8>]) -> Result<(), Failure> {
        let f = self.table.commit.expect("commit");
        self.messages_call("commit", f, writer, epoch, messages)
    }

    pub fn abort(&self, writer: Handle, epoch: i64, messages: &[Vec<u8>]) -> Result<(), Failure> {
        let f = self.table.abort.expect("abort");
        self.messages_call("abort", f, writer, epoch, messages)
    }

    pub fn close_writer(&self, writer: Handle) {
        // SAFETY: `writer` came from create_writer and is closed once.
        unsafe { self.table.close_writer.expect("close_writer")(writer) }
    }

    pub fn create_data_writer(
        &self,
        task: &SparkDsTaskContext,
        state: &[u8],
        epoch: i64,
    ) -> Result<Handle, Failure> {
        let mut writer = ptr::null_mut();
        // SAFETY: the state is borrowed for the call.
        let rc = unsafe {
            self.table.create_data_writer.expect("create_data_writer")(
                task,
                state.as_ptr(),
                state.len() as i64,
                epoch,
                &mut writer,
            )
        };
        self.outcome("create_data_writer", rc).map(|()| writer)
    }

    /// `write` of one batch, moved to the library whether it succeeds or fails: afterwards its
    /// release must be NULL (rule 11), else it was not moved.
    pub fn write(&self, writer: Handle, batch: &RecordBatch) -> Result<(), Failure> {
        let data = StructArray::from(batch.clone()).into_data();
        let (mut array, mut schema) = to_ffi(&data).expect("export the batch");
        self.write_ffi(writer, &mut schema, &mut array)
    }

    /// `write` of an exported array and its schema.
    pub fn write_ffi(
        &self,
        writer: Handle,
        schema: &mut FFI_ArrowSchema,
        array: &mut FFI_ArrowArray,
    ) -> Result<(), Failure> {
        // SAFETY: the schema is borrowed, the array moved; both are valid exports.
        let rc = unsafe { self.table.write.expect("write")(writer, ffi_schema(schema), array) };
        assert!(
            array.is_released(),
            "write returned {rc} without moving the batch (its release is not NULL): rule 11"
        );
        self.outcome("write", rc)
    }

    pub fn commit_data_writer(&self, writer: Handle) -> Result<Vec<u8>, Failure> {
        let f = self.table.commit_data_writer.expect("commit_data_writer");
        // SAFETY: as partitions.
        self.sink_call("commit_data_writer", |add, sink| unsafe {
            f(writer, add, sink)
        })
        .map(|parts| parts.concat())
    }

    pub fn abort_data_writer(&self, writer: Handle) -> Result<(), Failure> {
        // SAFETY: `writer` came from create_data_writer.
        let rc = unsafe { self.table.abort_data_writer.expect("abort_data_writer")(writer) };
        self.outcome("abort_data_writer", rc)
    }

    pub fn close_data_writer(&self, writer: Handle) {
        // SAFETY: closed once.
        unsafe { self.table.close_data_writer.expect("close_data_writer")(writer) }
    }

    /// A batch read of data source `name` planned with its own schema, as a driver plans it:
    /// the reader's state and the partitions; the handles are closed. Panics on a failure.
    pub fn plan_batch_read(
        &self,
        name: &str,
        options: &[(String, String)],
    ) -> (Vec<u8>, Vec<Vec<u8>>) {
        let source = self.create(name, options).expect("create");
        let schema = self.schema(source).expect("schema").expect("a schema");
        let reader = self.create_reader(source, &schema).expect("create_reader");
        let state = self.serialize_reader(reader).expect("serialize_reader");
        let partitions = self.partitions(reader).expect("partitions");
        self.close_reader(reader);
        self.close(source);
        (state, partitions)
    }

    /// A stream of data source `name` opened with its own schema: the source, the stream
    /// reader and its state. The caller closes both handles. Panics on a failure.
    pub fn open_stream(
        &self,
        name: &str,
        options: &[(String, String)],
    ) -> (Handle, Handle, Vec<u8>) {
        let source = self.create(name, options).expect("create");
        let schema = self.schema(source).expect("schema").expect("a schema");
        let reader = self
            .create_stream_reader(source, &schema)
            .expect("create_stream_reader");
        let state = self
            .serialize_stream_reader(reader)
            .expect("serialize_stream_reader");
        (source, reader, state)
    }
}

fn ffi_schema(schema: &mut FFI_ArrowSchema) -> *mut FFI_ArrowSchema {
    schema
}

/// The rows of `batches`.
pub fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}
