"""The Python Data Source API classes that host a native data source on pyspark 4.0 to 4.3.

Where each method runs (observed on Spark 4.3): `schema`, `reader`/`partitions`, `writer`,
`commit`/`abort` and the stream reader's offset methods run in Python worker processes that the
JVM spawns on the driver; `read` and the writers' `write` run in Python workers on the executors.
These processes share nothing but what Spark pickles: so every object below carries only plain
values (paths, options, byte arrays), and native handles live only for the duration of one method,
except in the stream reader, whose process lives as long as the query.
"""

import base64
import ctypes
import functools
import json
import uuid
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from . import _abi, _accepted, _filters
from ._native import (
    REDACTED,
    RULES_URL,
    NativeDataSourceError,
    TaskContext,
    load,
    redacted_whole,
    redacting,
    scrub,
    secret_values,
)

try:  # pyspark 4.1 and later
    from pyspark.sql.datasource import DataSourceStreamArrowWriter
except ImportError:  # pragma: no cover - pyspark 4.0: stream writers get Rows, see _batches
    from pyspark.sql.datasource import DataSourceStreamWriter as DataSourceStreamArrowWriter

try:  # pyspark 4.1 and later
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:  # pragma: no cover - pyspark 4.0

    class SupportsTriggerAvailableNow:  # type: ignore[no-redef]
        pass


# The local property with the ID of the micro-batch that a task runs (MicroBatchExecution).
_BATCH_ID_PROPERTY = "streaming.sql.batchId"


@dataclass(frozen=True)
class _Library:
    """What identifies a library across processes: the data source name, the build (the SHA-256
    of the bytes the driver loaded), where the driver found it (a hint: every process loads only
    a copy of that build), and the session's redaction patterns."""

    path: Optional[str]
    sha256: str
    name: str
    # The file name of the session's package that holds the library, if it came from one.
    package: Optional[str] = None
    # The session's spark.redaction.regex and spark.sql.redaction.options.regex, read on the
    # driver; Spark's defaults apply in any case.
    redaction: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.package is not None and not isinstance(self.package, str):
            raise TypeError("_Library(path, sha256, name, package=None, redaction=()): package "
                            "is the file name of a session's package")

    def load(self):
        return load(self.path, self.name, self.sha256, self.package)

    def redacting(self, options: Dict[str, str]):
        """A context in which errors never carry the value of a secret option."""
        return redacting(self.name, secret_values(options, self.redaction))


def _to_arrow_schema(schema: StructType):
    """The Arrow schema that pyspark itself uses for `schema`, nullability kept, timestamps in
    UTC: Spark compares the batches that `read` yields with it exactly."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(schema, timezone="UTC")
    except TypeError:  # pragma: no cover - pyspark without the timezone argument
        return to_arrow_schema(schema)


def _from_arrow_schema(schema) -> StructType:
    from pyspark.sql.pandas.types import from_arrow_schema

    # timestamp[us] without a time zone is timestamp_ntz, as the header's type list says.
    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


def _schema_to_bytes(schema) -> bytes:
    return schema.serialize().to_pybytes()


def _schema_from_bytes(data: bytes):
    import pyarrow as pa

    return pa.ipc.read_schema(pa.py_buffer(data))


def _conform(batch, target, library: _Library, function: str):
    """`batch` with the exact schema `target`: casts what differs only in representation (such
    as the time zone of a timestamp), and refuses nulls in a column declared not null."""
    import pyarrow as pa

    if batch.num_columns == len(target):
        # Checked even when the schemas are equal: the schema does not say what the data holds.
        for column, field in zip(batch.columns, target):
            if not field.nullable and column.null_count > 0:
                raise _nulls_refused(library, function, column.null_count, field.name)
    if batch.schema.equals(target):
        return batch
    if batch.num_columns != len(target):
        raise NativeDataSourceError(
            library.name,
            function,
            f"returned a batch of {batch.num_columns} columns, "
            f"{batch.schema.names}, for the schema {target.names}",
        )
    columns = []
    for column, field, name in zip(batch.columns, target, batch.schema.names):
        if name != field.name:
            raise NativeDataSourceError(
                library.name,
                function,
                f"returned column `{name}` where the schema has `{field.name}`",
            )
        columns.append(column if column.type == field.type else column.cast(field.type))
    return pa.RecordBatch.from_arrays(columns, schema=target)


def _redacted(method):
    """Runs a method of a reader (which has `library` and `options`) so that its errors never
    carry the value of a secret option."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self.library.redacting(self.options):
            return method(self, *args, **kwargs)

    return run


