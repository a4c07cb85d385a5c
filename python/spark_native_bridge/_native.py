"""Loading a native data source library and calling its functions.

A :class:`Library` is loaded once per process and cached at module level: Python workers are
reused, so each worker loads a library once, and no ``ctypes`` object ever sits on an object that
Spark pickles. Every call that returns non-zero raises :class:`NativeDataSourceError` with the
library's ``last_error`` message, read at once on the calling thread, as the header requires.
"""

import ctypes
import logging
import os
import re
import sys
import threading
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from . import _abi, _archive, _private
from ._abi import ArrowArray, ArrowArrayStream, ArrowSchema

__all__ = ["NativeDataSourceError", "Library", "load", "library_file_name", "data_source_name"]

logger = logging.getLogger("spark_native_bridge")

# The rules chapter of the book, as `sparkds::rules::BOOK_URL` gives it (a test holds them equal).
RULES_URL = "https://sparkds.github.io/spark-datasource-template/reference/rules.html"


class NativeDataSourceError(RuntimeError):
    """A function of a native data source failed, or the library broke the interface.

    The message names the data source, the function and the library's own message, so that it
    reads the same in Spark's error (a ``PythonException``) as in a local traceback.
    """

    def __init__(self, data_source: str, function: str, message: str, code: Optional[int] = None):
        self.data_source = data_source
        self.function = function
        self.code = code
        self.native_message = message
        status = f" (status {code})" if code is not None else ""
        super().__init__(
            f"[NATIVE_DATA_SOURCE_ERROR] The native data source `{data_source}` failed in "
            f"`{function}`{status}: {message}"
        )

    def __reduce__(self):
        # Keeps the exception picklable with its fields, should Spark ship it between processes.
        return (
            NativeDataSourceError,
            (self.data_source, self.function, self.native_message, self.code),
        )


def library_file_name(name: str) -> str:
    """The file name of the library of data source `name` on this platform."""
    this_os = {"win32": "windows", "darwin": "osx"}.get(sys.platform, "linux")
    return _archive.library_file_name(this_os, name)


def data_source_name(library_path: str) -> str:
    """The data source name of a library file: `libspark_datasource_<name>.so` gives `<name>`."""
    base = os.path.basename(library_path)
    name = _archive.data_source_of_file(base)
    if name:
        return name
    raise ValueError(
        f"cannot derive a data source name from `{base}`: a native data source library is named "
        f"libspark_datasource_<name>.so, libspark_datasource_<name>.dylib or "
        f"spark_datasource_<name>.dll; pass name= to choose the name"
    )


def _search_path(file_name: str) -> List[str]:
    """Where Spark 4.4 looks for an installed library: the library path, then <prefix>/lib for
    each <prefix>/bin of PATH. Only absolute directories count: `.`, an empty element or a
    relative directory would make the library depend on the worker's current directory, which
    whoever starts a process chooses."""
    variable = {"darwin": "DYLD_LIBRARY_PATH", "win32": "PATH"}.get(sys.platform, "LD_LIBRARY_PATH")
    directories = [d for d in os.environ.get(variable, "").split(os.pathsep) if os.path.isabs(d)]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        entry = entry.rstrip(os.sep)
        if os.path.isabs(entry) and os.path.basename(entry) == "bin":
            directories.append(os.path.join(os.path.dirname(entry), "lib"))
    return [os.path.join(d, file_name) for d in directories]


def _candidates(path: Optional[str], name: str, package: Optional[str], directory: str):
    """The builds a process may load, in order, each as (where it came from, private copy,
    SHA-256): the session's package, the driver's path, the library search path. Each is read
    once, into `directory`, while it is hashed."""
    if package is not None:
        from ._package import PackageError, from_session_files

        try:
            extracted = from_session_files(package, name, directory)
        except FileNotFoundError:
            extracted = None
        except PackageError as error:
            raise NativeDataSourceError(name, "load", str(error)) from None
        if extracted is not None:
            yield (
                f"the session's package {package} ({extracted.entry})",
                extracted.path,
                extracted.sha256,
            )
    file_name = os.path.basename(path) if path else library_file_name(name)
    seen = set()
    for index, candidate in enumerate(([path] if path else []) + _search_path(file_name)):
        if candidate in seen:
            continue
        seen.add(candidate)
        try:
            source = _private.open_regular(candidate)
        except FileNotFoundError:
            continue
        except OSError as error:
            # Named with its reason (a named pipe, a directory), never read.
            yield candidate, None, _private.reason(error)
            continue
        with source:
            copy, checksum, _ = _private.copy(source, directory, f"{index}-{file_name}")
        yield candidate, copy, checksum


