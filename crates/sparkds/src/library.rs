//! Loading a library: `spark_ds_init`, the `SparkDsHost` it receives, the table it returns (read
//! only up to its `size`), the calls into it and the handles it returns.
//!
//! Mirrors `spark_ds_init`, `SparkDsHost` and `SparkDsLibrary` of `spark_datasource.h`.

use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use spark_datasource_core::file::open_regular;
use spark_datasource_core::{capabilities, library_file};

use crate::error::{Error, Result, Violation};
use crate::filters::FilterTable;
use crate::isolate;
use spark_datasource_abi::bench::{SparkDsBenchFunction, SPARK_DS_BENCH_SYMBOL};
use spark_datasource_abi::filters::{PushFilters, SparkDsFiltersInitFunction};
use spark_datasource_abi::v1::{self, SparkDsCreateInfo, SparkDsHost, SparkDsLibrary};

/// The Spark version that the host announces in `SparkDsHost`.
pub const SPARK_VERSION: &str = "4.4.0";

/// A native data source library, loaded with the platform's dynamic loader.
///
/// The library is never unloaded: batches and other exports may still point into its code, and
/// the library may keep the `SparkDsHost` pointer until it is unloaded (conformance rule 21).
pub struct Library {
    id: usize,
    path: PathBuf,
    name: String,
    table: SparkDsLibrary,
    /// The table of the filter pushdown extension, when the library exports
    /// `spark_ds_filters_init`.
    filters: Option<FilterTable>,
    /// The names of the `export!` line, when the library was made with it.
    exported: Option<Vec<String>>,
    log: &'static LogCollector,
    handles: Mutex<HashSet<(HandleKind, usize)>>,
    /// Options given to every `create`, before those of each call.
    options: Vec<(String, String)>,
    /// The SDK's in-process entry, `spark_ds_bench_v1`, when the library exports it.
    bench: Option<SparkDsBenchFunction>,
    observer: Option<Arc<dyn CallObserver>>,
}

static NEXT_LIBRARY_ID: AtomicUsize = AtomicUsize::new(1);

/// The level of a message that the library logged through `SparkDsHost.log`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
    /// A level that `SPARK_DS_LOG_*` does not define.
    Other(i32),
}

/// A message that the library logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogMessage {
    pub level: LogLevel,
    pub message: String,
}

impl fmt::Display for LogMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.level, self.message)
    }
}

#[derive(Default)]
struct LogCollector {
    messages: Mutex<Vec<LogMessage>>,
    /// Where the messages go instead, when the host gave a log function: they are then not
    /// kept, since a long-lived host would grow without bound.
    forward: Option<LogFunction>,
}

/// A function that receives the messages a library logs: the level (`SPARK_DS_LOG_*`, as the
/// library passed it) and the message. Called on the library's thread, from any thread.
pub type LogFunction = Box<dyn Fn(i32, &str) + Send + Sync>;

/// What the host gives a library in `SparkDsHost`, for [`Library::load_with`].
#[derive(Default)]
pub struct HostOptions {
    /// `SparkDsHost.spark_version`; [`SPARK_VERSION`] when `None`.
    pub spark_version: Option<String>,
    /// Receives `SparkDsHost.log`; when `None` the messages are kept for [`Library::log`].
    pub log: Option<LogFunction>,
    /// Sees the time of every call into the library, for a host that measures it (`cargo
    /// sparkds bench`).
    pub observer: Option<Arc<dyn CallObserver>>,
}