# -- reads --------------------------------------------------------------------------------------


class NativePartition(InputPartition):
    """A partition of a native read: the bytes that the library returned for it, and the state
    of its reader (from serialize_reader), which `read` receives on the executor."""

    def __init__(self, index: int, state: Optional[bytes], data: bytes) -> None:
        super().__init__(index)
        self.state = state
        self.data = data

    def __repr__(self) -> str:
        return f"NativePartition({self.value}, {len(self.data)} bytes)"


def _read(
    library: _Library,
    options: Dict[str, str],
    schema: StructType,
    partition: InputPartition,
    checked: Sequence = (),
) -> Iterator:
    """Reads one partition on an executor, yielding pyarrow RecordBatches as the native stream
    produces them, each checked against the filters of `checked` (those the library accepted,
    when they are checked)."""
    if not isinstance(partition, NativePartition):
        # Spark plans one empty partition, InputPartition(None), when the library returned none.
        return
    with library.redacting(options):
        yield from _read_batches(library, schema, partition, checked)


def _read_batches(
    library: _Library, schema: StructType, partition: NativePartition, checked: Sequence
) -> Iterator:
    import pyarrow as pa

    native = library.load()
    target = _to_arrow_schema(schema)
    # The columns whose nulls are refused, found once: each batch then costs one null count per
    # such column.
    not_null = [(i, field.name) for i, field in enumerate(target) if not field.nullable]
    task = TaskContext()
    reader = native.read(task, partition.state, partition.data)
    try:
        # Every batch of an imported stream has the stream's schema: when it is Spark's, the
        # batches are yielded as they come, with no comparison of schemas per batch.
        exact = reader.schema.equals(target)
        read_next = reader.read_next_batch
        index = 0
        while True:
            try:
                batch = read_next()
            except StopIteration:
                break
            except Exception as error:  # pyarrow's error carries the stream's get_last_error
                raise NativeDataSourceError(library.name, "get_next", str(error)) from None
            # The cheap checks of pyarrow's validate (a pass over the columns, not over their
            # values): every column as long as the batch (rule 16).
            try:
                batch.validate()
            except pa.ArrowInvalid as error:
                raise _invalid_batch(library, index, error) from None
            if exact:
                for i, name in not_null:
                    nulls = batch.column(i).null_count
                    if nulls:
                        raise _nulls_refused(library, "read", nulls, name)
            else:
                batch = _conform(batch, target, library, "read")
            if checked:
                _check_rows(library, checked, batch, index)
            index += 1
            yield batch
    except GeneratorExit:
        task.interrupted = True
        raise
    finally:
        # Releases the stream while `task` is still alive: the stream may use it until then.
        reader.close()
        del task


def _invalid_batch(library: _Library, index: int, error) -> NativeDataSourceError:
    return NativeDataSourceError(
        library.name,
        "get_next",
        f"INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE: batch {index} is not valid Arrow: "
        f"{error}",
    )


def _nulls_refused(library: _Library, function: str, nulls: int, name: str):
    return NativeDataSourceError(
        library.name,
        function,
        f"returned {nulls} nulls in column `{name}`, which is not nullable",
    )