def _resolve(
    path: Optional[str],
    name: str,
    expected_sha256: Optional[str],
    package: Optional[str],
    directory: str,
) -> Tuple[str, str, str]:
    """The private copy to load, its checksum and where it came from: the first candidate whose
    SHA-256 is `expected_sha256` (the driver's), or the first one at all without it. A candidate
    that cannot be read (`copy` None) is named with its reason (`checksum`)."""
    seen = []
    for origin, copy, checksum in _candidates(path, name, package, directory):
        if copy is None:
            if expected_sha256 is None:
                raise NativeDataSourceError(name, "load", f"cannot load {origin}: {checksum}")
            seen.append(f"{origin} ({checksum})")
            continue
        if expected_sha256 is None or checksum == expected_sha256:
            return copy, checksum, origin
        os.unlink(copy)
        seen.append(f"{origin} (SHA-256 {checksum})")
    if expected_sha256 is None:
        raise NativeDataSourceError(name, "load", f"cannot load {path}: no such file")
    found = f"; found only {', '.join(seen)}" if seen else "; found no candidate at all"
    where = [f"the session's package {package}"] if package is not None else []
    where += [path] if path else []
    where.append("the library path of this node")
    raise NativeDataSourceError(
        name,
        "load",
        f"NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND: no build of `{name}` with the driver's SHA-256 "
        f"{expected_sha256} in {', '.join(where)}{found}: install the same build on every node",
    )


class _Sink:
    """A SparkDsSink that copies each byte array it receives, as the host must."""

    def __init__(self) -> None:
        self.items: List[bytes] = []
        self.error: Optional[str] = None
        self.callback = _abi.SparkDsSink(self._add)

    def _add(self, _sink, data, length) -> None:
        # An exception cannot cross back into C: record it and raise after the call.
        try:
            if length < 0:
                self.error = f"a sink was given a negative length, {length}"
            elif length == 0:
                self.items.append(b"")
            elif not data:
                self.error = f"a sink was given NULL data with length {length}"
            else:
                self.items.append(ctypes.string_at(data, length))
        except BaseException as error:  # noqa: BLE001 - reported after the call
            self.error = f"copying a byte array failed: {error!r}"


def _release(struct, release_type) -> None:
    """Releases an Arrow struct that the bridge still owns (its release is not NULL)."""
    if struct.release:
        release_type(struct.release)(ctypes.byref(struct))


class TaskContext:
    """A SparkDsTaskContext filled from pyspark's TaskContext of the running task.

    pyspark's Python workers are not told that their task was killed (Spark kills the worker
    process instead, after spark.python.task.killTimeout), so is_interrupted only turns true once
    the bridge stops consuming the task's data, for example when the output generator is closed.
    """

    def __init__(self) -> None:
        from pyspark import TaskContext as SparkTaskContext

        spark_task = SparkTaskContext.get()
        self.interrupted = False
        self._callback = _abi.IsInterrupted(self._is_interrupted)
        self.struct = _abi.SparkDsTaskContext(
            size=ctypes.sizeof(_abi.SparkDsTaskContext),
            task_id=spark_task.taskAttemptId() if spark_task else 0,
            is_interrupted=self._callback,
            host_data=None,
            stage_id=spark_task.stageId() if spark_task else 0,
            partition_id=spark_task.partitionId() if spark_task else 0,
            attempt_number=spark_task.attemptNumber() if spark_task else 0,
        )

    def _is_interrupted(self, _task) -> int:
        return 1 if self.interrupted else 0

    def local_property(self, key: str) -> Optional[str]:
        from pyspark import TaskContext as SparkTaskContext

        spark_task = SparkTaskContext.get()
        return spark_task.getLocalProperty(key) if spark_task else None


