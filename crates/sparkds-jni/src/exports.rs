//! The native methods of `dev.sparkds.spark.jni.Native`, one shim each: convert the arguments,
//! call `ops`, convert the result, all inside [`guard`], which turns errors and panics into
//! Java exceptions. The logic lives in `ops`, `discovery` and `loaded`.
#![allow(non_snake_case)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use jni::objects::{JByteArray, JClass, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jbyteArray, jint, jlong, jlongArray, jobjectArray};
use jni::JNIEnv;
use sparkds::steps::TaskIds;

use crate::discovery::{self, DriverBuild, Search};
use crate::error::{Error, Result};
use crate::jvm::handles::{self, Kind};
use crate::jvm::{self, guard};
use crate::loaded::{self, Loaded};
use crate::ops::{
    self, DataWriterHandle, ReaderHandle, SourceHandle, StreamHandle, StreamReaderHandle,
    WriterHandle,
};

impl Kind for &'static Loaded {
    const TAG: u64 = 0x5350_4b44_4c49_4231;
    const NOUN: &'static str = "library";
}
impl Kind for SourceHandle {
    const TAG: u64 = 0x5350_4b44_5352_4331;
    const NOUN: &'static str = "source";
}
impl Kind for ReaderHandle {
    const TAG: u64 = 0x5350_4b44_5244_5231;
    const NOUN: &'static str = "reader";
}
impl Kind for StreamReaderHandle {
    const TAG: u64 = 0x5350_4b44_5352_4431;
    const NOUN: &'static str = "stream reader";
}
impl Kind for StreamHandle {
    const TAG: u64 = 0x5350_4b44_5354_5231;
    const NOUN: &'static str = "stream";
}
impl Kind for WriterHandle {
    const TAG: u64 = 0x5350_4b44_5752_5431;
    const NOUN: &'static str = "writer";
}
impl Kind for DataWriterHandle {
    const TAG: u64 = 0x5350_4b44_4457_5231;
    const NOUN: &'static str = "data writer";
}

/// One handle per loaded library, so that `load` of a path returns the same `long` each time.
static LIBRARY_HANDLES: Mutex<Option<HashMap<usize, jlong>>> = Mutex::new(None);

fn library_handle(loaded: &'static Loaded) -> jlong {
    let mut map = LIBRARY_HANDLES
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    *map.get_or_insert_with(HashMap::new)
        .entry(loaded as *const Loaded as usize)
        // Never closed: libraries are never unloaded.
        .or_insert_with(|| handles::new(loaded))
}

/// # Safety
///
/// As [`handles::get`].
unsafe fn library(handle: jlong) -> Result<&'static Loaded> {
    // SAFETY: the caller's contract.
    unsafe { handles::get::<&'static Loaded>(handle) }.map(|l| *l)
}

/// # Safety
///
/// As [`handles::get`].
unsafe fn get<'a, T: Kind>(handle: jlong) -> Result<&'a mut T> {
    // SAFETY: the caller's contract.
    unsafe { handles::get::<T>(handle) }
}

fn paths(items: Vec<String>) -> Vec<PathBuf> {
    items.into_iter().map(PathBuf::from).collect()
}

fn options(keys: Vec<String>, values: Vec<String>) -> Result<Vec<(String, String)>> {
    if keys.len() != values.len() {
        return Err(Error::argument(format!(
            "{} option keys but {} values; pass one value per key",
            keys.len(),
            values.len()
        )));
    }
    Ok(keys.into_iter().zip(values).collect())
}

fn ids(task_id: jlong, stage_id: jint, partition_id: jint, attempt_number: jint) -> TaskIds {
    TaskIds {
        task_id,
        stage_id,
        partition_id,
        attempt_number,
    }
}