/// Sees every call into a library and the time it took: the functions of the table (through
/// the steps or the whole-protocol runs), `last_error`, the close functions, the callbacks of
/// the streams (`get_schema`, `get_next`), the releases of streams and of the batches a
/// [`PartitionStream`](crate::steps::PartitionStream) held, and the functions outside the table
/// called with [`Library::call_extension`]. Called on the thread of the call, after it returns.
pub trait CallObserver: Send + Sync {
    /// `function` returned after `elapsed`.
    fn called(&self, function: &'static str, elapsed: Duration);
}

/// The capabilities that `create` declared, `SPARK_DS_*` bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities(pub u64);

impl Capabilities {
    /// Whether the source declares `SPARK_DS_BATCH_READ`.
    pub fn batch_read(self) -> bool {
        self.0 & v1::SPARK_DS_BATCH_READ != 0
    }
    /// Whether the source declares `SPARK_DS_MICRO_BATCH_READ`.
    pub fn micro_batch_read(self) -> bool {
        self.0 & v1::SPARK_DS_MICRO_BATCH_READ != 0
    }
    /// Whether the source declares `SPARK_DS_BATCH_WRITE`.
    pub fn batch_write(self) -> bool {
        self.0 & v1::SPARK_DS_BATCH_WRITE != 0
    }
    /// Whether the source declares `SPARK_DS_STREAMING_WRITE`.
    pub fn streaming_write(self) -> bool {
        self.0 & v1::SPARK_DS_STREAMING_WRITE != 0
    }
    /// Whether the source declares `SPARK_DS_TRUNCATE`.
    pub fn truncate(self) -> bool {
        self.0 & v1::SPARK_DS_TRUNCATE != 0
    }
    /// The names of the declared bits, in the header's order.
    pub fn names(self) -> Vec<&'static str> {
        capabilities::names(self.0)
    }
}

impl fmt::Display for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&names.join(" | "))
        }
    }
}

/// The kinds of handles, each with its own close function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum HandleKind {
    Source,
    Reader,
    StreamReader,
    Writer,
    DataWriter,
}

impl HandleKind {
    fn noun(self) -> &'static str {
        match self {
            HandleKind::Source => "source",
            HandleKind::Reader => "reader",
            HandleKind::StreamReader => "stream reader",
            HandleKind::Writer => "writer",
            HandleKind::DataWriter => "data writer",
        }
    }
    fn close_name(self) -> &'static str {
        match self {
            HandleKind::Source => "close",
            HandleKind::Reader => "close_reader",
            HandleKind::StreamReader => "close_stream_reader",
            HandleKind::Writer => "close_writer",
            HandleKind::DataWriter => "close_data_writer",
        }
    }
    fn close_fn(self, table: &SparkDsLibrary) -> Option<unsafe extern "C" fn(*mut c_void)> {
        match self {
            HandleKind::Source => table.close,
            HandleKind::Reader => table.close_reader,
            HandleKind::StreamReader => table.close_stream_reader,
            HandleKind::Writer => table.close_writer,
            HandleKind::DataWriter => table.close_data_writer,
        }
    }
}

/// A handle that a create function returned; dropping it calls the close function of its kind,
/// exactly once (rule 21: the host's own side of it).
pub(crate) struct Handle<'l> {
    library: &'l Library,
    kind: HandleKind,
    ptr: *mut c_void,
}

impl Handle<'_> {
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        self.library.close(self.kind, self.ptr);
    }
}

/// A source that `create` returned, with its capabilities.
pub(crate) struct Source<'l> {
    pub(crate) handle: Handle<'l>,
    pub(crate) capabilities: Capabilities,
}

impl Library {
    /// Loads the library at `path`, calls `spark_ds_init` with a `SparkDsHost` of version 1, and
    /// reads the table it returns, up to its `size`. When the library exports
    /// `spark_ds_filters_init` (filter pushdown, `spark_datasource_filters.h`), calls it once
    /// with the same host and reads its table too.
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when the file cannot be loaded; [`Error::Violation`] when the library
    /// breaks rules 1 to 4 (no `spark_ds_init`, a failing init, a table too small, another ABI
    /// version, no `create` or `close`) or rule 29 (a failing `spark_ds_filters_init`, a NULL
    /// filter table, or one of another size or version than the header's).
    pub fn load(path: impl AsRef<Path>) -> Result<Library> {
        Library::load_with(path, HostOptions::default())
    }