class Library:
    """A loaded native data source library: its table, and typed calls to its functions."""

    def __init__(self, path: str, name: str, sha256: str, origin: Optional[str] = None) -> None:
        # `path` is the private copy whose bytes hash to `sha256`; `origin`, where they came from.
        self.path = path
        self.name = name
        self.sha256 = sha256
        self.origin = origin or path
        try:
            self._dll = ctypes.CDLL(path)
        except OSError as error:
            raise NativeDataSourceError(
                name, "load", f"cannot load {self.origin} (SHA-256 {sha256}): {error}"
            ) from None
        try:
            init = self._dll.spark_ds_init
        except AttributeError:
            raise NativeDataSourceError(
                name,
                "load",
                f"{self.origin} does not export spark_ds_init: it is not a native data "
                "source library (mark spark_ds_init with SPARK_DS_EXPORT)",
            ) from None
        init.restype = ctypes.c_int
        init.argtypes = [ctypes.POINTER(_abi.SparkDsHost), ctypes.POINTER(ctypes.c_void_p)]
        # The host, its strings and its log callback live as long as the library: forever.
        self._log_callback = _abi.LogFunction(self._log)
        self._spark_version = _spark_version().encode()
        self._host = _abi.SparkDsHost(
            size=ctypes.sizeof(_abi.SparkDsHost),
            abi_version=_abi.SPARK_DS_ABI_VERSION,
            spark_version=self._spark_version,
            log=self._log_callback,
            log_context=None,
        )
        table_address = ctypes.c_void_p()
        status = init(ctypes.byref(self._host), ctypes.byref(table_address))
        if status != 0:
            raise NativeDataSourceError(name, "spark_ds_init", "the library failed to load", status)
        if not table_address.value:
            raise NativeDataSourceError(name, "spark_ds_init", "returned a NULL table")
        self._read_table(table_address.value)
        self.push_filters_function = self._filters_extension()

    def _read_table(self, address: int) -> None:
        header = _abi.SparkDsLibrary.from_address(address)
        size, version = header.size, header.abi_version
        if version != _abi.SPARK_DS_ABI_VERSION:
            raise NativeDataSourceError(
                self.name,
                "spark_ds_init",
                f"the table has abi_version {version}, but this bridge "
                f"supports version {_abi.SPARK_DS_ABI_VERSION} only",
            )
        if size < _abi.MINIMUM_TABLE_SIZE or size % ctypes.sizeof(ctypes.c_void_p) != 0:
            raise NativeDataSourceError(
                self.name,
                "spark_ds_init",
                f"the table's size is {size} bytes: it must be a "
                f"multiple of the pointer size, at least {_abi.MINIMUM_TABLE_SIZE} (up to `read`)",
            )
        # Only the functions that fit in `size` exist: the ones beyond it are NULL.
        self.functions = {}
        for function in _abi.LIBRARY_FUNCTIONS:
            field = getattr(_abi.SparkDsLibrary, function)
            pointer = None
            if field.offset + field.size <= size:
                pointer = ctypes.c_void_p.from_address(address + field.offset).value
            self.functions[function] = _abi.FUNCTION_TYPES[function](pointer) if pointer else None
        for function in ("create", "close"):
            if self.functions[function] is None:
                raise NativeDataSourceError(
                    self.name, "spark_ds_init", f"`{function}` is NULL, but every library needs it"
                )

    def _filters_extension(self):
        """push_filters of the extension spark_datasource_filters.h, or None when the library
        does not export spark_ds_filters_init (or its table is too short to hold it): the host
        then pushes no filter. A failing spark_ds_filters_init makes the library invalid, as a
        failing spark_ds_init does."""
        try:
            address = ctypes.cast(self._dll.spark_ds_filters_init, ctypes.c_void_p).value
        except AttributeError:
            return None
        init = _abi.FiltersInit(address)
        table_address = ctypes.c_void_p()
        status = init(ctypes.byref(self._host), ctypes.byref(table_address))
        if status != 0:
            raise NativeDataSourceError(
                self.name, "spark_ds_filters_init", self.last_error(), status
            )
        if not table_address.value:
            raise NativeDataSourceError(self.name, "spark_ds_filters_init", "returned a NULL table")
        table = _abi.SparkDsFilterTable.from_address(table_address.value)
        field = _abi.SparkDsFilterTable.push_filters
        if table.size < field.offset + field.size or table.version < 1:
            # Fields are read only as far as `size` covers them; a version-0 table has none.
            return None
        pointer = ctypes.c_void_p.from_address(table_address.value + field.offset).value
        return _abi.PushFilters(pointer) if pointer else None

    def push_filters(self, reader: int, message: bytes, count: int) -> bytes:
        """Offers the `count` predicates of `message` (spark_datasource_filters.h's encoding) to
        `reader`, and returns the library's answers: one byte, 0 or 1, per predicate. Raises
        NativeDataSourceError when the call fails or the answers break the header's rules."""
        function = self.push_filters_function
        if function is None:
            raise NativeDataSourceError(
                self.name, "push_filters", "the library does not export spark_ds_filters_init"
            )
        sink = _Sink()
        status = function(reader, message, len(message), sink.callback, None)
        if status != 0:
            raise NativeDataSourceError(self.name, "push_filters", self.last_error(), status)
        if sink.error is not None:
            raise NativeDataSourceError(self.name, "push_filters", sink.error)
        if len(sink.items) != 1:
            raise NativeDataSourceError(
                self.name,
                "push_filters",
                f"INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE: called accepted "
                f"{len(sink.items)} times: it must call it once",
            )
        answers = sink.items[0]
        if len(answers) != count or any(answer > 1 for answer in answers):
            raise NativeDataSourceError(
                self.name,
                "push_filters",
                f"INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE: answered {list(answers)} for "
                f"{count} predicates: it must answer one byte, 0 or 1, per predicate",
            )
        return answers

    def _log(self, _context, level: int, message: Optional[bytes]) -> None:
        try:
            python_level = {
                _abi.SPARK_DS_LOG_ERROR: logging.ERROR,
                _abi.SPARK_DS_LOG_WARN: logging.WARNING,
                _abi.SPARK_DS_LOG_INFO: logging.INFO,
                _abi.SPARK_DS_LOG_DEBUG: logging.DEBUG,
            }.get(level, 5)
            text = scrub((message or b"").decode("utf-8", errors="replace"), _known_secrets())
            logger.log(python_level, "%s: %s", self.name, text)
        except BaseException:  # noqa: BLE001 - nothing may cross back into C
            pass

    # -- calls ------------------------------------------------------------------------------

    def has(self, function: str) -> bool:
        return self.functions.get(function) is not None

    def last_error(self) -> str:
        last_error = self.functions["last_error"]
        if last_error is None:
            return "(the library has no last_error function)"
        message = last_error()
        if message is None:
            return "(last_error returned NULL)"
        return message.decode("utf-8", errors="replace")

    def call(self, function: str, *args) -> None:
        """Calls `function`, raising NativeDataSourceError if it fails."""
        native = self.functions[function]
        if native is None:
            raise NativeDataSourceError(self.name, function, "the function is NULL in the table")
        status = native(*args)
        if status != 0:
            raise NativeDataSourceError(self.name, function, self.last_error(), status)

    def check_handle(self, create: str, handle: Optional[int]) -> None:
        """Rule 21: a create function that succeeds returns a handle, never NULL (which every
        later call would dereference)."""
        if not handle:
            raise NativeDataSourceError(
                self.name,
                create,
                "INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE: returned 0 but a NULL handle; "
                "write a handle to the out-parameter (rule 21: each handle is closed exactly "
                f"once; see {RULES_URL}#rule-21)",
            )

    def collect(self, function: str, *args) -> List[bytes]:
        """Calls a function that returns byte arrays through a sink, and returns them."""
        sink = _Sink()
        self.call(function, *args, sink.callback, None)
        if sink.error is not None:
            raise NativeDataSourceError(self.name, function, sink.error)
        return sink.items

    def collect_one(self, function: str, *args) -> bytes:
        """Calls a function that returns exactly one byte array, with one call of add."""
        items = self.collect(function, *args)
        if len(items) != 1:
            raise NativeDataSourceError(
                self.name, function, f"called add {len(items)} times: it must call it once"
            )
        return items[0]

    def close(self, function: str, handle: int) -> None:
        """Calls a close function, which cannot fail."""
        native = self.functions[function]
        if native is not None and handle:
            native(handle)

    # -- sources ----------------------------------------------------------------------------

    @contextmanager
    def source(self, options: Dict[str, str]) -> Iterator[Tuple[int, int]]:
        """Creates a source with `options`, yields (handle, capabilities), and closes it."""
        keys = [str(key).encode("utf-8") for key in options]
        values = [str(value).encode("utf-8") for value in options.values()]
        info = _abi.SparkDsCreateInfo(
            size=ctypes.sizeof(_abi.SparkDsCreateInfo),
            name=self.name.lower().encode("utf-8"),
            option_keys=(ctypes.c_char_p * max(len(keys), 1))(*keys),
            option_values=(ctypes.c_char_p * max(len(values), 1))(*values),
            num_options=len(keys),
        )
        capabilities = ctypes.c_uint64(0)
        handle = ctypes.c_void_p()
        self.call("create", ctypes.byref(info), ctypes.byref(capabilities), ctypes.byref(handle))
        self.check_handle("create", handle.value)
        try:
            self._check_capabilities(capabilities.value)
            yield handle.value, capabilities.value
        finally:
            self.close("close", handle.value)

    def _check_capabilities(self, capabilities: int) -> None:
        for bit, functions in _abi.REQUIRED_FUNCTIONS.items():
            if capabilities & bit:
                missing = [f for f in functions if not self.has(f)]
                if missing:
                    raise NativeDataSourceError(
                        self.name,
                        "create",
                        f"declares {_abi.CAPABILITY_NAMES[bit]} but "
                        f"{', '.join('`' + f + '`' for f in missing)} is NULL",
                    )
        writes = _abi.SPARK_DS_BATCH_WRITE | _abi.SPARK_DS_STREAMING_WRITE
        if capabilities & _abi.SPARK_DS_TRUNCATE and not capabilities & writes:
            raise NativeDataSourceError(
                self.name, "create", "declares SPARK_DS_TRUNCATE without a write capability"
            )

    def schema(self, source: int):
        """The schema of the source, as a pyarrow.Schema."""
        import pyarrow as pa

        struct = ArrowSchema()
        self.call("schema", source, ctypes.byref(struct))
        return pa.Schema._import_from_c(ctypes.addressof(struct))

    @contextmanager
    def exported_schema(self, schema) -> Iterator[ArrowSchema]:
        """A pyarrow.Schema as an ArrowSchema that the bridge owns, released afterwards."""
        struct = ArrowSchema()
        schema._export_to_c(ctypes.addressof(struct))
        try:
            yield struct
        finally:
            _release(struct, _abi.RELEASE_SCHEMA)

    @contextmanager
    def handle(self, create: str, close: str, *args) -> Iterator[int]:
        """Calls `create`(*args, &handle), yields the handle and closes it with `close`."""
        handle = ctypes.c_void_p()
        self.call(create, *args, ctypes.byref(handle))
        self.check_handle(create, handle.value)
        try:
            yield handle.value
        finally:
            self.close(close, handle.value)

    # -- executors --------------------------------------------------------------------------

    def read(self, task: TaskContext, state: Optional[bytes], partition: bytes):
        """Calls read and returns the stream as a pyarrow.RecordBatchReader, which owns it."""
        import pyarrow as pa

        stream = ArrowArrayStream()
        self.call(
            "read",
            ctypes.byref(task.struct),
            state,
            len(state) if state is not None else 0,
            partition,
            len(partition),
            ctypes.byref(stream),
        )
        return pa.RecordBatchReader._import_from_c(ctypes.addressof(stream))

    def write(self, data_writer: int, schema: ArrowSchema, batch) -> None:
        """Exports `batch` and moves it to the library's write; `schema` is borrowed."""
        array = ArrowArray()
        batch._export_to_c(ctypes.addressof(array))
        try:
            self.call("write", data_writer, ctypes.byref(schema), ctypes.byref(array))
        finally:
            # A library moves the batch out (or releases it). One that failed before taking it
            # leaves it to us: release it then, so the batch is not leaked.
            _release(array, _abi.RELEASE_ARRAY)

    def commit_messages(
        self, function: str, writer: int, epoch_id: int, messages: Sequence[Optional[bytes]]
    ) -> None:
        """Calls commit or abort with `messages`: None entries become NULL with length 0."""
        count = len(messages)
        pointers = (ctypes.c_char_p * max(count, 1))(*messages)
        lengths = (ctypes.c_int64 * max(count, 1))(*[len(m) if m else 0 for m in messages])
        self.call(function, writer, epoch_id, pointers, lengths, count)