def _check_rows(library: _Library, checked: Sequence, batch, index: int) -> None:
    """Rule 31: every row of `batch` (the `index`-th of its partition) makes every filter of
    `checked` TRUE; the first that is not fails the read, naming the filter and the row."""
    untrue = _accepted.first_untrue(checked, batch)
    if untrue is not None:
        filter_, row = untrue
        raise NativeDataSourceError(
            library.name,
            "read",
            f"INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE: batch {index}, row {row}: the "
            f"accepted filter `{_accepted.sql(filter_)}` is not TRUE; return only rows where "
            f"every accepted filter is TRUE, or answer 0 for it (rule 31: returned rows satisfy "
            f"the accepted filters; see {RULES_URL}#rule-31)",
        )


# pyspark 4.1 and later offer filters to DataSourceReader.pushFilters; 4.0 has no such method.
_BASE_PUSH_FILTERS = getattr(DataSourceReader, "pushFilters", None)


def _plans_each_scan_apart() -> bool:
    """Whether this pyspark gives each scan of a relation the read plan of its own filters.

    pyspark 4.1 to 4.3 do not. Their PythonScanBuilder.pushFilters stores the plan that the
    filter pushdown worker returns (the partitions, and the pickled reader that accepted the
    filters) on the relation's PythonDataSourceV2 (`setReadInfo`), and PythonBatch plans with
    `getOrCreateReadInfo`, which hands that stored plan to every later scan of the relation: a
    query without filters (it runs no pushdown pass), a view of the DataFrame, and in one query
    the scan whose filters were pushed first (a union of two filters reads one of them twice). A
    reader that applies the filters it accepted then answers another query: `df.where("id < 3")
    .count()` followed by `df.count()` gives 3 of 10 rows. SPARK-58551, the change that added
    `DataSourceReader.pushLimit`, keeps the plan on the scan builder; no release the bridge
    supports has it (the book's page on filters reproduces it with a Python data source).
    """
    if _BASE_PUSH_FILTERS is None or not hasattr(DataSourceReader, "pushLimit"):
        return False
    import pyspark

    try:
        line = tuple(int(part) for part in pyspark.__version__.split(".")[:2])
    except ValueError:  # pragma: no cover - a development version such as 4.4.0.dev0
        return False
    return line >= (4, 4)


# Whether the bridge offers a query's filters to the library at all (see above): where it does
# not, pyspark's pushdown pass gets every filter back, and Spark evaluates them all.
PUSHES_FILTERS = _plans_each_scan_apart()


class _BoundPushFilters:
    """`reader.pushFilters` of a NativeReader: calls its `_push_filters`.

    Its `__func__` is DataSourceReader's own pushFilters. pyspark's planning worker takes a
    reader whose pushFilters is not the base class's to have filter pushdown, and fails every
    read of it with DATA_SOURCE_PUSHDOWN_DISABLED while spark.sql.python.filterPushdown.enabled
    is false (its default); the workers have no session to ask for the setting. For the bridge,
    pushing no filter is always correct, so it must read as the base class's method: with the
    setting off, reads work as before and nothing is pushed; with it on, pyspark's filter
    pushdown worker calls it, which is the only place it is called.
    """

    def __init__(self, reader: "NativeReader") -> None:
        self.__func__ = _BASE_PUSH_FILTERS
        self.__self__ = reader

    def __call__(self, filters):
        return self.__self__._push_filters(filters)


class _PushFilters:
    """The descriptor that binds :class:`_BoundPushFilters` to a reader."""

    def __get__(self, reader, owner=None):
        if reader is None:
            return _BASE_PUSH_FILTERS
        return _BoundPushFilters(reader)