/// Every native method is the same JNI export, so it is written once, here:
/// `native! { method(params) -> T = default, |env| body }` exports
/// `Java_dev_sparkds_spark_jni_Native_<method>(env, class, params) -> T`, which returns
/// `guard(&mut env, "<method>", default, |env| body)`. Without `-> T = default`, the method
/// returns nothing.
macro_rules! native {
    (@default) => { () };
    (@default $default:expr) => { $default };
    (
        $(#[$attr:meta])*
        $method:ident($($param:ident: $ty:ty),* $(,)?) $(-> $ret:ty = $default:expr)?,
        $body:expr
    ) => {
        $(#[$attr])*
        #[export_name = concat!("Java_dev_sparkds_spark_jni_Native_", stringify!($method))]
        pub extern "system" fn $method<'l>(
            mut env: JNIEnv<'l>,
            _class: JClass<'l>,
            $($param: $ty),*
        ) $(-> $ret)? {
            guard(&mut env, stringify!($method), native!(@default $($default)?), $body)
        }
    };
}

// ---- Finding and loading libraries --------------------------------------------------------

native! {
    resolve(
        name: JString<'l>,
        session_packages: JObjectArray<'l>,
        configured_packages: JObjectArray<'l>,
        library_dirs: JObjectArray<'l>,
        private_dir: JString<'l>,
        spark_version: JString<'l>,
    ) -> jobjectArray = std::ptr::null_mut(),
    |env| {
        let name = jvm::string(env, &name, "name")?;
        let search = Search {
            session_packages: paths(jvm::strings(env, &session_packages, "sessionPackages")?),
            configured_packages: paths(jvm::strings(
                env,
                &configured_packages,
                "configuredPackages",
            )?),
            library_dirs: paths(jvm::strings(env, &library_dirs, "libraryDirs")?),
        };
        let private_dir = PathBuf::from(jvm::string(env, &private_dir, "privateDir")?);
        let version = jvm::string(env, &spark_version, "sparkVersion")?;
        let log_name = name.to_lowercase();
        let found = discovery::resolve(&name, &search, &|level, message| {
            jvm::log(&log_name, level, message);
        })?;
        let origin = found.build.origin().clone();
        // Loaded now, from the bytes that were hashed (or before, from the same unchanged
        // file): the checksum returned is what runs.
        let loaded = found
            .build
            .load(None, &private_dir, &version, crate::library_log)?;
        let path = origin.path().display().to_string();
        let entry = origin.entry().unwrap_or_default();
        jvm::new_strings(env, &[&path, &loaded.sha256, &found.place, entry])
    }
}

native! {
    loadBuild(
        name: JString<'l>,
        sha256: JString<'l>,
        driver_path: JString<'l>,
        entry: JString<'l>,
        package_files: JObjectArray<'l>,
        library_dirs: JObjectArray<'l>,
        private_dir: JString<'l>,
        spark_version: JString<'l>,
    ) -> jlong = 0,
    |env| {
        let sha256 = jvm::string(env, &sha256, "sha256")?;
        // Once this JVM loaded the build, no file is read again: the cache is keyed by content.
        if let Some(loaded) = loaded::by_checksum(&sha256) {
            return Ok(library_handle(loaded));
        }
        let entry = jvm::optional_string(env, &entry)?.filter(|e| !e.is_empty());
        let wanted = DriverBuild {
            name: jvm::string(env, &name, "name")?,
            sha256,
            driver_path: PathBuf::from(jvm::string(env, &driver_path, "driverPath")?),
            entry,
            package_files: paths(jvm::strings(env, &package_files, "packageFiles")?),
        };
        let dirs = paths(jvm::strings(env, &library_dirs, "libraryDirs")?);
        let private_dir = PathBuf::from(jvm::string(env, &private_dir, "privateDir")?);
        let version = jvm::string(env, &spark_version, "sparkVersion")?;
        let build = discovery::locate_build(&wanted, &dirs)?;
        let loaded = build.load(
            Some(&wanted.sha256),
            &private_dir,
            &version,
            crate::library_log,
        )?;
        Ok(library_handle(loaded))
    }
}

native! {
    capabilities(source: jlong) -> jlong = 0,
    |_| {
        // SAFETY: a handle of `create`, used by one thread at a time (Native's conventions).
        Ok(unsafe { get::<SourceHandle>(source) }?.capabilities() as jlong)
    }
}

// ---- Sources ------------------------------------------------------------------------------

native! {
    create(
        library_handle: jlong,
        name: JString<'l>,
        keys: JObjectArray<'l>,
        values: JObjectArray<'l>,
    ) -> jlong = 0,
    |env| {
        // SAFETY: a handle of `load`.
        let library = unsafe { library(library_handle) }?;
        let name = jvm::string(env, &name, "name")?;
        let options = options(
            jvm::strings(env, &keys, "keys")?,
            jvm::strings(env, &values, "values")?,
        )?;
        ops::create(library, &name, &options).map(handles::new)
    }
}

native! {
    schema(source: jlong) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `create`.
        let schema = unsafe { get::<SourceHandle>(source) }?.schema()?;
        jvm::new_bytes(env, schema.as_deref())
    }
}