# One build per data source name and process, keyed by name: Python workers are reused, and a
# worker that loaded a build never runs another one under the same name.
_LIBRARIES: Dict[str, Library] = {}
_LOCK = threading.Lock()


def _replaced(name: str, loaded: str, wanted: str) -> NativeDataSourceError:
    return NativeDataSourceError(
        name,
        "load",
        f"INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED: this process loaded the build of `{name}` "
        f"with SHA-256 {loaded}, and the driver now uses the build with SHA-256 {wanted}: a "
        f"process never runs two builds of one data source; restart the application to use the "
        f"new build",
    )


def load(
    path: Optional[str],
    name: str,
    expected_sha256: Optional[str] = None,
    package: Optional[str] = None,
) -> Library:
    """The library of data source `name`, loaded once per process.

    With `expected_sha256`, only that build is loaded (the driver's, as Spark 4.4 requires): the
    candidates (the session's `package`, `path`, the library search path) are each read once into
    a private copy and hashed, and the first copy with that checksum is loaded. A process that
    loaded another build of `name` refuses to run mixed builds.
    """
    with _LOCK:
        library = _LIBRARIES.get(name)
        if library is not None and expected_sha256 is not None:
            if library.sha256 != expected_sha256:
                raise _replaced(name, library.sha256, expected_sha256)
            return library
        with _private.private_directory() as directory:
            copy, checksum, origin = _resolve(path, name, expected_sha256, package, directory)
            return _load_copy(copy, name, checksum, origin)