class NativeReader(DataSourceReader):
    """Plans a batch read on the driver side, and reads partitions on executors.

    On a pyspark that plans each scan apart (`PUSHES_FILTERS`), with
    spark.sql.python.filterPushdown.enabled, `pushFilters` offers the query's filters to a
    library that exports spark_ds_filters_init (spark_datasource_filters.h). What becomes of the
    ones it accepts is `accepted_filters`, the option ``acceptedFilters`` (see ``_accepted``):
    Spark evaluates them again, the executors check every row against them, or they are trusted.
    """

    def __init__(
        self,
        library: _Library,
        options: Dict[str, str],
        schema: StructType,
        arrow_schema: bytes,
        accepted_filters: str = _accepted.DEFAULT,
    ) -> None:
        self.library = library
        self.options = options
        self.schema = schema
        self.arrow_schema = arrow_schema
        self.accepted_filters = accepted_filters
        # The accepted filters that `read` checks every row against (with `check` only).
        self.checked: Tuple = ()
        # What pushFilters offered (one message of the extension's encoding) and the library's
        # answers, one byte per predicate: `partitions` offers the same message to the reader
        # it plans with, whose state (serialize_reader) carries the accepted filters to `read`.
        self.filter_message: Optional[bytes] = None
        self.filter_answers: Optional[bytes] = None
        # The pyspark filters that the library accepted, in the order Spark gave them.
        self.pushed_filters: Tuple = ()

    if PUSHES_FILTERS:
        pushFilters = _PushFilters()

    @_redacted
    def _push_filters(self, filters) -> List:
        """The filters that Spark must still evaluate: those the encoding cannot express, those
        the library did not accept (all of them when it has no filter extension), and with
        ``reevaluate`` those it accepted too."""
        filters = list(filters)
        native = self.library.load()
        if native.push_filters_function is None:
            return filters
        offered = []
        encoded = []
        for filter_ in filters:
            predicate = _filters.encode(filter_, self.schema)
            if predicate is not None:
                offered.append(filter_)
                encoded.append(predicate)
        if not offered:
            return filters
        message = _filters.message(encoded)
        with ExitStack() as handles:
            reader = self._create_reader(native, handles)
            answers = native.push_filters(reader, message, len(offered))
        self.filter_message = message
        self.filter_answers = answers
        # Spark matches the filters returned to the ones it gave by identity.
        accepted = {id(f) for f, answer in zip(offered, answers) if answer == 1}
        self.pushed_filters = tuple(f for f in offered if id(f) in accepted)
        if self.accepted_filters == _accepted.CHECK:
            self.checked = self.pushed_filters
        if self.accepted_filters == _accepted.REEVALUATE:
            return filters
        return [f for f in filters if id(f) not in accepted]

    def _create_reader(self, native, handles: ExitStack) -> int:
        """A native reader of the schema, closed (with its source) by `handles`."""
        source, _ = handles.enter_context(native.source(self.options))
        schema = handles.enter_context(
            native.exported_schema(_schema_from_bytes(self.arrow_schema))
        )
        return handles.enter_context(
            native.handle("create_reader", "close_reader", source, ctypes.byref(schema))
        )

    def _replay_filters(self, native, reader: int) -> None:
        """Offers the filters of pushFilters again, to the reader that plans: Spark has already
        dropped the accepted ones from its plan, so the library must answer as it did."""
        if self.filter_message is None or self.filter_answers is None:
            return
        answers = native.push_filters(reader, self.filter_message, len(self.filter_answers))
        if answers != self.filter_answers:
            raise NativeDataSourceError(
                self.library.name,
                "push_filters",
                f"INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE: answered "
                f"{list(self.filter_answers)} and then {list(answers)} for the same offer to a "
                f"new reader of the same schema and options; answer from the reader's schema, "
                f"options and the offer alone (rule 32: a replayed pushdown gets the same "
                f"answer; see {RULES_URL}#rule-32)",
            )

    @_redacted
    def partitions(self) -> List[InputPartition]:
        native = self.library.load()
        with ExitStack() as handles:
            reader = self._create_reader(native, handles)
            self._replay_filters(native, reader)
            parts = native.collect("partitions", reader)
            state = None
            if native.has("serialize_reader"):
                state = native.collect_one("serialize_reader", reader)
        return [NativePartition(i, state, data) for i, data in enumerate(parts)]

    def read(self, partition: InputPartition) -> Iterator:
        return _read(self.library, self.options, self.schema, partition, self.checked)


def _encode_offset(data: bytes) -> dict:
    # Offsets are opaque bytes; Spark stores them in the checkpoint as JSON.
    return {"native_offset": base64.b64encode(data).decode("ascii")}