native! {
    close(source: jlong),
    // SAFETY: a handle of `create`, closed once.
    |_| unsafe { handles::close::<SourceHandle>(source) }
}

native! {
    treatAsSecret(values: JObjectArray<'l>),
    |env| {
        let values = jvm::strings(env, &values, "values")?;
        sparkds::redact::treat_as_secret(values.iter().map(String::as_str));
        Ok(())
    }
}

// ---- Batch read (driver) ------------------------------------------------------------------

native! {
    createReader(source: jlong, schema: JByteArray<'l>) -> jlong = 0,
    |env| {
        let schema = jvm::bytes(env, &schema, "schema")?;
        // SAFETY: a handle of `create`.
        let source = unsafe { get::<SourceHandle>(source) }?;
        source.create_reader(&schema).map(handles::new)
    }
}

native! {
    pushLimit(reader: jlong, limit: jlong) -> jboolean = 0,
    |_| {
        // SAFETY: a handle of `createReader`.
        let reader = unsafe { get::<ReaderHandle>(reader) }?;
        reader.push_limit(limit).map(jboolean::from)
    }
}

native! {
    pushFilters(reader: jlong, filters: JByteArray<'l>) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        let filters = jvm::bytes(env, &filters, "encodedFilters")?;
        // SAFETY: a handle of `createReader`.
        let reader = unsafe { get::<ReaderHandle>(reader) }?;
        let answers = reader.push_filters(&filters)?;
        let bytes = answers.map(|a| a.into_iter().map(u8::from).collect::<Vec<u8>>());
        jvm::new_bytes(env, bytes.as_deref())
    }
}

native! {
    replay(
        reader: jlong,
        filters: JByteArray<'l>,
        answers: JByteArray<'l>,
        limit: jlong,
        limit_accepted: jboolean,
        pruned: JByteArray<'l>
    ) -> jboolean = 0,
    |env| {
        let filters = jvm::optional_bytes(env, &filters)?;
        let answers = jvm::optional_bytes(env, &answers)?;
        let filters = filters
            .zip(answers)
            .map(|(message, answers)| (message, answers.into_iter().map(|a| a == 1).collect()));
        let limit = (limit >= 0).then_some((limit, limit_accepted != 0));
        let pruned = jvm::optional_bytes(env, &pruned)?;
        // SAFETY: a handle of `createReader`.
        let reader = unsafe { get::<ReaderHandle>(reader) }?;
        reader.replay(filters, limit, pruned.as_deref()).map(|()| 1)
    }
}

native! {
    pruneColumns(reader: jlong, required: JByteArray<'l>) -> jboolean = 0,
    |env| {
        let required = jvm::bytes(env, &required, "requiredSchema")?;
        // SAFETY: a handle of `createReader`.
        let reader = unsafe { get::<ReaderHandle>(reader) }?;
        reader.prune_columns(&required).map(jboolean::from)
    }
}

native! {
    partitions(reader: jlong) -> jobjectArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `createReader`.
        let partitions = unsafe { get::<ReaderHandle>(reader) }?.partitions()?;
        jvm::new_byte_arrays(env, &partitions)
    }
}

native! {
    serializeReader(reader: jlong) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `createReader`.
        let state = unsafe { get::<ReaderHandle>(reader) }?.serialize()?;
        jvm::new_bytes(env, state.as_deref())
    }
}

native! {
    closeReader(reader: jlong),
    // SAFETY: a handle of `createReader`, closed once.
    |_| unsafe { handles::close::<ReaderHandle>(reader) }
}

// ---- Micro-batch read (driver) ------------------------------------------------------------

native! {
    createStreamReader(source: jlong, schema: JByteArray<'l>) -> jlong = 0,
    |env| {
        let schema = jvm::bytes(env, &schema, "schema")?;
        // SAFETY: a handle of `create`.
        let source = unsafe { get::<SourceHandle>(source) }?;
        source.create_stream_reader(&schema).map(handles::new)
    }
}

native! {
    initialOffset(reader: jlong) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `createStreamReader`.
        let offset = unsafe { get::<StreamReaderHandle>(reader) }?.initial_offset()?;
        jvm::new_bytes(env, Some(&offset))
    }
}

native! {
    latestOffset(reader: jlong, start: JByteArray<'l>) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        let start = jvm::bytes(env, &start, "start")?;
        // SAFETY: a handle of `createStreamReader`.
        let offset = unsafe { get::<StreamReaderHandle>(reader) }?.latest_offset(&start)?;
        jvm::new_bytes(env, Some(&offset))
    }
}

native! {
    streamPartitions(
        reader: jlong,
        start: JByteArray<'l>,
        end: JByteArray<'l>,
    ) -> jobjectArray = std::ptr::null_mut(),
    |env| {
        let start = jvm::bytes(env, &start, "start")?;
        let end = jvm::bytes(env, &end, "end")?;
        // SAFETY: a handle of `createStreamReader`.
        let partitions = unsafe { get::<StreamReaderHandle>(reader) }?.partitions(&start, &end)?;
        jvm::new_byte_arrays(env, &partitions)
    }
}

native! {
    serializeStreamReader(reader: jlong) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `createStreamReader`.
        let state = unsafe { get::<StreamReaderHandle>(reader) }?.serialize()?;
        jvm::new_bytes(env, state.as_deref())
    }
}