def load_private_copy(copy: str, name: str, sha256: str, origin: str) -> Library:
    """Loads `copy`, a private copy whose bytes hash to `sha256` (see `_private`), as the build of
    `name` for this process."""
    with _LOCK:
        return _load_copy(copy, name, sha256, origin)


def _load_copy(copy: str, name: str, sha256: str, origin: str) -> Library:
    library = _LIBRARIES.get(name)
    if library is not None:
        if library.sha256 != sha256:
            raise _replaced(name, library.sha256, sha256)
        return library
    library = Library(copy, name, sha256, origin)
    _LIBRARIES[name] = library
    return library


# -- redaction ----------------------------------------------------------------------------------

# Spark's defaults of spark.redaction.regex and spark.sql.redaction.options.regex, and the text
# that replaces a redacted value (org.apache.spark.util.Utils.REDACTION_REPLACEMENT_TEXT).
REDACTION_PATTERNS: Tuple[str, ...] = ("(?i)secret|password|token|access[.]?key", "(?i)url")
REDACTED = "*********(redacted)"


def _compiled(patterns: Sequence[str]) -> List["re.Pattern[str]"]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error:
            # A Java pattern that Python cannot read: every key is then taken as secret, rather
            # than none.
            compiled.append(re.compile(""))
    return compiled


