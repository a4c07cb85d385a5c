/*
 * spark_datasource.h: the C interface of Apache Spark native data sources, version 1.
 *
 * A native data source is a shared library that exports one function, spark_ds_init, which
 * returns a table of function pointers, SparkDsLibrary. Data crosses the interface only as Arrow
 * C data interface structs (ArrowSchema, ArrowArray, ArrowArrayStream); everything else that a
 * library defines (partitions, serialized reader and writer state, commit messages, streaming
 * offsets) crosses as opaque byte arrays, returned to the host through a SparkDsSink.
 *
 * This file is written from the "Native Data Sources" page of the Spark SQL guide. Where that
 * page fixes a fact, this header follows it to the letter; where it is silent, the decision is
 * stated in the comment of the item it concerns and in the ABI reference of the book.
 *
 * Conventions that hold for every function of the table:
 *
 * - Errors. A function that returns int returns 0 on success. Any other value is a failure:
 *   the host then calls last_error() on the same thread, before any other call into the
 *   library, and reports the message as NATIVE_DATA_SOURCE_ERROR. On failure the library leaves
 *   its out-parameters untouched (or released, for Arrow structs).
 * - No C++ exception and no Rust panic may cross the interface: catch them in every function
 *   and in every callback of an exported Arrow struct.
 * - Handles. Each handle that a create function returns is released exactly once, by the close
 *   function of its kind. Close functions cannot fail and may run after the query has ended, so
 *   work that can fail, such as flushing data, belongs in commit.
 * - Byte arrays. A library returns a byte array by calling the SparkDsSink it is given, during
 *   the call and on the calling thread; the host copies the bytes before the sink returns. Byte
 *   arrays that the host passes in are borrowed: valid only during the call.
 * - Strings are NUL-terminated UTF-8 and borrowed for the duration of the call.
 * - Arrow structs follow the ownership rules of the Arrow C data interface: a struct is
 *   "moved" when the receiver becomes responsible for calling its release callback, and
 *   "borrowed" when the caller keeps that duty and the receiver may only read it during the
 *   call. Each function says which.
 * - Arrays that a library exports have an offset of 0 at every level, a top-level struct with no
 *   nulls, values that agree with the nullability of the schema, and buffers as long as the
 *   array needs: the C data interface does not carry buffer sizes, so Spark cannot check them.
 * - Driver and executor. Functions marked "driver" run in the Spark driver; "executor" in an
 *   executor, which shares no memory with the driver: it only receives byte arrays.
 * - Types. Schemas use only the Arrow types of version 1, which map to Spark SQL types:
 *     boolean "b" (boolean), int8 "c" (tinyint), int16 "s" (smallint), int32 "i" (int),
 *     int64 "l" (bigint), float32 "f" (float), float64 "g" (double),
 *     decimal128 "d:P,S" (decimal(P,S)), utf8 "u" (string), binary "z" (binary),
 *     date32 "tdD" (date), timestamp[us, UTC] "tsu:UTC" (timestamp),
 *     timestamp[us] "tsu:" (timestamp_ntz), null "n" (void),
 *     list "+l" (array), struct "+s" (struct), map "+m" (map, children named entries, key and
 *     value).
 *   No dictionary, large or view type. Spark fails an operation whose schema has another type,
 *   such as an interval, before it calls the library.
 */
#ifndef SPARK_DATASOURCE_H
#define SPARK_DATASOURCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the interface that this header declares. */
#define SPARK_DS_ABI_VERSION 1

/* Marks spark_ds_init for export from the shared library. */
#if defined(_WIN32) || defined(__CYGWIN__)
#define SPARK_DS_EXPORT __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define SPARK_DS_EXPORT __attribute__((visibility("default")))
#else
#define SPARK_DS_EXPORT
#endif

/* ---------------------------------------------------------------------------------------------
 * The Arrow C data interface and C stream interface, exactly as the Arrow project specifies
 * them, behind the standard guards so that they combine with Arrow's own headers.
 * ------------------------------------------------------------------------------------------- */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /* Array type description */
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  /* Release callback */
  void (*release)(struct ArrowSchema*);
  /* Opaque producer-specific data */
  void* private_data;
};