native! {
    commitOffset(reader: jlong, end: JByteArray<'l>),
    |env| {
        let end = jvm::bytes(env, &end, "end")?;
        // SAFETY: a handle of `createStreamReader`.
        unsafe { get::<StreamReaderHandle>(reader) }?.commit_offset(&end)
    }
}

native! {
    closeStreamReader(reader: jlong),
    // SAFETY: a handle of `createStreamReader`, closed once.
    |_| unsafe { handles::close::<StreamReaderHandle>(reader) }
}

// ---- Reading a partition (executor) -------------------------------------------------------

native! {
    #[allow(clippy::too_many_arguments)]
    read(
        library_handle: jlong,
        schema: JByteArray<'l>,
        reader_state: JByteArray<'l>,
        partition: JByteArray<'l>,
        accepted_filters: JByteArray<'l>,
        task_id: jlong,
        stage_id: jint,
        partition_id: jint,
        attempt_number: jint,
        task_context: JObject<'l>,
    ) -> jlong = 0,
    |env| {
        // SAFETY: a handle of `load`.
        let library = unsafe { library(library_handle) }?;
        let schema = jvm::bytes(env, &schema, "schema")?;
        let state = jvm::optional_bytes(env, &reader_state)?;
        let partition = jvm::bytes(env, &partition, "partition")?;
        let accepted_filters = jvm::optional_bytes(env, &accepted_filters)?;
        let interrupted = jvm::interrupt_check(env, &task_context)?;
        let inputs = ops::ReadInputs {
            state: state.as_deref(),
            partition: &partition,
            accepted_filters: accepted_filters.as_deref(),
        };
        ops::read(
            library,
            &schema,
            inputs,
            ids(task_id, stage_id, partition_id, attempt_number),
            interrupted,
            ops::checks_from_env(),
        )
        .map(handles::new)
    }
}

native! {
    next(stream: jlong) -> jlongArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `read`.
        let stream = unsafe { get::<StreamHandle>(stream) }?;
        match stream.next_batch()? {
            Some(descriptor) => jvm::new_longs(env, descriptor),
            None => Ok(std::ptr::null_mut()),
        }
    }
}