def secret_values(options: Dict[str, str], patterns: Sequence[str] = REDACTION_PATTERNS) -> List[str]:
    """The parts of the options' values that no message may show, longest first so that no part
    of a longer secret survives a shorter one: the whole value of an option that Spark would
    redact (its key or its value matches one of `patterns` or Spark's defaults), except a `url`
    (a key that only Spark's default `(?i)url` finds), of which only the credentials it carries
    are secret, so that an error still names the host that failed (as `secret_parts` of the
    Rust SDK; plans redact it whole)."""
    secret_words = _compiled((REDACTION_PATTERNS[0],) + tuple(patterns))
    url = re.compile(REDACTION_PATTERNS[1])
    secrets = set()
    for key, value in options.items():
        key, value = str(key), str(value)
        if not value:
            continue
        if url.search(key) and not any(p.search(key) for p in _compiled((REDACTION_PATTERNS[0],))):
            secrets.update(_url_credentials(value))
        elif any(p.search(key) or p.search(value) for p in secret_words):
            secrets.add(value)
    return sorted((s for s in secrets if s), key=len, reverse=True)


def redacted_whole(key: str, value: str, patterns: Sequence[str] = REDACTION_PATTERNS) -> bool:
    """Whether Spark shows this option as its redaction text in plans and UIs: its key or value
    matches one of `patterns` or Spark's defaults, a `url` included (whole, unlike messages)."""
    return any(p.search(key) or p.search(value) for p in _compiled(REDACTION_PATTERNS + tuple(patterns)))