def _decode_offset(offset: dict) -> bytes:
    return base64.b64decode(offset["native_offset"])


class NativeStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """A micro-batch stream. Its offset methods run in one long-lived Python worker per query,
    which keeps the native stream reader open until `stop`; `read` runs on executors on a
    pickled copy, which carries no native handle."""

    def __init__(
        self, library: _Library, options: Dict[str, str], schema: StructType, arrow_schema: bytes
    ) -> None:
        self.library = library
        self.options = options
        self.schema = schema
        self.arrow_schema = arrow_schema
        self._handles = None
        self._last: Optional[bytes] = None
        self._assumed_start: Optional[bytes] = None
        self._available_now = False
        self._target: Optional[bytes] = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_handles"] = None
        return state

    @_redacted
    def _reader(self):
        """The native library and stream reader, created on first use and kept until `stop`."""
        if self._handles is None:
            native = self.library.load()
            # Closes the stream reader, then the source, in `stop` (or at once on failure).
            handles = ExitStack()
            try:
                source, capabilities = handles.enter_context(native.source(self.options))
                if not capabilities & _abi.SPARK_DS_MICRO_BATCH_READ:
                    raise NativeDataSourceError(
                        self.library.name,
                        "create",
                        "the source does not declare "
                        "SPARK_DS_MICRO_BATCH_READ: it cannot be read as a stream",
                    )
                with native.exported_schema(_schema_from_bytes(self.arrow_schema)) as schema:
                    reader = handles.enter_context(
                        native.handle(
                            "create_stream_reader",
                            "close_stream_reader",
                            source,
                            ctypes.byref(schema),
                        )
                    )
            except BaseException:
                handles.close()
                raise
            self._handles = (native, handles, reader)
        return self._handles[0], self._handles[2]

    @_redacted
    def initialOffset(self) -> dict:
        native, reader = self._reader()
        self._last = native.collect_one("initial_offset", reader)
        return _encode_offset(self._last)

    @_redacted
    def latestOffset(self, start: Optional[dict] = None, limit=None) -> dict:
        # pyspark 4.0 and 4.1 call latestOffset() without `start`: the bridge then uses the last
        # offset it returned. `limit` is not passed on: version 1 has no admission control.
        native, reader = self._reader()
        if start is not None:
            start_bytes = _decode_offset(start)
        elif self._last is not None:
            start_bytes = self._last
        else:
            start_bytes = native.collect_one("initial_offset", reader)
        # Without `start` the bridge assumes where Spark resumes; partitions() checks it.
        self._assumed_start = None if start is not None else start_bytes
        if self._available_now and self._target is not None:
            latest = self._target
        else:
            latest = native.collect_one("latest_offset", reader, start_bytes, len(start_bytes))
            if self._available_now:
                self._target = latest
        self._last = latest
        return _encode_offset(latest)

    def prepareForTriggerAvailableNow(self) -> None:
        # The target is what latest_offset returns at the first micro-batch; the stream then
        # stops there.
        self._available_now = True
        self._target = None

    @_redacted
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        native, reader = self._reader()
        first, last = _decode_offset(start), _decode_offset(end)
        assumed = self._assumed_start
        if assumed is not None and last == self._last and first != assumed:
            # A stream resumed from a checkpoint: Spark starts at its last committed offset,
            # which pyspark before 4.2 never gave latestOffset, so `end` was planned from another.
            raise NativeDataSourceError(
                self.library.name,
                "latest_offset",
                "pyspark before 4.2 does not pass a stream's start offset to latestOffset, so "
                "the bridge cannot resume a stream from its checkpoint: on Spark 4.0 and 4.1, "
                "start the query with a new checkpoint location, or use Spark 4.2 or later, or "
                "the JVM plugin",
            )
        parts = native.collect("stream_partitions", reader, first, len(first), last, len(last))
        state = None
        if native.has("serialize_stream_reader"):
            state = native.collect_one("serialize_stream_reader", reader)
        return [NativePartition(i, state, data) for i, data in enumerate(parts)]

    def read(self, partition: InputPartition) -> Iterator:
        return _read(self.library, self.options, self.schema, partition)

    @_redacted
    def commit(self, end: dict) -> None:
        native, reader = self._reader()
        if native.has("commit_offset"):
            data = _decode_offset(end)
            native.call("commit_offset", reader, data, len(data))

    def stop(self) -> None:
        if self._handles is not None:
            _native, handles, _reader = self._handles
            self._handles = None
            handles.close()