native! {
    closeStream(stream: jlong),
    // SAFETY: a handle of `read`, closed once.
    |_| unsafe { handles::close::<StreamHandle>(stream) }
}

// ---- Writes (driver) ----------------------------------------------------------------------

native! {
    createWriter(
        source: jlong,
        schema: JByteArray<'l>,
        query_id: JString<'l>,
        mode: jint,
        streaming: jboolean,
    ) -> jlong = 0,
    |env| {
        let schema = jvm::bytes(env, &schema, "schema")?;
        let query_id = jvm::string(env, &query_id, "queryId")?;
        // SAFETY: a handle of `create`.
        let source = unsafe { get::<SourceHandle>(source) }?;
        source
            .create_writer(&schema, &query_id, mode, streaming != 0)
            .map(handles::new)
    }
}

native! {
    serializeWriter(writer: jlong) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `createWriter`.
        let state = unsafe { get::<WriterHandle>(writer) }?.serialize()?;
        jvm::new_bytes(env, state.as_deref())
    }
}

native! {
    commit(writer: jlong, epoch_id: jlong, messages: JObjectArray<'l>),
    |env| {
        let messages = jvm::byte_arrays(env, &messages)?;
        // SAFETY: a handle of `createWriter`.
        unsafe { get::<WriterHandle>(writer) }?.commit(epoch_id, &messages)
    }
}

native! {
    abort(writer: jlong, epoch_id: jlong, messages: JObjectArray<'l>),
    |env| {
        let messages = jvm::byte_arrays(env, &messages)?;
        // SAFETY: a handle of `createWriter`.
        unsafe { get::<WriterHandle>(writer) }?.abort(epoch_id, &messages)
    }
}

native! {
    closeWriter(writer: jlong),
    // SAFETY: a handle of `createWriter`, closed once.
    |_| unsafe { handles::close::<WriterHandle>(writer) }
}

// ---- Writing a task (executor) ------------------------------------------------------------

native! {
    #[allow(clippy::too_many_arguments)]
    createDataWriter(
        library_handle: jlong,
        schema: JByteArray<'l>,
        writer_state: JByteArray<'l>,
        epoch_id: jlong,
        task_id: jlong,
        stage_id: jint,
        partition_id: jint,
        attempt_number: jint,
        task_context: JObject<'l>,
    ) -> jlong = 0,
    |env| {
        // SAFETY: a handle of `load`.
        let library = unsafe { library(library_handle) }?;
        let schema = jvm::bytes(env, &schema, "schema")?;
        let state = jvm::optional_bytes(env, &writer_state)?;
        let interrupted = jvm::interrupt_check(env, &task_context)?;
        ops::create_data_writer(
            library,
            &schema,
            state.as_deref(),
            epoch_id,
            ids(task_id, stage_id, partition_id, attempt_number),
            interrupted,
            ops::checks_from_env(),
        )
        .map(handles::new)
    }
}

native! {
    write(data_writer: jlong, batch: JLongArray<'l>),
    |env| {
        let batch = jvm::longs(env, &batch, "batch")?;
        // SAFETY: a handle of `createDataWriter`.
        let writer = unsafe { get::<DataWriterHandle>(data_writer) }?;
        // SAFETY: Native.write's contract: the caller's buffers are readable during the call.
        unsafe { writer.write(&batch) }
    }
}

native! {
    commitDataWriter(data_writer: jlong) -> jbyteArray = std::ptr::null_mut(),
    |env| {
        // SAFETY: a handle of `createDataWriter`.
        let message = unsafe { get::<DataWriterHandle>(data_writer) }?.commit()?;
        jvm::new_bytes(env, Some(&message))
    }
}

native! {
    abortDataWriter(data_writer: jlong),
    |_| {
        // SAFETY: a handle of `createDataWriter`.
        unsafe { get::<DataWriterHandle>(data_writer) }?.abort()
    }
}

native! {
    closeDataWriter(data_writer: jlong),
    // SAFETY: a handle of `createDataWriter`, closed once.
    |_| unsafe { handles::close::<DataWriterHandle>(data_writer) }
}