    /// Loads the library at `path` as [`Library::load`] does, with the Spark version and the
    /// log function of `options` in its `SparkDsHost`.
    ///
    /// # Errors
    ///
    /// As [`Library::load`]; a `spark_version` with a NUL byte is a usage error.
    pub fn load_with(path: impl AsRef<Path>, options: HostOptions) -> Result<Library> {
        let path = path.as_ref().to_path_buf();
        let spark_version = match options.spark_version {
            None => None,
            Some(v) => Some(CString::new(v).map_err(|_| {
                Error::usage("the Spark version contains a NUL byte; pass a version such as 4.4.0")
            })?),
        };
        let opened = open_library(&path)?;
        let (init, filters_init, exported) = (opened.init, opened.filters_init, opened.exported);
        let log: &'static LogCollector = Box::leak(Box::new(LogCollector {
            messages: Mutex::default(),
            forward: options.log,
        }));
        let host = new_host(log, spark_version);
        let first = call_init(init, host)?;
        let second = call_init(init, host)?;
        if first != second {
            return Err(Violation::new(
                "spark_ds_init",
                1,
                "returned a different table on a second call; return the same table every time",
            )
            .into());
        }
        // SAFETY: `first` is non-NULL and points to a table that stays valid while the library
        // is loaded (spark_ds_init's contract); `read_table` reads only what its `size` covers.
        let table = unsafe { read_table(first) }?;
        // After spark_ds_init, with the same host, once (spark_datasource_filters.h).
        let filters = match filters_init {
            // SAFETY: the library's own `spark_ds_filters_init`; `host` lives forever.
            Some(init) => Some(unsafe { crate::filters::init(init, host) }?),
            None => None,
        };
        let name = data_source_name(&path);
        Ok(Library {
            id: NEXT_LIBRARY_ID.fetch_add(1, Ordering::Relaxed),
            path,
            name,
            table,
            filters,
            exported,
            log,
            handles: Mutex::new(HashSet::new()),
            options: Vec::new(),
            bench: opened.bench,
            observer: options.observer,
        })
    }

    /// The path the library was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The data source name passed to `create`: the file name without `lib`,
    /// `spark_datasource_` and the extension, as Spark derives it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the data source name passed to `create`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The options given to every `create` ([`Library::with_options`]).
    pub fn create_options(&self) -> &[(String, String)] {
        &self.options
    }

    /// Gives `options` to every `create` of this library, before the options of each read,
    /// write or check (which win when they set the same key): the options that a source
    /// requires, so that each test need not repeat them.
    pub fn with_options<K, V>(mut self, options: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.options = options
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// The messages that the library logged through `SparkDsHost.log` so far, in order.
    pub fn log(&self) -> Vec<LogMessage> {
        self.log
            .messages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The names of the library's `spark_datasource::export!` line, in their order: its
    /// capabilities and pushdowns (`batch_read`, `push_limit`, ...). `None` for a library made
    /// otherwise (in C, or by hand), which states them only through `create` and its table.
    pub fn exported(&self) -> Option<&[String]> {
        self.exported.as_deref()
    }

    /// The names of the functions of the table that are not NULL, in the header's order.
    pub fn functions(&self) -> Vec<&'static str> {
        function_presence(&self.table)
            .into_iter()
            .filter(|(_, present)| *present)
            .map(|(name, _)| name)
            .collect()
    }

    /// Creates a source with `options`, reads the capabilities it declares, and closes it.
    ///
    /// # Errors
    ///
    /// When `create` fails, or the capabilities break rule 4.
    pub fn capabilities<K, V>(
        &self,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Capabilities>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let options: Vec<(String, String)> = options
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        Ok(self.create(&options)?.capabilities)
    }

    pub(crate) fn id(&self) -> usize {
        self.id
    }

    pub(crate) fn table(&self) -> &SparkDsLibrary {
        &self.table
    }

    /// Whether the library exports the filter pushdown extension (`spark_ds_filters_init`) with
    /// a `push_filters`: readers are then offered the filters of a read.
    pub fn pushes_filters(&self) -> bool {
        self.push_filters().is_some()
    }

    pub(crate) fn push_filters(&self) -> Option<PushFilters> {
        self.filters.and_then(|t| t.push_filters)
    }

    /// Calls `create` and checks the declared capabilities (rule 4).
    pub(crate) fn create(&self, options: &[(String, String)]) -> Result<Source<'_>> {
        self.create_named(&self.name, options)
    }

    /// Calls `create` with the data source name `name` (a library may implement several).
    pub(crate) fn create_named(
        &self,
        name: &str,
        options: &[(String, String)],
    ) -> Result<Source<'_>> {
        let options: Vec<(String, String)> = self.options.iter().chain(options).cloned().collect();
        crate::redact::remember_options(&options);
        let create = self.table.create.ok_or_else(|| {
            Violation::new("create", 4, "is NULL; every library implements `create`")
        })?;
        let c = |s: &str, what: &str| {
            CString::new(s).map_err(|_| {
                Error::usage(format!(
                    "{what} `{}` contains a NUL byte; remove it",
                    s.replace('\0', "\\0")
                ))
            })
        };
        let name = c(name, "the data source name")?;
        let keys = options
            .iter()
            .map(|(k, _)| c(k, "the option key"))
            .collect::<Result<Vec<_>>>()?;
        let values = options
            .iter()
            .map(|(k, v)| {
                CString::new(v.as_str()).map_err(|_| {
                    Error::usage(format!(
                        "the value of option `{k}` `{}` contains a NUL byte; remove it",
                        crate::redact::shown(k, &v.replace('\0', "\\0"))
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let key_ptrs: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr()).collect();
        let value_ptrs: Vec<*const c_char> = values.iter().map(|v| v.as_ptr()).collect();
        let info = SparkDsCreateInfo {
            size: std::mem::size_of::<SparkDsCreateInfo>() as i64,
            name: name.as_ptr(),
            option_keys: key_ptrs.as_ptr(),
            option_values: value_ptrs.as_ptr(),
            num_options: options.len() as i64,
        };
        let mut capabilities = 0u64;
        let handle = self.open("create", None, HandleKind::Source, |source| {
            // SAFETY: `info` and every string it points to live until the call returns; the
            // out-parameters are valid for writes.
            unsafe { create(&info, &mut capabilities, source) }
        })?;
        let capabilities = Capabilities(capabilities);
        check_capabilities(&self.table, capabilities)?;
        Ok(Source {
            handle,
            capabilities,
        })
    }

    /// Runs `f`, a call into the library, and tells the observer how long it took.
    pub(crate) fn observed<T>(&self, function: &'static str, f: impl FnOnce() -> T) -> T {
        let Some(observer) = &self.observer else {
            return f();
        };
        let start = Instant::now();
        let result = f();
        observer.called(function, start.elapsed());
        result
    }

    /// The SDK's `spark_ds_bench_v1` (`spark_datasource_abi::bench`), when the library exports
    /// it: the task side of a read or a write run in process through the connector's traits,
    /// outside the header, which `cargo sparkds bench` measures the interface against.
    pub fn bench_entry(&self) -> Option<SparkDsBenchFunction> {
        self.bench
    }

    /// Calls `f`, a function of the library outside the table that fails as the table's do
    /// (a non-zero return, the message in `last_error`) and passes byte arrays to a sink, such
    /// as [`Library::bench_entry`]; `f` gets the sink's callback and its context. Returns the
    /// byte arrays passed, after the checks of the sink (rule 10).
    ///
    /// # Errors
    ///
    /// The failure of the function, with the library's message, or a violation of its sink.
    pub fn call_extension(
        &self,
        function: &'static str,
        context: Option<&str>,
        f: impl FnOnce(v1::SparkDsSink, *mut c_void) -> c_int,
    ) -> Result<Vec<Vec<u8>>> {
        crate::calls::sink_call(self, function, context, f)
    }

    /// Runs one call into the library, then turns a non-zero return into an error with the
    /// message of `last_error` (rule 7), and reports a sink that an earlier call kept (rule 10).
    pub(crate) fn call(
        &self,
        function: &'static str,
        context: Option<&str>,
        f: impl FnOnce() -> c_int,
    ) -> Result<()> {
        isolate::breadcrumb(function);
        let rc = self.observed(function, f);
        let failure = if rc == 0 {
            None
        } else {
            Some(self.failure(function, context, rc))
        };
        if let Some(late) = crate::sink::take_late_call(self.id) {
            return Err(late.into());
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn failure(&self, function: &'static str, context: Option<&str>, rc: c_int) -> Error {
        let Some(last_error) = self.table.last_error else {
            return Error::Library {
                function: function.into(),
                context: context.map(str::to_string),
                message: format!(
                    "returned {rc} (the library has no `last_error`, so there is no message)"
                ),
            };
        };
        isolate::breadcrumb("last_error");
        // SAFETY: `last_error` takes no arguments and returns a string owned by the library, or
        // NULL; it is read at once, before any other call into the library on this thread.
        let message = self.observed("last_error", || unsafe { last_error() });
        match read_message(message) {
            Ok(message) => Error::Library {
                function: function.into(),
                context: context.map(str::to_string),
                message: crate::redact::scrub(&message),
            },
            Err(problem) => Violation::new(
                function,
                7,
                format!("returned {rc} and `last_error` returned {problem}; a failing function must set a message, in UTF-8"),
            )
            .within(context)
            .into(),
        }
    }

    /// Calls a create function, `f`, with the out-parameter of a handle of `kind`, and takes
    /// ownership of the handle it returns. On failure the out-parameter must stay untouched
    /// (rule 8): a handle written there would leak or be closed by no one.
    pub(crate) fn open(
        &self,
        function: &'static str,
        context: Option<&str>,
        kind: HandleKind,
        f: impl FnOnce(&mut *mut c_void) -> c_int,
    ) -> Result<Handle<'_>> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        match self.call(function, context, || f(&mut ptr)) {
            Err(Error::Library { message, .. }) if !ptr.is_null() => Err(Violation::new(
                function,
                8,
                format!(
                    "failed ({message}) but wrote a {} to its out-parameter; on failure leave out-parameters untouched",
                    kind.noun()
                ),
            )
            .within(context)
            .into()),
            Err(e) => Err(e),
            Ok(()) => self.adopt(kind, ptr, function, context),
        }
    }

    /// Takes ownership of a handle that `function` returned, checking it is not NULL and not a
    /// handle of the same kind that is still open (rule 21).
    fn adopt(
        &self,
        kind: HandleKind,
        ptr: *mut c_void,
        function: &'static str,
        context: Option<&str>,
    ) -> Result<Handle<'_>> {
        if ptr.is_null() {
            return Err(Violation::new(
                function,
                21,
                format!(
                    "returned 0 but a NULL {}; return a handle that `{}` releases, or fail with a message",
                    kind.noun(),
                    kind.close_name()
                ),
            )
            .within(context)
            .into());
        }
        let fresh = self
            .handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((kind, ptr as usize));
        if !fresh {
            return Err(Violation::new(
                function,
                21,
                format!(
                    "returned a {} that is still open; each call must return a new handle, closed exactly once",
                    kind.noun()
                ),
            )
            .within(context)
            .into());
        }
        Ok(Handle {
            library: self,
            kind,
            ptr,
        })
    }

    fn close(&self, kind: HandleKind, ptr: *mut c_void) {
        self.handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(kind, ptr as usize));
        // A NULL close function was refused when the capability was checked (rule 4), so a
        // missing one here means there is nothing the host can call.
        if let Some(close) = kind.close_fn(&self.table) {
            isolate::breadcrumb(kind.close_name());
            // SAFETY: `ptr` was returned by the create function of this kind and is closed once:
            // `Handle` is not Clone and calls this only from Drop.
            self.observed(kind.close_name(), || unsafe { close(ptr) });
        }
    }
}

impl fmt::Debug for Library {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Library")
            .field("path", &self.path)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn read_message(message: *const c_char) -> std::result::Result<String, &'static str> {
    if message.is_null() {
        return Err("NULL");
    }
    // SAFETY: a non-NULL `last_error` result is a NUL-terminated string owned by the library,
    // valid until the next call on this thread; it is copied at once.
    let message = unsafe { CStr::from_ptr(message) };
    message
        .to_str()
        .map(str::to_string)
        .map_err(|_| "a message that is not valid UTF-8")
}

fn new_host(log: &'static LogCollector, spark_version: Option<CString>) -> *const SparkDsHost {
    let version: &'static CStr = match spark_version {
        // Leaked with the host, which the library may keep.
        Some(v) => Box::leak(v.into_boxed_c_str()),
        None => c"4.4.0",
    };
    debug_assert!(version.to_str().is_ok());
    // Leaked: the library may keep the host until it is unloaded, which never happens.
    let host: &'static SparkDsHost = Box::leak(Box::new(SparkDsHost {
        size: std::mem::size_of::<SparkDsHost>() as i64,
        abi_version: v1::SPARK_DS_ABI_VERSION,
        spark_version: version.as_ptr(),
        log: Some(log_callback),
        log_context: log as *const LogCollector as *mut c_void,
    }));
    HOSTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(host as *const SparkDsHost as usize);
    host
}

