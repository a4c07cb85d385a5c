"""ctypes mirrors of ``spark_datasource.h``, version 1, and of the Arrow C data interface.

Each class mirrors the struct of the same name in the header, field for field, in order: see the
header's comments for what each field means and who owns what. Function pointers are declared as
``c_void_p`` in the table and turned into typed callables by :mod:`._native`, which only reads the
functions that fit in the table's ``size``, as Spark does.
"""

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_uint8,
    c_uint64,
    c_void_p,
)

SPARK_DS_ABI_VERSION = 1

SPARK_DS_BATCH_READ = 1 << 0
SPARK_DS_MICRO_BATCH_READ = 1 << 1
SPARK_DS_BATCH_WRITE = 1 << 2
SPARK_DS_STREAMING_WRITE = 1 << 3
SPARK_DS_TRUNCATE = 1 << 4

SPARK_DS_WRITE_APPEND = 0
SPARK_DS_WRITE_TRUNCATE = 1

SPARK_DS_NO_EPOCH = -1

SPARK_DS_LOG_ERROR = 1
SPARK_DS_LOG_WARN = 2
SPARK_DS_LOG_INFO = 3
SPARK_DS_LOG_DEBUG = 4
SPARK_DS_LOG_TRACE = 5

CAPABILITY_NAMES = {
    SPARK_DS_BATCH_READ: "SPARK_DS_BATCH_READ",
    SPARK_DS_MICRO_BATCH_READ: "SPARK_DS_MICRO_BATCH_READ",
    SPARK_DS_BATCH_WRITE: "SPARK_DS_BATCH_WRITE",
    SPARK_DS_STREAMING_WRITE: "SPARK_DS_STREAMING_WRITE",
    SPARK_DS_TRUNCATE: "SPARK_DS_TRUNCATE",
}


class ArrowSchema(Structure):
    _fields_ = [
        ("format", c_char_p),
        ("name", c_char_p),
        ("metadata", c_char_p),
        ("flags", c_int64),
        ("n_children", c_int64),
        ("children", c_void_p),
        ("dictionary", c_void_p),
        ("release", c_void_p),
        ("private_data", c_void_p),
    ]


class ArrowArray(Structure):
    _fields_ = [
        ("length", c_int64),
        ("null_count", c_int64),
        ("offset", c_int64),
        ("n_buffers", c_int64),
        ("n_children", c_int64),
        ("buffers", c_void_p),
        ("children", c_void_p),
        ("dictionary", c_void_p),
        ("release", c_void_p),
        ("private_data", c_void_p),
    ]


class ArrowArrayStream(Structure):
    _fields_ = [
        ("get_schema", c_void_p),
        ("get_next", c_void_p),
        ("get_last_error", c_void_p),
        ("release", c_void_p),
        ("private_data", c_void_p),
    ]


# The release callbacks of the Arrow structs, to release a struct that the bridge still owns.
RELEASE_SCHEMA = CFUNCTYPE(None, POINTER(ArrowSchema))
RELEASE_ARRAY = CFUNCTYPE(None, POINTER(ArrowArray))
RELEASE_STREAM = CFUNCTYPE(None, POINTER(ArrowArrayStream))

# void (*SparkDsSink)(void* sink, const uint8_t* data, int64_t length)
SparkDsSink = CFUNCTYPE(None, c_void_p, POINTER(c_uint8), c_int64)

# void (*log)(void* log_context, int32_t level, const char* message)
LogFunction = CFUNCTYPE(None, c_void_p, c_int32, c_char_p)


class SparkDsHost(Structure):
    _fields_ = [
        ("size", c_int64),
        ("abi_version", c_int32),
        ("spark_version", c_char_p),
        ("log", LogFunction),
        ("log_context", c_void_p),
    ]


class SparkDsCreateInfo(Structure):
    _fields_ = [
        ("size", c_int64),
        ("name", c_char_p),
        ("option_keys", POINTER(c_char_p)),
        ("option_values", POINTER(c_char_p)),
        ("num_options", c_int64),
    ]


class SparkDsTaskContext(Structure):
    pass


# int (*is_interrupted)(const SparkDsTaskContext* task)
IsInterrupted = CFUNCTYPE(c_int, POINTER(SparkDsTaskContext))

SparkDsTaskContext._fields_ = [
    ("size", c_int64),
    ("task_id", c_int64),
    ("is_interrupted", IsInterrupted),
    ("host_data", c_void_p),
    ("stage_id", c_int32),
    ("partition_id", c_int32),
    ("attempt_number", c_int32),
]


class SparkDsWriteInfo(Structure):
    _fields_ = [
        ("size", c_int64),
        ("schema", POINTER(ArrowSchema)),
        ("query_id", c_char_p),
        ("mode", c_int32),
        ("streaming", c_int32),
    ]


# The table, in the order of the header. Every function is a c_void_p here; FUNCTION_TYPES gives
# the prototype of each.
LIBRARY_FUNCTIONS = [
    "last_error",
    "create",
    "schema",
    "create_reader",
    "create_stream_reader",
    "create_writer",
    "close",
    "push_limit",
    "prune_columns",
    "partitions",
    "serialize_reader",
    "close_reader",
    "initial_offset",
    "latest_offset",
    "stream_partitions",
    "serialize_stream_reader",
    "commit_offset",
    "close_stream_reader",
    "read",
    "serialize_writer",
    "commit",
    "abort",
    "close_writer",
    "create_data_writer",
    "write",
    "commit_data_writer",
    "abort_data_writer",
    "close_data_writer",
]