struct ArrowArray {
  /* Array data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  /* Release callback */
  void (*release)(struct ArrowArray*);
  /* Opaque producer-specific data */
  void* private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  /* Callbacks providing stream functionality */
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);

  /* Release callback */
  void (*release)(struct ArrowArrayStream*);

  /* Opaque producer-specific data */
  void* private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ---------------------------------------------------------------------------------------------
 * Constants
 * ------------------------------------------------------------------------------------------- */

/* Capabilities, returned by create. They mirror TableCapability of Data Source V2. A data
 * source must not declare a capability whose required functions are NULL. */
#define SPARK_DS_BATCH_READ ((uint64_t)1 << 0)
#define SPARK_DS_MICRO_BATCH_READ ((uint64_t)1 << 1)
#define SPARK_DS_BATCH_WRITE ((uint64_t)1 << 2)
#define SPARK_DS_STREAMING_WRITE ((uint64_t)1 << 3)
/* The writer supports SPARK_DS_WRITE_TRUNCATE: the save mode overwrite of a batch write, and
 * the output mode complete of a streaming write. Requires a write capability. */
#define SPARK_DS_TRUNCATE ((uint64_t)1 << 4)

/* Write modes, in SparkDsWriteInfo.mode. */
#define SPARK_DS_WRITE_APPEND 0
/* Replace all the data of the source: in a batch write, atomically in commit; in a streaming
 * write, with the result of each epoch. Only given when the source declares SPARK_DS_TRUNCATE. */
#define SPARK_DS_WRITE_TRUNCATE 1

/* The epoch_id of the commit, abort and create_data_writer calls of a batch write, which has
 * no epochs. Streaming writes pass the ID of the micro-batch, from 0. */
#define SPARK_DS_NO_EPOCH ((int64_t)-1)

/* Log levels of SparkDsHost.log, which map to the levels of Spark's log. */
#define SPARK_DS_LOG_ERROR 1
#define SPARK_DS_LOG_WARN 2
#define SPARK_DS_LOG_INFO 3
#define SPARK_DS_LOG_DEBUG 4
#define SPARK_DS_LOG_TRACE 5

/* ---------------------------------------------------------------------------------------------
 * Structs that the host passes to the library. Each starts with its size in bytes, so that it
 * can grow by appending fields: a library built against an older header reads only the fields
 * it knows, and a library must not read past `size`.
 * ------------------------------------------------------------------------------------------- */

/* Receives a byte array that the library returns to the host: a partition, a serialized state,
 * a commit message or an offset. The host copies `length` bytes from `data` before it returns;
 * `data` may be NULL when `length` is 0.
 * `sink` is the opaque pointer that the host passed along with the callback. Call it only
 * during the function that received it, on the calling thread. */
typedef void (*SparkDsSink)(void* sink, const uint8_t* data, int64_t length);

/* Given to spark_ds_init. Valid, with every string it points to, until the library is unloaded:
 * a library may keep the pointer. */
typedef struct SparkDsHost {
  /* sizeof(SparkDsHost) of the host that built it. */
  int64_t size;
  /* The newest version of the interface that the host supports (1 or more). */
  int32_t abi_version;
  /* The version of Spark, such as "4.4.0". */
  const char* spark_version;
  /* Writes `message` (UTF-8, borrowed) to Spark's log at `level` (SPARK_DS_LOG_*). Thread-safe:
   * it can be called from any thread, at any time while the library is loaded. */
  void (*log)(void* log_context, int32_t level, const char* message);
  /* The first argument of log. */
  void* log_context;
} SparkDsHost;

/* Given to create: the name of the data source and the options of the query
 * (`.option(key, value)`), both borrowed for the duration of the call. Spark matches option keys
 * without regard to case, and passes them as the user wrote them. Besides the user's options,
 * Spark passes `path` for `load(path)` and `save(path)`, and `checkpointLocation` to a
 * streaming write: a library that refuses unknown options accepts these. */
typedef struct SparkDsCreateInfo {
  int64_t size;
  /* The data source name that the query used, in lower case. */
  const char* name;
  /* num_options keys and values: option_keys[i] is the key of option_values[i]. */
  const char* const* option_keys;
  const char* const* option_values;
  int64_t num_options;
} SparkDsCreateInfo;