/// The address of every host given to a library. A host lives as long as the process, and so
/// do its version string and log collector, which it points to: keeping their addresses here
/// keeps them reachable, so that memory checkers (valgrind, LeakSanitizer) do not report them as
/// lost when a library does not keep the host.
static HOSTS: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

fn call_init(
    init: v1::SparkDsInitFunction,
    host: *const SparkDsHost,
) -> Result<*const SparkDsLibrary> {
    let mut table: *const SparkDsLibrary = std::ptr::null();
    isolate::breadcrumb("spark_ds_init");
    // SAFETY: `host` is a valid host that lives forever; `table` is valid for writes.
    let rc = unsafe { init(host, &mut table) };
    if rc != 0 {
        return Err(Violation::new(
            "spark_ds_init",
            1,
            format!("returned {rc}; it must return 0 and a table"),
        )
        .into());
    }
    if table.is_null() {
        return Err(Violation::new(
            "spark_ds_init",
            1,
            "returned 0 but a NULL table; write the address of the table to `*library`",
        )
        .into());
    }
    Ok(table)
}

/// Copies the table, up to its `size`, into a table whose other functions are NULL.
///
/// # Safety
///
/// `table` points to a readable table of at least `size` bytes (16 at least, its header), as
/// `spark_ds_init` promises.
unsafe fn read_table(table: *const SparkDsLibrary) -> Result<SparkDsLibrary> {
    // SAFETY: the first two fields exist in every version of the table.
    let (size, version) = unsafe { ((*table).size, (*table).abi_version) };
    let word = std::mem::size_of::<usize>() as i64;
    if size < v1::MIN_TABLE_SIZE as i64 || size % word != 0 {
        return Err(Violation::new(
            "spark_ds_init",
            2,
            format!(
                "the table's size is {size}; it must be a multiple of {word} and at least {}, the size up to `read`",
                v1::MIN_TABLE_SIZE
            ),
        )
        .into());
    }
    if version != v1::SPARK_DS_ABI_VERSION {
        return Err(Violation::new(
            "spark_ds_init",
            3,
            format!(
                "the table declares abi_version {version}, but this host supports version {} only; return a table of version {}",
                v1::SPARK_DS_ABI_VERSION,
                v1::SPARK_DS_ABI_VERSION
            ),
        )
        .into());
    }
    let mut copy = SparkDsLibrary::empty();
    let n = (size as usize).min(std::mem::size_of::<SparkDsLibrary>());
    // SAFETY: the library's table has `size` readable bytes, and `copy` has room for `n`; the
    // bytes are integers and nullable function pointers, valid for any value the library set.
    unsafe {
        std::ptr::copy_nonoverlapping(
            table as *const u8,
            &mut copy as *mut SparkDsLibrary as *mut u8,
            n,
        );
    };
    for (name, present) in [
        ("create", copy.create.is_some()),
        ("close", copy.close.is_some()),
    ] {
        if !present {
            return Err(Violation::new(
                "spark_ds_init",
                4,
                format!(
                    "the table's `{name}` is NULL; every library implements `create` and `close`"
                ),
            )
            .into());
        }
    }
    Ok(copy)
}