class SparkDsLibrary(Structure):
    _fields_ = [("size", c_int64), ("abi_version", c_int32)] + [
        (name, c_void_p) for name in LIBRARY_FUNCTIONS
    ]


# Byte arrays passed in are borrowed `const uint8_t*`: c_char_p accepts bytes and None (NULL).
_BYTES = c_char_p
_HANDLE = c_void_p
_CLOSE = CFUNCTYPE(None, _HANDLE)
_SERIALIZE = CFUNCTYPE(c_int, _HANDLE, SparkDsSink, c_void_p)

FUNCTION_TYPES = {
    "last_error": CFUNCTYPE(c_char_p),
    "create": CFUNCTYPE(c_int, POINTER(SparkDsCreateInfo), POINTER(c_uint64), POINTER(_HANDLE)),
    "schema": CFUNCTYPE(c_int, _HANDLE, POINTER(ArrowSchema)),
    "create_reader": CFUNCTYPE(c_int, _HANDLE, POINTER(ArrowSchema), POINTER(_HANDLE)),
    "create_stream_reader": CFUNCTYPE(c_int, _HANDLE, POINTER(ArrowSchema), POINTER(_HANDLE)),
    "create_writer": CFUNCTYPE(c_int, _HANDLE, POINTER(SparkDsWriteInfo), POINTER(_HANDLE)),
    "close": _CLOSE,
    "push_limit": CFUNCTYPE(c_int, _HANDLE, c_int64, POINTER(c_int)),
    "prune_columns": CFUNCTYPE(c_int, _HANDLE, POINTER(ArrowSchema)),
    "partitions": _SERIALIZE,
    "serialize_reader": _SERIALIZE,
    "close_reader": _CLOSE,
    "initial_offset": _SERIALIZE,
    "latest_offset": CFUNCTYPE(c_int, _HANDLE, _BYTES, c_int64, SparkDsSink, c_void_p),
    "stream_partitions": CFUNCTYPE(
        c_int, _HANDLE, _BYTES, c_int64, _BYTES, c_int64, SparkDsSink, c_void_p
    ),
    "serialize_stream_reader": _SERIALIZE,
    "commit_offset": CFUNCTYPE(c_int, _HANDLE, _BYTES, c_int64),
    "close_stream_reader": _CLOSE,
    "read": CFUNCTYPE(
        c_int,
        POINTER(SparkDsTaskContext),
        _BYTES,
        c_int64,
        _BYTES,
        c_int64,
        POINTER(ArrowArrayStream),
    ),
    "serialize_writer": _SERIALIZE,
    "commit": CFUNCTYPE(c_int, _HANDLE, c_int64, POINTER(_BYTES), POINTER(c_int64), c_int64),
    "abort": CFUNCTYPE(c_int, _HANDLE, c_int64, POINTER(_BYTES), POINTER(c_int64), c_int64),
    "close_writer": _CLOSE,
    "create_data_writer": CFUNCTYPE(
        c_int, POINTER(SparkDsTaskContext), _BYTES, c_int64, c_int64, POINTER(_HANDLE)
    ),
    "write": CFUNCTYPE(c_int, _HANDLE, POINTER(ArrowSchema), POINTER(ArrowArray)),
    "commit_data_writer": _SERIALIZE,
    "abort_data_writer": CFUNCTYPE(c_int, _HANDLE),
    "close_data_writer": _CLOSE,
}

# What each capability requires (the table of the header); the rest of its group is optional.
REQUIRED_FUNCTIONS = {
    SPARK_DS_BATCH_READ: ["create_reader", "partitions", "read", "close_reader"],
    SPARK_DS_MICRO_BATCH_READ: [
        "create_stream_reader",
        "initial_offset",
        "latest_offset",
        "stream_partitions",
        "read",
        "close_stream_reader",
    ],
    SPARK_DS_BATCH_WRITE: [
        "create_writer",
        "commit",
        "abort",
        "close_writer",
        "create_data_writer",
        "write",
        "commit_data_writer",
        "abort_data_writer",
        "close_data_writer",
    ],
}
REQUIRED_FUNCTIONS[SPARK_DS_STREAMING_WRITE] = REQUIRED_FUNCTIONS[SPARK_DS_BATCH_WRITE]

# The table must reach at least `read`, the last function of the readers.
MINIMUM_TABLE_SIZE = SparkDsLibrary.read.offset + ctypes.sizeof(c_void_p)


# -- spark_datasource_filters.h, version 1 of the extension ----------------------------------------

SPARK_DS_FILTERS_VERSION = 1


class SparkDsFilterTable(Structure):
    _fields_ = [("size", c_int64), ("version", c_int32), ("push_filters", c_void_p)]


# int spark_ds_filters_init(const SparkDsHost* host, const SparkDsFilterTable** table)
FiltersInit = CFUNCTYPE(c_int, POINTER(SparkDsHost), POINTER(c_void_p))

# int (*push_filters)(void* reader, const uint8_t* filters, int64_t length, SparkDsSink accepted,
#                     void* sink)
PushFilters = CFUNCTYPE(c_int, _HANDLE, _BYTES, c_int64, SparkDsSink, c_void_p)