# -- writes -------------------------------------------------------------------------------------


@dataclass
class NativeCommitMessage(WriterCommitMessage):
    """The commit message of a task: the bytes that commit_data_writer returned."""

    data: bytes
    partition_id: int
    task_id: int


@dataclass(frozen=True)
class _WriteSpec:
    """Everything needed to create the same native writer again in another process: pyspark
    calls `commit` and `abort` in a fresh Python worker, where the bridge creates the writer
    again from the same options, schema, mode and query ID."""

    library: _Library
    # Never in the spec's repr: it holds the values of secret options.
    options: Dict[str, str] = field(repr=False)
    arrow_schema: bytes = field(repr=False)
    query_id: str
    mode: int
    streaming: bool


def _writer_info(spec: _WriteSpec, schema: _abi.ArrowSchema):
    query_id = spec.query_id.encode("utf-8")
    info = _abi.SparkDsWriteInfo(
        size=ctypes.sizeof(_abi.SparkDsWriteInfo),
        schema=ctypes.pointer(schema),
        query_id=query_id,
        mode=spec.mode,
        streaming=1 if spec.streaming else 0,
    )
    return info, query_id


def _with_writer(spec: _WriteSpec, action):
    """Creates the source and the native writer of `spec`, runs action(native, writer), and
    closes them."""
    with spec.library.redacting(spec.options):
        return _create_writer_and_run(spec, action)


def _create_writer_and_run(spec: _WriteSpec, action):
    native = spec.library.load()
    with native.source(spec.options) as (source, capabilities):
        _check_write_capabilities(spec, capabilities)
        with native.exported_schema(_schema_from_bytes(spec.arrow_schema)) as schema:
            info, _query_id = _writer_info(spec, schema)
            with native.handle(
                "create_writer", "close_writer", source, ctypes.byref(info)
            ) as writer:
                return action(native, writer)


def _check_write_capabilities(spec: _WriteSpec, capabilities: int) -> None:
    name = spec.library.name
    needed = _abi.SPARK_DS_STREAMING_WRITE if spec.streaming else _abi.SPARK_DS_BATCH_WRITE
    if not capabilities & needed:
        kind = "streaming writes" if spec.streaming else "batch writes"
        raise NativeDataSourceError(
            name,
            "create",
            f"the source does not declare {_abi.CAPABILITY_NAMES[needed]}: it "
            f"does not support {kind}",
        )
    if spec.mode == _abi.SPARK_DS_WRITE_TRUNCATE and not capabilities & _abi.SPARK_DS_TRUNCATE:
        what = "the output mode complete" if spec.streaming else 'mode("overwrite")'
        raise NativeDataSourceError(
            name,
            "create",
            f"the source does not declare SPARK_DS_TRUNCATE, so it does not "
            f"support {what}: append instead",
        )


def _prepare_write(spec: _WriteSpec) -> Optional[bytes]:
    """On the driver side: checks that the writer can be created, and returns its state."""

    def serialize(native, writer):
        if native.has("serialize_writer"):
            return native.collect_one("serialize_writer", writer)
        return None

    return _with_writer(spec, serialize)


# Rows per batch when the bridge builds batches from Rows itself.
_ROWS_PER_BATCH = 8192