/// Loads the library at `path`, never to unload it, and finds its entry points: `spark_ds_init`
/// (rule 1), the filter extension's `spark_ds_filters_init` if it exports it, and the names that
/// `export!` recorded.
/// The entry points of a loaded library.
struct Opened {
    init: v1::SparkDsInitFunction,
    filters_init: Option<SparkDsFiltersInitFunction>,
    exported: Option<Vec<String>>,
    bench: Option<SparkDsBenchFunction>,
}

fn open_library(path: &Path) -> Result<Opened> {
    // The loader would open a named pipe and wait for a writer: the file is opened without
    // waiting and checked first.
    if let Err(e) = open_regular(path) {
        let reason = if e.kind() == std::io::ErrorKind::NotFound {
            "the file does not exist; build the library first (cargo build), or pass the path of the built .so, .dylib or .dll".to_string()
        } else {
            format!("{e}; pass the path of the built .so, .dylib or .dll")
        };
        return Err(Error::Load {
            path: path.to_path_buf(),
            reason,
        });
    }
    isolate::breadcrumb("spark_ds_init");
    // SAFETY: loading a library runs its initializers. That is the point of this host: it is
    // given a native data source library to run, exactly as Spark would load it.
    let loaded = unsafe { libloading::Library::new(path) }.map_err(|e| Error::Load {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    // SAFETY: `spark_ds_init` has the type `SparkDsInitFunction` of the header.
    let init = unsafe { loaded.get::<v1::SparkDsInitFunction>(b"spark_ds_init\0") }
        .map(|symbol| *symbol)
        .map_err(|_| {
            Violation::new(
                "spark_ds_init",
                1,
                "the library does not export `spark_ds_init`; export it with SPARK_DS_EXPORT in C, or #[no_mangle] pub extern \"C\" in Rust",
            )
        })?;
    // Optional: a library without the filter pushdown extension works as before.
    // SAFETY: `spark_ds_filters_init` has the type `SparkDsFiltersInitFunction` of
    // `spark_datasource_filters.h`.
    let filters_init =
        unsafe { loaded.get::<SparkDsFiltersInitFunction>(b"spark_ds_filters_init\0") }
            .ok()
            .map(|symbol| *symbol);
    let exported = exported_names(&loaded);
    // SAFETY: `spark_ds_bench_v1` has the type `SparkDsBenchFunction`, which the SDK's
    // `export!` emits; the name carries the version of `SparkDsBenchCall`.
    let bench = unsafe { loaded.get::<SparkDsBenchFunction>(SPARK_DS_BENCH_SYMBOL) }
        .ok()
        .map(|symbol| *symbol);
    // Never unloaded: see the type's documentation. The symbols stay valid for the process.
    std::mem::forget(loaded);
    Ok(Opened {
        init,
        filters_init,
        exported,
        bench,
    })
}

fn function_presence(t: &SparkDsLibrary) -> Vec<(&'static str, bool)> {
    capabilities::FUNCTIONS
        .into_iter()
        .zip(set_functions(t))
        .collect()
}

/// Whether each function of the table is set (not NULL), in the order of
/// `capabilities::FUNCTIONS`, which names them.
fn set_functions(table: &SparkDsLibrary) -> [bool; capabilities::FUNCTIONS.len()] {
    // From the whole table's address, so that the pointer may read every field after
    // `last_error`, not that field alone.
    let start = std::ptr::from_ref(table).cast::<u8>();
    // SAFETY: the fields from `last_error` on are `FUNCTION_COUNT` nullable function pointers,
    // one after the other to the end of the `repr(C)` table (asserted by
    // `spark_datasource_abi::v1`), inside `*table`; each is read as the address it holds, 0 for
    // NULL (`Option` of a function pointer is a nullable pointer of a pointer's size and
    // alignment).
    std::array::from_fn(|i| unsafe {
        let first = start.add(std::mem::offset_of!(SparkDsLibrary, last_error));
        *first.cast::<usize>().add(i) != 0
    })
}

// The core names every function of the table.
const _: () = assert!(capabilities::FUNCTIONS.len() == spark_datasource_abi::v1::FUNCTION_COUNT);

/// Rule 4: no capability whose required functions are NULL, no unknown bits.
fn check_capabilities(t: &SparkDsLibrary, caps: Capabilities) -> Result<(), Violation> {
    let unknown = caps.0 & !capabilities::KNOWN_BITS;
    if unknown != 0 {
        return Err(Violation::new(
            "create",
            4,
            format!("declares capability bits {unknown:#x}, which version 1 does not define; declare only SPARK_DS_* bits"),
        ));
    }
    // The specification's table of required functions, written once in the core.
    let present = function_presence(t);
    let is_set = |name: &str| present.iter().any(|(n, set)| *n == name && *set);
    for capability in capabilities::CAPABILITIES {
        if caps.0 & capability.bit == 0 {
            continue;
        }
        if let Some(missing) = capability.required.iter().find(|f| !is_set(f)) {
            return Err(Violation::new(
                "create",
                4,
                format!(
                    "declares {}, but `{missing}` is NULL; a source must not declare a capability whose required functions are NULL",
                    capability.name
                ),
            ));
        }
    }
    if caps.truncate() && !caps.batch_write() && !caps.streaming_write() {
        return Err(Violation::new(
            "create",
            4,
            "declares SPARK_DS_TRUNCATE without a write capability; it requires SPARK_DS_BATCH_WRITE or SPARK_DS_STREAMING_WRITE",
        ));
    }
    Ok(())
}

/// The name Spark derives from a library file: `libspark_datasource_x.so` is `x`.
fn data_source_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    library_file::name_for_create(&file)
}

/// The names that `spark_ds_exported_v1` (made by the SDK's `export!`, outside the header)
/// returns, comma separated; `None` when the library does not export it.
fn exported_names(loaded: &libloading::Library) -> Option<Vec<String>> {
    // SAFETY: `spark_ds_exported_v1` is the SDK's `extern "C" fn() -> *const c_char`.
    let function =
        unsafe { loaded.get::<extern "C" fn() -> *const c_char>(b"spark_ds_exported_v1\0") }
            .ok()?;
    let names = function();
    if names.is_null() {
        return None;
    }
    // SAFETY: non-NULL, the function returns a static NUL-terminated string (the SDK's
    // `concat!` of the names), which stays valid while the library is loaded: for ever.
    let names = unsafe { CStr::from_ptr(names) }.to_string_lossy();
    Some(
        names
            .split(',')
            .filter(|name| !name.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// # Safety
///
/// `context` is the `LogCollector` that `new_host` put in the host, which lives forever;
/// `message` is NULL or a NUL-terminated string, borrowed for the call. Thread-safe.
unsafe extern "C" fn log_callback(context: *mut c_void, level: i32, message: *const c_char) {
    // A panic must not unwind into the library's frames.
    let _ = std::panic::catch_unwind(|| {
        if context.is_null() {
            return;
        }
        // SAFETY: see the contract above.
        let collector = unsafe { &*(context as *const LogCollector) };
        let message = if message.is_null() {
            String::from("(NULL message)")
        } else {
            // SAFETY: see the contract above.
            crate::redact::scrub(&unsafe { CStr::from_ptr(message) }.to_string_lossy())
        };
        if let Some(forward) = &collector.forward {
            forward(level, &message);
            return;
        }
        let level = match level {
            1 => LogLevel::Error,
            2 => LogLevel::Warn,
            3 => LogLevel::Info,
            4 => LogLevel::Debug,
            5 => LogLevel::Trace,
            other => LogLevel::Other(other),
        };
        collector
            .messages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(LogMessage { level, message });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_source_name_comes_from_the_file_name() {
        assert_eq!(
            data_source_name(Path::new("/t/libspark_datasource_My_Source.so")),
            "my_source"
        );
        assert_eq!(data_source_name(Path::new("spark_datasource_x.dll")), "x");
    }

    #[test]
    fn capabilities_display_their_names() {
        assert_eq!(
            Capabilities(v1::SPARK_DS_BATCH_READ | v1::SPARK_DS_TRUNCATE).to_string(),
            "SPARK_DS_BATCH_READ | SPARK_DS_TRUNCATE"
        );
        assert_eq!(Capabilities(0).to_string(), "none");
    }

    #[test]
    fn a_declared_capability_needs_its_functions() {
        let t = SparkDsLibrary::empty();
        let v = check_capabilities(&t, Capabilities(v1::SPARK_DS_BATCH_READ)).err();
        assert_eq!(
            v.map(|v| v.to_string()),
            Some("`create`: declares SPARK_DS_BATCH_READ, but `create_reader` is NULL; a source must not declare a capability whose required functions are NULL (rule 4: declared capabilities are implemented; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-4)".to_string())
        );
    }

    /// A named pipe where a library should be: the loader would wait for a writer forever.
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let pipe = dir.path().join("libspark_datasource_pipe.so");
        let path = std::ffi::CString::new(pipe.to_str().expect("UTF-8")).expect("no NUL");
        // SAFETY: `path` is a NUL-terminated string that lives for the call.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
        let (sender, received) = std::sync::mpsc::channel();
        let loading = pipe.clone();
        std::thread::spawn(move || {
            let _ = sender.send(Library::load(&loading).err().map(|e| e.to_string()));
        });
        let error = received
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("Library::load returns instead of waiting on the pipe");
        assert_eq!(
            error,
            Some(format!(
                "cannot load the library `{}`: it is a named pipe (FIFO), not a regular file; pass the path of the built .so, .dylib or .dll",
                pipe.display()
            ))
        );
        let e = open_regular(dir.path()).expect_err("a directory");
        assert_eq!(e.to_string(), "it is a directory, not a regular file");
    }

    #[test]
    fn a_missing_library_is_a_clear_error() {
        let e = Library::load("/nonexistent/libspark_datasource_x.so").err();
        assert_eq!(
            e.map(|e| e.to_string()),
            Some("cannot load the library `/nonexistent/libspark_datasource_x.so`: the file does not exist; build the library first (cargo build), or pass the path of the built .so, .dylib or .dll".to_string())
        );
    }
}