def _url_credentials(value: str) -> List[str]:
    """The credentials of the URL `value` (its user information, its password as written and
    decoded, the values of its parameters whose names are secret), or the whole value when it is
    not a URL."""
    from urllib.parse import unquote

    if "://" not in value:
        return [value]
    rest = value.split("://", 1)[1]
    end = min([i for i in (rest.find(c) for c in "/?#;") if i >= 0], default=len(rest))
    authority, tail = rest[:end], rest[end:]
    parts: List[str] = []
    # A password alone only from 4 characters: a shorter one would take every `p` of every
    # later message with it (the whole user information always is scrubbed).
    if "@" in authority:
        user_info = authority.rsplit("@", 1)[0]
        parts.append(user_info)
        if ":" in user_info and len(user_info.split(":", 1)[1]) >= 4:
            parts.append(user_info.split(":", 1)[1])
    words = re.compile(REDACTION_PATTERNS[0])
    for parameter in re.split(r"[?&;]", tail.split("#", 1)[0]):
        name, sep, secret = parameter.partition("=")
        if sep and words.search(name) and len(secret) >= 4:
            parts.append(secret)
    return [variant for part in parts if part for variant in {part, unquote(part)}]


def scrub(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret value replaced by Spark's redaction text."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


# Every secret value that this process has run a library with: the library's log messages are
# scrubbed of them, whichever call they come from (a library may log an option later, from a
# thread of its own). Values are only added, as the JVM plugin's JNI library keeps them.
_SECRETS: set = set()
# Not _LOCK, which a load holds while the library's spark_ds_init may log.
_SECRETS_LOCK = threading.Lock()


def _known_secrets() -> List[str]:
    with _SECRETS_LOCK:
        return sorted(_SECRETS, key=len, reverse=True)


@contextmanager
def redacting(name: str, secrets: Sequence[str]) -> Iterator[None]:
    """Re-raises any error whose message holds a secret value with that value redacted: a library
    may echo an option in its last_error, and Spark prints the message in the query's error, in
    its logs and on the console. From now on, the library's log is scrubbed of `secrets` too."""
    if secrets:
        with _SECRETS_LOCK:
            _SECRETS.update(secrets)
    try:
        yield
    except NativeDataSourceError as error:
        if not secrets or scrub(str(error), secrets) == str(error):
            raise
        raise NativeDataSourceError(
            error.data_source, error.function, scrub(error.native_message, secrets), error.code
        ) from None
    except Exception as error:  # noqa: BLE001 - only errors that carry a secret are replaced
        text = str(error)
        if not secrets or scrub(text, secrets) == text:
            raise
        raise NativeDataSourceError(name, "?", f"{type(error).__name__}: {scrub(text, secrets)}") from None


def _spark_version() -> str:
    try:
        import pyspark

        return pyspark.__version__
    except ImportError:
        return "unknown"