def _batches(items: Iterator, target) -> Iterator:
    """The pyarrow RecordBatches of `items`: Arrow writers receive batches, but the stream
    writers of pyspark 4.0 receive Rows, which are gathered into batches of `target`."""
    import pyarrow as pa

    rows = []
    for item in items:
        if isinstance(item, pa.RecordBatch):
            yield item
            continue
        rows.append(item.asDict(recursive=True))
        if len(rows) == _ROWS_PER_BATCH:
            yield pa.RecordBatch.from_pylist(rows, schema=target)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=target)


def _write_task(
    spec: _WriteSpec, state: Optional[bytes], epoch_id: int, batches: Iterator
) -> NativeCommitMessage:
    """Writes the batches of one task on an executor: create_data_writer, write per batch,
    commit_data_writer, or abort_data_writer if anything fails."""
    with spec.library.redacting(spec.options):
        return _write_batches(spec, state, epoch_id, batches)


def _write_batches(
    spec: _WriteSpec, state: Optional[bytes], epoch_id: int, batches: Iterator
) -> NativeCommitMessage:
    native = spec.library.load()
    target = _schema_from_bytes(spec.arrow_schema)
    task = TaskContext()
    data_writer = ctypes.c_void_p()
    native.call(
        "create_data_writer",
        ctypes.byref(task.struct),
        state,
        len(state) if state is not None else 0,
        epoch_id,
        ctypes.byref(data_writer),
    )
    native.check_handle("create_data_writer", data_writer.value)
    try:
        with native.exported_schema(target) as schema:
            for batch in _batches(batches, target):
                native.write(
                    data_writer.value, schema, _conform(batch, target, spec.library, "write")
                )
        message = native.collect_one("commit_data_writer", data_writer.value)
    except BaseException:
        task.interrupted = True
        try:
            native.call("abort_data_writer", data_writer.value)
        except NativeDataSourceError as abort_error:
            import logging

            # Logged, not raised: the library may repeat a secret option in its message.
            secrets = secret_values(spec.options, spec.library.redaction)
            logging.getLogger("spark_native_bridge").warning("%s", scrub(str(abort_error), secrets))
        raise
    finally:
        native.close("close_data_writer", data_writer.value)
    return NativeCommitMessage(message, task.struct.partition_id, task.struct.task_id)


def _message_bytes(messages: Sequence[Optional[WriterCommitMessage]]) -> List[Optional[bytes]]:
    return [m.data if isinstance(m, NativeCommitMessage) else None for m in messages]