/* The task that runs a read or a data writer, on an executor. Borrowed: valid during the call
 * that receives it, and, for read, until the release of the stream that it returns, for
 * create_data_writer until close_data_writer, so that the stream's get_next and the writes may
 * call is_interrupted. */
typedef struct SparkDsTaskContext {
  int64_t size;
  /* The ID of the task attempt, unique within the Spark application (taskAttemptId). */
  int64_t task_id;
  /* Returns non-zero once the task has been killed, for example because its query was
   * canceled. Spark cannot interrupt native code: check it between batches and during long
   * waits, and then end the stream or fail the write. Thread-safe. */
  int (*is_interrupted)(const struct SparkDsTaskContext* task);
  /* The host's data for is_interrupted. Not for the library. */
  void* host_data;
  /* The stage of the task. */
  int32_t stage_id;
  /* The index of the partition that the task reads or writes, from 0. */
  int32_t partition_id;
  /* The attempt number of the task, 0 for the first attempt: a retried task writes again. */
  int32_t attempt_number;
} SparkDsTaskContext;

/* Given to create_writer, borrowed for the duration of the call. */
typedef struct SparkDsWriteInfo {
  int64_t size;
  /* The schema of the data to write, a struct. Borrowed: copy what you need. */
  struct ArrowSchema* schema;
  /* A unique ID of the write (the query ID for a streaming write, which keeps it across
   * restarts). */
  const char* query_id;
  /* SPARK_DS_WRITE_APPEND or SPARK_DS_WRITE_TRUNCATE. */
  int32_t mode;
  /* Non-zero for a streaming write: commit and abort then run once per epoch. */
  int32_t streaming;
} SparkDsWriteInfo;

/* ---------------------------------------------------------------------------------------------
 * The function table. It starts with its size, and the host only reads the functions that fit
 * in it: a library may declare the table up to the last function it implements. A function
 * that a library does not implement is NULL. The order of the fields is fixed; new functions
 * are appended.
 *
 * Required functions, per capability (the others of each group are optional):
 *   all                       create, close                      (optional: last_error, schema)
 *   SPARK_DS_BATCH_READ       create_reader, partitions, read, close_reader
 *                             (optional: push_limit, prune_columns, serialize_reader)
 *   SPARK_DS_MICRO_BATCH_READ create_stream_reader, initial_offset, latest_offset,
 *                             stream_partitions, read, close_stream_reader
 *                             (optional: serialize_stream_reader, commit_offset)
 *   SPARK_DS_BATCH_WRITE and  create_writer, commit, abort, close_writer, create_data_writer,
 *   SPARK_DS_STREAMING_WRITE  write, commit_data_writer, abort_data_writer, close_data_writer
 *                             (optional: serialize_writer)
 * ------------------------------------------------------------------------------------------- */