class NativeWriter(DataSourceArrowWriter):
    """A batch write: `write` per task on executors, `commit` or `abort` once."""

    def __init__(self, spec: _WriteSpec, state: Optional[bytes]) -> None:
        self.spec = spec
        self.state = state

    def write(self, iterator: Iterator) -> WriterCommitMessage:
        return _write_task(self.spec, self.state, _abi.SPARK_DS_NO_EPOCH, iterator)

    def commit(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        data = _message_bytes(messages)
        _with_writer(
            self.spec,
            lambda native, writer: native.commit_messages(
                "commit", writer, _abi.SPARK_DS_NO_EPOCH, data
            ),
        )

    def abort(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        data = _message_bytes(messages)
        _with_writer(
            self.spec,
            lambda native, writer: native.commit_messages(
                "abort", writer, _abi.SPARK_DS_NO_EPOCH, data
            ),
        )


class NativeStreamWriter(DataSourceStreamArrowWriter):
    """A streaming write: `write` per task of each micro-batch, `commit(messages, batchId)`."""

    def __init__(self, spec: _WriteSpec, state: Optional[bytes]) -> None:
        self.spec = spec
        self.state = state

    def write(self, iterator: Iterator) -> WriterCommitMessage:
        batch_id = TaskContext().local_property(_BATCH_ID_PROPERTY)
        if batch_id is None:
            raise NativeDataSourceError(
                self.spec.library.name,
                "create_data_writer",
                "the task does not know its "
                f"micro-batch: the local property {_BATCH_ID_PROPERTY} is not set",
            )
        return _write_task(self.spec, self.state, int(batch_id), iterator)

    def commit(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        data = _message_bytes(messages)
        _with_writer(
            self.spec,
            lambda native, writer: native.commit_messages("commit", writer, batchId, data),
        )

    def abort(self, messages: List[Optional[WriterCommitMessage]], batchId: int) -> None:
        data = _message_bytes(messages)
        _with_writer(
            self.spec, lambda native, writer: native.commit_messages("abort", writer, batchId, data)
        )


# -- the data source ----------------------------------------------------------------------------


class NativeDataSource(DataSource):
    """The base of the classes that :func:`spark_native_bridge.register` creates, one per native
    data source; each sets `_library`."""

    _library: _Library

    @classmethod
    def name(cls) -> str:
        return cls._library.name

    def _options(self) -> Dict[str, str]:
        """The options that reach the library: all but the bridge's own."""
        return self._split_options()[0]

    def _split_options(self) -> Tuple[Dict[str, str], str]:
        """The library's options, and the bridge's option ``acceptedFilters``."""
        options = {str(key): str(value) for key, value in self.options.items()}
        return _accepted.split(options)

    def schema(self) -> StructType:
        with self._library.redacting(self._options()):
            return self._native_schema_of_source()

    def _native_schema_of_source(self) -> StructType:
        native = self._library.load()
        with native.source(self._options()) as (source, _capabilities):
            if not native.has("schema"):
                raise NativeDataSourceError(
                    self._library.name,
                    "schema",
                    "the library has no schema function: give the "
                    'schema of the query, such as .schema("id long")',
                )
            arrow_schema = native.schema(source)
        # Kept, and pickled with the data source, so that the reader gets the library's own
        # schema rather than a round trip through Spark's types.
        self._native_schema = _schema_to_bytes(arrow_schema)
        return _from_arrow_schema(arrow_schema)

    def _arrow_schema_to_read(self, schema: StructType) -> bytes:
        native_schema = getattr(self, "_native_schema", None)
        if (
            native_schema is not None
            and _from_arrow_schema(_schema_from_bytes(native_schema)) == schema
        ):
            return native_schema
        return _schema_to_bytes(_to_arrow_schema(schema))

    def reader(self, schema: StructType) -> DataSourceReader:
        options, accepted_filters = self._split_options()
        return NativeReader(
            self._library, options, schema, self._arrow_schema_to_read(schema), accepted_filters
        )

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return NativeStreamReader(
            self._library, self._options(), schema, self._arrow_schema_to_read(schema)
        )

    def _write_spec(self, schema: StructType, overwrite: bool, streaming: bool) -> _WriteSpec:
        arrow_schema = _schema_to_bytes(_to_arrow_schema(schema))
        options = self._options()
        if streaming:
            # pyspark creates the stream writer again for each commit, in a fresh process, and
            # gives it no query ID: derive a stable one from what identifies the sink, so that it
            # is the same in every process and across restarts. The value of a secret option
            # is left out (its key stays), by Spark's rule for plans, a URL whole: the ID reaches
            # the library, which may log or store it, and a hash of a password is a way to guess it.
            patterns = self._library.redaction
            shown = sorted(
                (k, REDACTED if redacted_whole(k, v, patterns) else v) for k, v in options.items()
            )
            identity = json.dumps([self._library.name, shown, schema.json()])
            query_id = str(uuid.uuid5(uuid.NAMESPACE_URL, "spark-native-bridge:" + identity))
        else:
            query_id = str(uuid.uuid4())
        mode = _abi.SPARK_DS_WRITE_TRUNCATE if overwrite else _abi.SPARK_DS_WRITE_APPEND
        return _WriteSpec(self._library, options, arrow_schema, query_id, mode, streaming)

    def writer(self, schema: StructType, overwrite: bool) -> NativeWriter:
        spec = self._write_spec(schema, overwrite, streaming=False)
        return NativeWriter(spec, _prepare_write(spec))

    def streamWriter(self, schema: StructType, overwrite: bool) -> NativeStreamWriter:
        spec = self._write_spec(schema, overwrite, streaming=True)
        return NativeStreamWriter(spec, _prepare_write(spec))