typedef struct SparkDsLibrary {
  /* sizeof the table as the library declares it (at least up to `read`). */
  int64_t size;
  /* The version of the interface that the table implements: SPARK_DS_ABI_VERSION. */
  int32_t abi_version;

  /* Returns the message of the last failure on the calling thread: UTF-8, never NULL once a
   * function has failed, owned by the library and valid until the next call into the library
   * on the same thread. Optional: without it, Spark reports failures without a message. */
  const char* (*last_error)(void);

  /* Driver. Creates the data source for a query: `info` gives its name and options. Sets
   * *capabilities to the SPARK_DS_* bits that the source supports, and *source to a handle that
   * close releases. Fails on an invalid option, with a message that names it. */
  int (*create)(const SparkDsCreateInfo* info, uint64_t* capabilities, void** source);

  /* Driver, after create. Writes the schema of the data source, a struct, to `out`, which the
   * host owns afterwards (moved: the host calls its release). Optional: without it, a query
   * must give a schema, such as `.schema("id long")`. */
  int (*schema)(void* source, struct ArrowSchema* out);

  /* Driver, for SPARK_DS_BATCH_READ. Creates a reader of `schema` (borrowed), the schema of
   * the data source or the one the query gave. close_reader releases *reader. */
  int (*create_reader)(void* source, struct ArrowSchema* schema, void** reader);

  /* Driver, for SPARK_DS_MICRO_BATCH_READ. Creates a reader of a stream of micro-batches of
   * `schema` (borrowed). close_stream_reader releases *reader. */
  int (*create_stream_reader)(void* source, struct ArrowSchema* schema, void** reader);

  /* Driver, for SPARK_DS_BATCH_WRITE and SPARK_DS_STREAMING_WRITE. Creates a writer: `info`
   * (borrowed) gives the schema, the mode and whether the write is streaming. close_writer
   * releases *writer. Fails if the source cannot write that schema. */
  int (*create_writer)(void* source, const SparkDsWriteInfo* info, void** writer);

  /* Driver. Releases a source that create returned, once its readers and writers are closed. */
  void (*close)(void* source);

  /* Driver, optional for SPARK_DS_BATCH_READ, before partitions. Offers a LIMIT of the query.
   * The library sets *accepted to 1 if each partition then returns at most `limit` rows, else
   * 0. Spark still applies the limit to the combined rows. */
  int (*push_limit)(void* reader, int64_t limit, int* accepted);

  /* Driver, optional for SPARK_DS_BATCH_READ, before partitions. Gives the columns that the
   * query needs, `required_schema` (borrowed), a struct of a subset of the fields of the
   * reader's schema, in an order of Spark's choice. Once it returns 0, read returns exactly
   * that schema. */
  int (*prune_columns)(void* reader, struct ArrowSchema* required_schema);

  /* Driver, for SPARK_DS_BATCH_READ. Plans the read: calls add(sink, bytes, length) once per
   * partition, in order. Each partition becomes a task that calls read with its bytes. Zero
   * partitions make an empty result. */
  int (*partitions)(void* reader, SparkDsSink add, void* sink);

  /* Driver, optional for SPARK_DS_BATCH_READ, after partitions. Returns, with one call of add,
   * the state that read gets as reader_state. Without it, read gets NULL and 0. */
  int (*serialize_reader)(void* reader, SparkDsSink add, void* sink);

  /* Driver. Releases a reader that create_reader returned. */
  void (*close_reader)(void* reader);

  /* Driver, for SPARK_DS_MICRO_BATCH_READ, when a query starts without a checkpoint. Returns,
   * with one call of add, the offset where the stream starts. Offsets are opaque bytes that
   * Spark stores in the checkpoint of the query. */
  int (*initial_offset)(void* reader, SparkDsSink add, void* sink);

  /* Driver, for SPARK_DS_MICRO_BATCH_READ, before each micro-batch. Returns, with one call of
   * add, the offset up to which data is available now, given `start` (borrowed), the end of the
   * previous micro-batch: returning `start` again means that no new data is available. */
  int (*latest_offset)(void* reader, const uint8_t* start, int64_t start_length, SparkDsSink add,
                       void* sink);

  /* Driver, for SPARK_DS_MICRO_BATCH_READ. Plans the micro-batch that reads the data after
   * `start` up to and including `end` (both borrowed): calls add once per partition. Reading
   * the same range again, for example after a restart, must return the same rows. */
  int (*stream_partitions)(void* reader, const uint8_t* start, int64_t start_length,
                           const uint8_t* end, int64_t end_length, SparkDsSink add, void* sink);

  /* Driver, optional for SPARK_DS_MICRO_BATCH_READ, after stream_partitions. Returns, with one
   * call of add, the state that read gets as reader_state. Without it, read gets NULL and 0. */
  int (*serialize_stream_reader)(void* reader, SparkDsSink add, void* sink);

  /* Driver, optional for SPARK_DS_MICRO_BATCH_READ. Spark has processed all the data up to
   * `end` (borrowed) and will never read it again: the source may discard it. */
  int (*commit_offset)(void* reader, const uint8_t* end, int64_t end_length);

  /* Driver. Releases a reader that create_stream_reader returned. */
  void (*close_stream_reader)(void* reader);

  /* Executor, for SPARK_DS_BATCH_READ and SPARK_DS_MICRO_BATCH_READ. Reads one partition:
   * `reader_state` and `partition` are the bytes that the driver returned (borrowed; NULL and 0
   * for a state that was not serialized). Writes to `out` a stream whose schema is the schema
   * to read (pruned by prune_columns), which the host owns afterwards (moved: the host calls
   * its release, once, possibly from another thread). The stream should produce batches
   * lazily, of bounded size, and check task->is_interrupted between them; `task` stays valid
   * until the stream is released. Each exported array is owned by the host. */
  int (*read)(const SparkDsTaskContext* task, const uint8_t* reader_state,
              int64_t reader_state_length, const uint8_t* partition, int64_t partition_length,
              struct ArrowArrayStream* out);

  /* Driver, optional for the write capabilities, after create_writer. Returns, with one call of
   * add, the state that create_data_writer gets as writer_state. Without it, create_data_writer
   * gets NULL and 0. */
  int (*serialize_writer)(void* writer, SparkDsSink add, void* sink);

  /* Driver, for the write capabilities, once every task of a batch write (epoch_id
   * SPARK_DS_NO_EPOCH), or of an epoch of a streaming write, has committed. Receives the commit
   * messages of the tasks, in partition order (borrowed), and makes their data visible in one
   * step. Only what commit publishes may become visible to readers. A streaming query restarted
   * from its checkpoint can commit its last epoch again: commit of an epoch that is already
   * committed publishes nothing more. */
  int (*commit)(void* writer, int64_t epoch_id, const uint8_t* const* messages,
                const int64_t* message_lengths, int64_t num_messages);

  /* Driver, for the write capabilities, when a write or an epoch fails. Receives the messages
   * of the tasks that committed, in partition order (borrowed); the entry of a task that did
   * not commit is NULL, with length 0. Removes everything the write staged. */
  int (*abort)(void* writer, int64_t epoch_id, const uint8_t* const* messages,
               const int64_t* message_lengths, int64_t num_messages);

  /* Driver. Releases a writer that create_writer returned. */
  void (*close_writer)(void* writer);

  /* Executor, for the write capabilities. Creates the writer of one task attempt:
   * `writer_state` is what serialize_writer returned (borrowed), `epoch_id` the micro-batch of a
   * streaming write or SPARK_DS_NO_EPOCH. close_data_writer releases *data_writer. */
  int (*create_data_writer)(const SparkDsTaskContext* task, const uint8_t* writer_state,
                            int64_t writer_state_length, int64_t epoch_id, void** data_writer);

  /* Executor. Writes one batch: `batch` is moved to the library, whether the call succeeds or
   * fails: the library copies the struct out of `batch` and sets the release of `batch` to
   * NULL, as the C data interface moves a struct, then calls the copy's release when it no
   * longer needs the data (possibly during the call); `schema` describes it and is borrowed.
   * Nothing written may become visible before commit. Spark checks whether the task was killed
   * between two calls; a write that blocks for long checks the task's is_interrupted and uses
   * timeouts. */
  int (*write)(void* data_writer, struct ArrowSchema* schema, struct ArrowArray* batch);

  /* Executor, after the last write of a task that succeeded. Finishes what the task wrote, to a
   * staging place, and returns its commit message with one call of add. */
  int (*commit_data_writer)(void* data_writer, SparkDsSink add, void* sink);

  /* Executor, when a task fails or is killed, instead of commit_data_writer. Removes what the
   * task attempt wrote. */
  int (*abort_data_writer)(void* data_writer);

  /* Executor. Releases a data writer that create_data_writer returned. */
  void (*close_data_writer)(void* data_writer);
} SparkDsLibrary;

/* The one function that a library exports. Spark calls it once, when it loads the library,
 * with `host` (borrowed, valid until the library is unloaded), whose abi_version is the newest
 * version that Spark supports, and the library writes to *library a table of a version that it
 * implements, no newer than host->abi_version. The table is owned by the library and must stay
 * valid until the library is unloaded. Returns 0 on success; on failure Spark reports the
 * library as invalid. */
SPARK_DS_EXPORT int spark_ds_init(const SparkDsHost* host, const SparkDsLibrary** library);

typedef int (*SparkDsInitFunction)(const SparkDsHost* host, const SparkDsLibrary** library);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPARK_DATASOURCE_H */
