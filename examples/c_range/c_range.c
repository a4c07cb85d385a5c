/*
 * c_range: a native data source for Apache Spark in plain C11, with no Arrow library.
 *
 * It reads the numbers [0, end) as a column `id` (int64, not null) and a column `label` (utf8,
 * nullable: null for every id whose remainder by 3 is 2, so that nulls cross the interface), in
 * `num_partitions` partitions, in batches of at most `batch_rows` rows. As a stream, each
 * micro-batch adds `rows_per_batch` rows after the previous one.
 *
 * What it shows, against spark_datasource.h (version 1):
 * - filling ArrowSchema, ArrowArray and ArrowArrayStream by hand, as the Arrow C data interface
 *   allows: every struct has a release callback that frees its private data once, offsets are 0,
 *   null_count is exact, and the validity buffer is NULL only when there are no nulls;
 * - a lazy stream that builds one batch per get_next and checks task->is_interrupted before each;
 * - push_limit and prune_columns on the driver, carried to the executors in the reader state;
 * - offsets of a micro-batch stream that are opaque bytes and repeatable;
 * - filter pushdown, the extension of spark_datasource_filters.h: comparisons and IN on `id`
 *   with integer literals (and AND of those) are accepted, become bounds and a set of ids, and
 *   the partitions read only the ids that can match;
 * - errors reported through a thread-local last_error, with messages that name what was wrong.
 *
 * Byte formats (ours to choose: only this build of the library reads them):
 * - a partition is two little-endian int64, the first id and the end (exclusive);
 * - an offset is one little-endian int64, the number of rows of the stream so far;
 * - the reader state is a version byte, the number of columns, their ids (COLUMN_*), the
 *   nullability of each as one byte, then batch_rows and limit as little-endian int64 (limit -1
 *   when none), then the accepted filter on `id`: its smallest and largest id (int64), a byte 1
 *   when only a set of ids is kept, and then the number of ids and the ids, sorted (int64 each).
 */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark_datasource.h"
#include "spark_datasource_filters.h"

/* POSIX, not C11: errno.h may lack it under a strict standard mode. */
#ifndef ECANCELED
#define ECANCELED 125
#endif

#define DEFAULT_END 10
#define DEFAULT_NUM_PARTITIONS 2
#define DEFAULT_BATCH_ROWS 1024
#define DEFAULT_ROWS_PER_BATCH 5
#define MAX_NUM_PARTITIONS 65536
#define MAX_BATCH_ROWS (1 << 24)

/* The columns of the data source, by id. */
enum { COLUMN_ID = 0, COLUMN_LABEL = 1, NUM_COLUMNS = 2 };

static const char* const COLUMN_NAMES[NUM_COLUMNS] = {"id", "label"};
static const char* const COLUMN_FORMATS[NUM_COLUMNS] = {"l", "u"};

#define STATE_VERSION 2
#define ERROR_CAPACITY 1024

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/* The message of the last failure on this thread: the header requires it to stay valid until the
 * next call on the same thread, which a thread-local buffer gives without allocation. */
static _Thread_local char last_error_message[ERROR_CAPACITY];

/* Formats a message into `buffer`. A message cut at the capacity is cut at a UTF-8 character
 * boundary, so that it stays valid UTF-8 (option values, which messages quote, can be any text). */
static void format_message(char* buffer, size_t capacity, const char* format, va_list args) {
  int written = vsnprintf(buffer, capacity, format, args);
  if (written < 0) {
    snprintf(buffer, capacity, "c_range: could not format an error message");
  } else if ((size_t)written >= capacity) {
    size_t end = capacity - 1;
    while (end > 0 && ((unsigned char)buffer[end] & 0xC0) == 0x80) end--;
    buffer[end] = '\0';
  }
}

/* Records the message of a failure and returns `code`, so that `return fail(EINVAL, ...)` both
 * reports and fails. */
static int fail(int code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  format_message(last_error_message, sizeof(last_error_message), format, args);
  va_end(args);
  return code;
}

static const char* last_error(void) { return last_error_message; }

/* ---------------------------------------------------------------------------------------------
 * Little-endian encoding of the byte arrays
 * ------------------------------------------------------------------------------------------- */

static void put_i64(uint8_t* out, int64_t value) {
  uint64_t bits = (uint64_t)value;
  for (int i = 0; i < 8; i++) out[i] = (uint8_t)(bits >> (8 * i));
}

static int64_t get_i64(const uint8_t* in) {
  uint64_t bits = 0;
  for (int i = 0; i < 8; i++) bits |= (uint64_t)in[i] << (8 * i);
  return (int64_t)bits;
}

/* ---------------------------------------------------------------------------------------------
 * Options
 * ------------------------------------------------------------------------------------------- */

typedef struct RangeSource {
  int64_t end;
  int64_t num_partitions;
  int64_t batch_rows;
  int64_t rows_per_batch;
} RangeSource;

static int ascii_lower(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

/* Spark matches option keys without regard to case, and passes them as the user wrote them. */
static int key_equals(const char* key, const char* name) {
  for (; *key && *name; key++, name++) {
    if (ascii_lower((unsigned char)*key) != *name) return 0;
  }
  return *key == *name;
}

/* Parses a decimal integer of at least `minimum`, with no sign, space or suffix. */
static int parse_option(const char* key, const char* value, int64_t minimum, int64_t* out) {
  const char* expected = minimum > 0 ? "a positive integer" : "a non-negative integer";
  int64_t result = 0;
  if (*value == '\0') {
    return fail(EINVAL, "option `%s` must be %s, got `%s`", key, expected, value);
  }
  for (const char* c = value; *c; c++) {
    if (*c < '0' || *c > '9') {
      return fail(EINVAL, "option `%s` must be %s, got `%s`", key, expected, value);
    }
    int digit = *c - '0';
    if (result > (INT64_MAX - digit) / 10) {
      return fail(ERANGE, "option `%s` must be %s of at most %lld, got `%s`", key, expected,
                  (long long)INT64_MAX, value);
    }
    result = result * 10 + digit;
  }
  if (result < minimum) {
    return fail(EINVAL, "option `%s` must be %s, got `%s`", key, expected, value);
  }
  *out = result;
  return 0;
}

static int create(const SparkDsCreateInfo* info, uint64_t* capabilities, void** source) {
  RangeSource options = {DEFAULT_END, DEFAULT_NUM_PARTITIONS, DEFAULT_BATCH_ROWS,
                         DEFAULT_ROWS_PER_BATCH};
  for (int64_t i = 0; i < info->num_options; i++) {
    const char* key = info->option_keys[i];
    const char* value = info->option_values[i];
    int status;
    if (key_equals(key, "end")) {
      status = parse_option(key, value, 0, &options.end);
    } else if (key_equals(key, "num_partitions")) {
      status = parse_option(key, value, 1, &options.num_partitions);
    } else if (key_equals(key, "batch_rows")) {
      status = parse_option(key, value, 1, &options.batch_rows);
    } else if (key_equals(key, "rows_per_batch")) {
      status = parse_option(key, value, 1, &options.rows_per_batch);
    } else if (key_equals(key, "path") || key_equals(key, "checkpointLocation")) {
      /* Spark passes these for load(path), save(path) and streaming queries: c_range reads no
       * files and keeps no state of its own, so it accepts and ignores them. */
      status = 0;
    } else {
      status = fail(EINVAL,
                    "unknown option `%s`: the options of c_range are `end`, `num_partitions`, "
                    "`batch_rows` and `rows_per_batch` (and `path`, which it ignores)",
                    key);
    }
    if (status != 0) return status;
  }
  /* Each partition becomes a Spark task: a bound keeps a typo from planning billions of them. */
  if (options.num_partitions > MAX_NUM_PARTITIONS) {
    return fail(EINVAL, "option `num_partitions` must be at most %d, got `%lld`",
                MAX_NUM_PARTITIONS, (long long)options.num_partitions);
  }
  /* Bounds the memory of a batch, and keeps the sizes of its buffers far from overflowing. */
  if (options.batch_rows > MAX_BATCH_ROWS) {
    return fail(EINVAL, "option `batch_rows` must be at most %d, got `%lld`", MAX_BATCH_ROWS,
                (long long)options.batch_rows);
  }
  RangeSource* range = malloc(sizeof(RangeSource));
  if (range == NULL) return fail(ENOMEM, "c_range: out of memory");
  *range = options;
  *capabilities = SPARK_DS_BATCH_READ | SPARK_DS_MICRO_BATCH_READ;
  *source = range;
  return 0;
}

static void close_source(void* source) { free(source); }

/* ---------------------------------------------------------------------------------------------
 * Schemas
 * ------------------------------------------------------------------------------------------- */

/* The columns that a reader returns, in order, with their nullability. */
typedef struct Columns {
  int count;
  int ids[NUM_COLUMNS];
  int nullable[NUM_COLUMNS];
} Columns;

/* The private data of an exported struct schema: its children live in it. */
typedef struct SchemaPrivate {
  struct ArrowSchema* child_pointers[NUM_COLUMNS];
  struct ArrowSchema children[NUM_COLUMNS];
} SchemaPrivate;

/* Children point to static strings and have no private data: releasing one only marks it. */
static void release_child_schema(struct ArrowSchema* schema) {
  if (schema == NULL || schema->release == NULL) return;
  schema->release = NULL;
}

static void release_schema(struct ArrowSchema* schema) {
  if (schema == NULL || schema->release == NULL) return;
  SchemaPrivate* private_data = schema->private_data;
  for (int64_t i = 0; i < schema->n_children; i++) {
    struct ArrowSchema* child = schema->children[i];
    /* A consumer may have moved a child out, leaving it released. */
    if (child->release != NULL) child->release(child);
  }
  free(private_data);
  schema->release = NULL;
}

/* Writes the struct schema of `columns` to `out`, which the receiver then releases. */
static int export_schema(const Columns* columns, struct ArrowSchema* out) {
  SchemaPrivate* private_data = calloc(1, sizeof(SchemaPrivate));
  if (private_data == NULL) return fail(ENOMEM, "c_range: out of memory");
  for (int i = 0; i < columns->count; i++) {
    int id = columns->ids[i];
    private_data->children[i] = (struct ArrowSchema){
        .format = COLUMN_FORMATS[id],
        .name = COLUMN_NAMES[id],
        .flags = columns->nullable[i] ? ARROW_FLAG_NULLABLE : 0,
        .release = release_child_schema,
    };
    private_data->child_pointers[i] = &private_data->children[i];
  }
  *out = (struct ArrowSchema){
      .format = "+s",
      .name = "",
      .n_children = columns->count,
      .children = private_data->child_pointers,
      .release = release_schema,
      .private_data = private_data,
  };
  return 0;
}

/* The schema of the data source: what a query reads when it gives no schema. */
static const Columns ALL_COLUMNS = {2, {COLUMN_ID, COLUMN_LABEL}, {0, 1}};

static int get_schema(void* source, struct ArrowSchema* out) {
  (void)source;
  return export_schema(&ALL_COLUMNS, out);
}

/* Reads the columns that `schema` (borrowed) asks for: a struct of a subset of the columns of
 * the data source, in any order, with their types. `id` may be declared nullable, since it has
 * no nulls; `label` must be, since it has some. */
static int import_columns(const char* function, const struct ArrowSchema* schema, Columns* out) {
  if (schema == NULL || schema->format == NULL || strcmp(schema->format, "+s") != 0) {
    return fail(EINVAL, "%s: the schema to read must be a struct, got format `%s`", function,
                schema == NULL || schema->format == NULL ? "(null)" : schema->format);
  }
  /* No column at all is valid: a query such as count(*) needs only the number of rows. */
  if (schema->n_children < 0 || schema->n_children > NUM_COLUMNS) {
    return fail(EINVAL, "%s: the schema to read must have at most 2 columns, of `id` and "
                "`label`, got %lld", function, (long long)schema->n_children);
  }
  Columns columns = {0, {0, 0}, {0, 0}};
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema* child = schema->children[i];
    int id = -1;
    for (int c = 0; c < NUM_COLUMNS; c++) {
      if (child->name != NULL && strcmp(child->name, COLUMN_NAMES[c]) == 0) id = c;
    }
    if (id < 0) {
      return fail(EINVAL, "%s: c_range has no column `%s`: its columns are `id` (int64) and "
                  "`label` (utf8)", function, child->name == NULL ? "" : child->name);
    }
    for (int j = 0; j < columns.count; j++) {
      if (columns.ids[j] == id) {
        return fail(EINVAL, "%s: column `%s` appears twice in the schema to read", function,
                    COLUMN_NAMES[id]);
      }
    }
    if (child->format == NULL || strcmp(child->format, COLUMN_FORMATS[id]) != 0) {
      return fail(EINVAL, "%s: column `%s` must have Arrow format `%s` (%s), got `%s`", function,
                  COLUMN_NAMES[id], COLUMN_FORMATS[id], id == COLUMN_ID ? "int64" : "utf8",
                  child->format == NULL ? "(null)" : child->format);
    }
    int nullable = (child->flags & ARROW_FLAG_NULLABLE) != 0;
    if (id == COLUMN_LABEL && !nullable) {
      return fail(EINVAL, "%s: column `label` has nulls: declare it nullable", function);
    }
    columns.ids[columns.count] = id;
    columns.nullable[columns.count] = nullable;
    columns.count++;
  }
  *out = columns;
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Readers (driver)
 * ------------------------------------------------------------------------------------------- */

/* The ids that the accepted filters keep: those in [min, max], and, when has_values, only the
 * `count` sorted ids of `values` (owned). */
typedef struct IdFilter {
  int64_t min;
  int64_t max;
  int has_values;
  int64_t count;
  int64_t* values;
} IdFilter;

static const IdFilter ALL_IDS = {INT64_MIN, INT64_MAX, 0, 0, NULL};

typedef struct RangeReader {
  RangeSource options;
  Columns columns;
  /* The limit accepted by push_limit, or -1. */
  int64_t limit;
  /* The filters accepted by push_filters, as ids. */
  IdFilter ids;
} RangeReader;

static int new_reader(const char* function, void* source, struct ArrowSchema* schema,
                      void** reader) {
  Columns columns;
  int status = import_columns(function, schema, &columns);
  if (status != 0) return status;
  RangeReader* range = malloc(sizeof(RangeReader));
  if (range == NULL) return fail(ENOMEM, "c_range: out of memory");
  range->options = *(const RangeSource*)source;
  range->columns = columns;
  range->limit = -1;
  range->ids = ALL_IDS;
  *reader = range;
  return 0;
}

static int create_reader(void* source, struct ArrowSchema* schema, void** reader) {
  return new_reader("create_reader", source, schema, reader);
}

static int create_stream_reader(void* source, struct ArrowSchema* schema, void** reader) {
  return new_reader("create_stream_reader", source, schema, reader);
}

static void close_reader(void* reader) {
  if (reader != NULL) free(((RangeReader*)reader)->ids.values);
  free(reader);
}

static int push_limit(void* reader, int64_t limit, int* accepted) {
  if (limit < 0) return fail(EINVAL, "push_limit: the limit must be non-negative, got %lld",
                             (long long)limit);
  /* Each partition stops after `limit` rows: Spark still applies the limit to the union. */
  ((RangeReader*)reader)->limit = limit;
  *accepted = 1;
  return 0;
}

static int prune_columns(void* reader, struct ArrowSchema* required_schema) {
  return import_columns("prune_columns", required_schema, &((RangeReader*)reader)->columns);
}

/* ---------------------------------------------------------------------------------------------
 * Filter pushdown (driver): spark_datasource_filters.h
 * ------------------------------------------------------------------------------------------- */

/* A window of the message: `at` moves forward, never past `end`. */
typedef struct Cursor {
  const uint8_t* data;
  int64_t at;
  int64_t end;
} Cursor;

static int read_u8(Cursor* c, uint8_t* out) {
  if (c->end - c->at < 1) return 0;
  *out = c->data[c->at++];
  return 1;
}

static int read_u32(Cursor* c, uint32_t* out) {
  if (c->end - c->at < 4) return 0;
  const uint8_t* p = c->data + c->at;
  *out = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  c->at += 4;
  return 1;
}

/* Reads a little-endian signed integer of `width` bytes. */
static int read_int(Cursor* c, int width, int64_t* out) {
  if (c->end - c->at < width) return 0;
  uint64_t bits = 0;
  for (int i = 0; i < width; i++) bits |= (uint64_t)c->data[c->at + i] << (8 * i);
  if (width < 8 && (bits >> (8 * width - 1)) & 1) bits |= ~(uint64_t)0 << (8 * width);
  *out = (int64_t)bits;
  c->at += width;
  return 1;
}

/* What a value of a predicate is, as far as c_range cares. */
enum { VALUE_OTHER = 0, VALUE_ID = 1, VALUE_INTEGER = 2, VALUE_NULL = 3 };

/* Reads a value: the column `id`, an integer literal (INT8 to INT64) or a NULL literal of those
 * types; anything else, including what it cannot parse, is VALUE_OTHER. */
static int read_value(Cursor* c, int64_t* integer) {
  uint8_t kind;
  if (!read_u8(c, &kind)) return VALUE_OTHER;
  if (kind == SPARK_DS_FILTER_VALUE_COLUMN) {
    uint32_t parts, length;
    if (!read_u32(c, &parts) || parts != 1 || !read_u32(c, &length)) return VALUE_OTHER;
    if (c->end - c->at < (int64_t)length) return VALUE_OTHER;
    int is_id = length == 2 && memcmp(c->data + c->at, "id", 2) == 0;
    c->at += length;
    return is_id ? VALUE_ID : VALUE_OTHER;
  }
  uint8_t type, null;
  if (kind != SPARK_DS_FILTER_VALUE_LITERAL || !read_u8(c, &type)) return VALUE_OTHER;
  if (type == SPARK_DS_FILTER_TYPE_NULL) return read_u8(c, &null) && null ? VALUE_NULL : VALUE_OTHER;
  if (type < SPARK_DS_FILTER_TYPE_INT8 || type > SPARK_DS_FILTER_TYPE_INT64) return VALUE_OTHER;
  if (!read_u8(c, &null) || null > 1) return VALUE_OTHER;
  if (null) return VALUE_NULL;
  /* INT8 is 1 byte, INT16 2, INT32 4, INT64 8. */
  int width = 1 << (type - SPARK_DS_FILTER_TYPE_INT8);
  return read_int(c, width, integer) ? VALUE_INTEGER : VALUE_OTHER;
}

static void id_filter_free(IdFilter* ids) {
  free(ids->values);
  *ids = ALL_IDS;
}

static int compare_ids(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

/* Narrows `into` to the ids that `other` keeps too. Returns 0, or ENOMEM. */
static int id_filter_intersect(IdFilter* into, const IdFilter* other) {
  if (other->min > into->min) into->min = other->min;
  if (other->max < into->max) into->max = other->max;
  if (!other->has_values) return 0;
  if (!into->has_values) {
    int64_t* copy = malloc(sizeof(int64_t) * (size_t)(other->count > 0 ? other->count : 1));
    if (copy == NULL) return ENOMEM;
    if (other->count > 0) memcpy(copy, other->values, sizeof(int64_t) * (size_t)other->count);
    into->values = copy;
    into->count = other->count;
    into->has_values = 1;
    return 0;
  }
  /* Both sorted: keep the ids of `into` that `other` has. */
  int64_t kept = 0;
  for (int64_t i = 0, j = 0; i < into->count && j < other->count;) {
    if (into->values[i] < other->values[j]) {
      i++;
    } else if (into->values[i] > other->values[j]) {
      j++;
    } else {
      into->values[kept++] = into->values[i++];
      j++;
    }
  }
  into->count = kept;
  return 0;
}

/* Reads the predicate at `c` (its u32 length, then its body) and moves `c` past it. Returns 1
 * and fills `out` when it is a condition on `id` that c_range applies exactly, 0 when it is not
 * (it then answers 0), -1 when the length runs past the end (a malformed message), or -ENOMEM. */
static int read_predicate(Cursor* c, IdFilter* out, int depth) {
  uint32_t length;
  if (!read_u32(c, &length) || c->end - c->at < (int64_t)length) return -1;
  Cursor body = {c->data, c->at, c->at + length};
  c->at += length;
  *out = ALL_IDS;
  uint8_t op;
  if (depth > 64 || !read_u8(&body, &op)) return 0;
  int64_t a_value = 0, b_value = 0;
  switch (op) {
    case SPARK_DS_FILTER_EQ:
    case SPARK_DS_FILTER_LT:
    case SPARK_DS_FILTER_LE:
    case SPARK_DS_FILTER_GT:
    case SPARK_DS_FILTER_GE: {
      int a = read_value(&body, &a_value);
      int b = read_value(&body, &b_value);
      if (body.at != body.end) return 0;
      /* Put `id` on the left: `5 < id` is `id > 5`. */
      if (a != VALUE_ID && b == VALUE_ID) {
        b = a;
        a = VALUE_ID;
        b_value = a_value;
        if (op == SPARK_DS_FILTER_LT) op = SPARK_DS_FILTER_GT;
        else if (op == SPARK_DS_FILTER_GT) op = SPARK_DS_FILTER_LT;
        else if (op == SPARK_DS_FILTER_LE) op = SPARK_DS_FILTER_GE;
        else if (op == SPARK_DS_FILTER_GE) op = SPARK_DS_FILTER_LE;
      }
      if (a != VALUE_ID || (b != VALUE_INTEGER && b != VALUE_NULL)) return 0;
      if (b == VALUE_NULL) {
        /* A comparison with NULL is never TRUE: no id. */
        *out = (IdFilter){0, -1, 0, 0, NULL};
        return 1;
      }
      int64_t v = b_value;
      switch (op) {
        case SPARK_DS_FILTER_EQ: out->min = out->max = v; break;
        case SPARK_DS_FILTER_LT:
          if (v == INT64_MIN) *out = (IdFilter){0, -1, 0, 0, NULL}; else out->max = v - 1;
          break;
        case SPARK_DS_FILTER_LE: out->max = v; break;
        case SPARK_DS_FILTER_GT:
          if (v == INT64_MAX) *out = (IdFilter){0, -1, 0, 0, NULL}; else out->min = v + 1;
          break;
        default: out->min = v; break;
      }
      return 1;
    }
    case SPARK_DS_FILTER_IN: {
      int64_t ignored;
      uint32_t count;
      if (read_value(&body, &ignored) != VALUE_ID || !read_u32(&body, &count)) return 0;
      /* Each value takes at least 2 bytes: a count beyond that is not a list c_range reads. */
      if ((int64_t)count > (body.end - body.at) / 2) return 0;
      int64_t* values = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
      if (values == NULL) return -ENOMEM;
      int64_t kept = 0;
      for (uint32_t i = 0; i < count; i++) {
        int64_t v;
        int kind = read_value(&body, &v);
        /* A NULL in the list is never equal: it adds no id. */
        if (kind == VALUE_INTEGER) values[kept++] = v;
        else if (kind != VALUE_NULL) {
          free(values);
          return 0;
        }
      }
      if (body.at != body.end) {
        free(values);
        return 0;
      }
      qsort(values, (size_t)kept, sizeof(int64_t), compare_ids);
      int64_t unique = 0;
      for (int64_t i = 0; i < kept; i++) {
        if (unique == 0 || values[unique - 1] != values[i]) values[unique++] = values[i];
      }
      *out = (IdFilter){unique > 0 ? values[0] : 0, unique > 0 ? values[unique - 1] : -1, 1,
                        unique, values};
      return 1;
    }
    case SPARK_DS_FILTER_AND: {
      IdFilter left, right;
      int l = read_predicate(&body, &left, depth + 1);
      if (l < 0) return l == -1 ? 0 : l;
      int r = read_predicate(&body, &right, depth + 1);
      if (r < 0) {
        id_filter_free(&left);
        return r == -1 ? 0 : r;
      }
      int status = l == 1 && r == 1 && body.at == body.end ? id_filter_intersect(&left, &right)
                                                            : -1;
      id_filter_free(&right);
      if (status != 0) {
        id_filter_free(&left);
        return status == ENOMEM ? -ENOMEM : 0;
      }
      *out = left;
      return 1;
    }
    default:
      /* Any other operator, known or not, is left to Spark. */
      return 0;
  }
}

/* Accepts the conjuncts on `id` that read_predicate understands; answers 0 for the others. */
static int push_filters(void* reader, const uint8_t* filters, int64_t length,
                        SparkDsSink accepted, void* sink) {
  RangeReader* range = reader;
  Cursor c = {filters, 0, filters == NULL ? 0 : length};
  uint32_t count;
  if (length < 0 || !read_u32(&c, &count) || (int64_t)count > (c.end - c.at) / 5) {
    return fail(EINVAL, "push_filters: malformed filters at byte 0: no count of predicates "
                "that fits the %lld bytes", (long long)length);
  }
  uint8_t* answers = malloc(count > 0 ? count : 1);
  if (answers == NULL) return fail(ENOMEM, "c_range: out of memory");
  IdFilter ids = range->ids;
  range->ids = ALL_IDS;
  for (uint32_t i = 0; i < count; i++) {
    int64_t start = c.at;
    IdFilter one;
    int status = read_predicate(&c, &one, 0);
    if (status == -1) {
      free(answers);
      range->ids = ids;
      return fail(EINVAL, "push_filters: malformed filters at byte %lld: the predicate %u runs "
                  "past the end of the message", (long long)start, i);
    }
    if (status == 1) status = id_filter_intersect(&ids, &one) == 0 ? 1 : -ENOMEM;
    id_filter_free(&one);
    if (status == -ENOMEM) {
      free(answers);
      range->ids = ids;
      return fail(ENOMEM, "c_range: out of memory");
    }
    answers[i] = (uint8_t)status;
  }
  range->ids = ids;
  if (c.at != c.end) {
    free(answers);
    return fail(EINVAL, "push_filters: malformed filters at byte %lld: bytes after the last "
                "predicate", (long long)c.at);
  }
  accepted(sink, answers, (int64_t)count);
  free(answers);
  return 0;
}

/* The ids of [start, end) that the filter keeps can only lie in [*first, *last): narrows them,
 * to an empty range when none can. */
static void id_bounds(const IdFilter* ids, int64_t* first, int64_t* last) {
  int64_t low = ids->min, high = ids->max;
  if (ids->has_values) {
    if (ids->count == 0) high = low - 1;
    else if (ids->values[0] > low) low = ids->values[0];
    if (ids->count > 0 && ids->values[ids->count - 1] < high) high = ids->values[ids->count - 1];
  }
  if (low > *first) *first = low;
  if (high < *last - 1) *last = high + 1;
  if (*last < *first) *last = *first;
}

/* Plans [start, end) as `num_partitions` ranges whose sizes differ by at most one row. */
static int add_partitions(const RangeReader* range, int64_t start, int64_t end, SparkDsSink add,
                          void* sink) {
  int64_t count = range->options.num_partitions;
  int64_t rows = end - start;
  int64_t base = rows / count;
  int64_t remainder = rows % count;
  int64_t first = start;
  for (int64_t i = 0; i < count; i++) {
    int64_t size = base + (i < remainder ? 1 : 0);
    uint8_t bytes[16];
    put_i64(bytes, first);
    put_i64(bytes + 8, first + size);
    add(sink, bytes, sizeof(bytes));
    first += size;
  }
  return 0;
}

static int partitions(void* reader, SparkDsSink add, void* sink) {
  const RangeReader* range = reader;
  int64_t first = 0, last = range->options.end;
  /* Only the ids that the accepted filters can keep are planned, hence read. */
  id_bounds(&range->ids, &first, &last);
  return add_partitions(range, first, last, add, sink);
}

/* The fixed part of the reader state, and the size of each id of its set. */
#define STATE_FIXED_LENGTH(columns) (2 + 2 * (int64_t)(columns) + 16 + 17 + 8)

static int serialize_state(const RangeReader* range, SparkDsSink add, void* sink) {
  const IdFilter* ids = &range->ids;
  size_t capacity = (size_t)STATE_FIXED_LENGTH(NUM_COLUMNS) + 8 * (size_t)ids->count;
  uint8_t* bytes = malloc(capacity);
  if (bytes == NULL) return fail(ENOMEM, "c_range: out of memory");
  size_t length = 0;
  bytes[length++] = STATE_VERSION;
  bytes[length++] = (uint8_t)range->columns.count;
  for (int i = 0; i < range->columns.count; i++) bytes[length++] = (uint8_t)range->columns.ids[i];
  for (int i = 0; i < range->columns.count; i++) {
    bytes[length++] = (uint8_t)range->columns.nullable[i];
  }
  put_i64(bytes + length, range->options.batch_rows);
  length += 8;
  put_i64(bytes + length, range->limit);
  length += 8;
  put_i64(bytes + length, ids->min);
  put_i64(bytes + length + 8, ids->max);
  bytes[length + 16] = (uint8_t)ids->has_values;
  put_i64(bytes + length + 17, ids->has_values ? ids->count : 0);
  length += 25;
  for (int64_t i = 0; ids->has_values && i < ids->count; i++, length += 8) {
    put_i64(bytes + length, ids->values[i]);
  }
  add(sink, bytes, (int64_t)length);
  free(bytes);
  return 0;
}

static int serialize_reader(void* reader, SparkDsSink add, void* sink) {
  return serialize_state(reader, add, sink);
}

/* ---------------------------------------------------------------------------------------------
 * Micro-batch stream (driver)
 * ------------------------------------------------------------------------------------------- */

static int read_offset(const char* function, const uint8_t* bytes, int64_t length,
                       int64_t* offset) {
  if (bytes == NULL || length != 8) {
    return fail(EINVAL, "%s: an offset of c_range is 8 bytes, got %lld", function,
                (long long)length);
  }
  *offset = get_i64(bytes);
  if (*offset < 0) return fail(EINVAL, "%s: invalid offset %lld", function, (long long)*offset);
  return 0;
}

static int initial_offset(void* reader, SparkDsSink add, void* sink) {
  (void)reader;
  uint8_t bytes[8];
  put_i64(bytes, 0);
  add(sink, bytes, sizeof(bytes));
  return 0;
}

/* Each call makes `rows_per_batch` more rows available after `start`, so that a test controls
 * how many rows each micro-batch reads. */
static int latest_offset(void* reader, const uint8_t* start, int64_t start_length,
                         SparkDsSink add, void* sink) {
  const RangeReader* range = reader;
  int64_t offset;
  int status = read_offset("latest_offset", start, start_length, &offset);
  if (status != 0) return status;
  if (offset > INT64_MAX - range->options.rows_per_batch) {
    return fail(ERANGE, "latest_offset: the stream has reached the largest int64 id");
  }
  uint8_t bytes[8];
  put_i64(bytes, offset + range->options.rows_per_batch);
  add(sink, bytes, sizeof(bytes));
  return 0;
}

static int stream_partitions(void* reader, const uint8_t* start, int64_t start_length,
                             const uint8_t* end, int64_t end_length, SparkDsSink add,
                             void* sink) {
  int64_t first, last;
  int status = read_offset("stream_partitions", start, start_length, &first);
  if (status == 0) status = read_offset("stream_partitions", end, end_length, &last);
  if (status != 0) return status;
  if (last < first) {
    return fail(EINVAL, "stream_partitions: the end offset %lld is before the start %lld",
                (long long)last, (long long)first);
  }
  return add_partitions(reader, first, last, add, sink);
}

static int serialize_stream_reader(void* reader, SparkDsSink add, void* sink) {
  return serialize_state(reader, add, sink);
}

static int commit_offset(void* reader, const uint8_t* end, int64_t end_length) {
  (void)reader;
  int64_t offset;
  /* Rows are computed, not stored: there is nothing to discard. */
  return read_offset("commit_offset", end, end_length, &offset);
}

/* ---------------------------------------------------------------------------------------------
 * Arrays
 * ------------------------------------------------------------------------------------------- */

/* The private data of an exported array: its buffers, and for a struct its children. */
typedef struct ArrayPrivate {
  const void* buffers[3];
  void* allocations[3];
  struct ArrowArray* child_pointers[NUM_COLUMNS];
  struct ArrowArray children[NUM_COLUMNS];
} ArrayPrivate;

static void release_array(struct ArrowArray* array) {
  if (array == NULL || array->release == NULL) return;
  ArrayPrivate* private_data = array->private_data;
  for (int64_t i = 0; i < array->n_children; i++) {
    struct ArrowArray* child = array->children[i];
    if (child->release != NULL) child->release(child);
  }
  for (int i = 0; i < 3; i++) free(private_data->allocations[i]);
  free(private_data);
  array->release = NULL;
}

/* The id of row `i` of a batch: ids[i], or first + i when the ids are consecutive (ids NULL). */
static int64_t id_at(const int64_t* ids, int64_t first, int64_t i) {
  return ids != NULL ? ids[i] : first + i;
}

/* Fills `out` with the int64 ids of a batch of `length` rows. */
static int fill_id_array(const int64_t* ids, int64_t first, int64_t length,
                         struct ArrowArray* out) {
  ArrayPrivate* private_data = calloc(1, sizeof(ArrayPrivate));
  /* malloc(0) may return NULL: keep at least one value so that buffers are never NULL. */
  int64_t* values = malloc(sizeof(int64_t) * (size_t)(length > 0 ? length : 1));
  if (private_data == NULL || values == NULL) {
    free(private_data);
    free(values);
    return fail(ENOMEM, "c_range: out of memory");
  }
  for (int64_t i = 0; i < length; i++) values[i] = id_at(ids, first, i);
  private_data->allocations[1] = values;
  private_data->buffers[0] = NULL; /* no nulls: no validity buffer */
  private_data->buffers[1] = values;
  *out = (struct ArrowArray){
      .length = length,
      .null_count = 0,
      .offset = 0,
      .n_buffers = 2,
      .buffers = private_data->buffers,
      .release = release_array,
      .private_data = private_data,
  };
  return 0;
}

static int label_is_null(int64_t id) { return id % 3 == 2; }

static const char LABEL_PREFIX[] = "label ";
#define LABEL_PREFIX_LENGTH ((int64_t)sizeof(LABEL_PREFIX) - 1)

/* The number of decimal digits of `value` (0 or more). */
static int64_t decimal_digits(int64_t value) {
  int64_t digits = 1;
  while (value >= 10) {
    value /= 10;
    digits++;
  }
  return digits;
}

/* Writes the label of `id` at `out`, without a NUL, and returns its length. Formatting by hand
 * rather than with snprintf makes the labels cost about as much as the ids. */
static int64_t write_label(int64_t id, char* out) {
  memcpy(out, LABEL_PREFIX, (size_t)LABEL_PREFIX_LENGTH);
  int64_t digits = decimal_digits(id);
  char* end = out + LABEL_PREFIX_LENGTH + digits;
  do {
    *--end = (char)('0' + id % 10);
    id /= 10;
  } while (id > 0);
  return LABEL_PREFIX_LENGTH + digits;
}

/* Fills `out` with the labels of the ids of a batch: "label <id>", or null for every third id. */
static int fill_label_array(const int64_t* ids, int64_t first, int64_t length,
                            struct ArrowArray* out) {
  int64_t nulls = 0;
  size_t data_length = 0;
  for (int64_t i = 0; i < length; i++) {
    if (label_is_null(id_at(ids, first, i))) {
      nulls++;
    } else {
      data_length += (size_t)(LABEL_PREFIX_LENGTH + decimal_digits(id_at(ids, first, i)));
    }
  }
  if (data_length > INT32_MAX) {
    return fail(ERANGE, "c_range: a batch of labels exceeds 2 GiB: lower `batch_rows`");
  }
  ArrayPrivate* private_data = calloc(1, sizeof(ArrayPrivate));
  uint8_t* validity = nulls > 0 ? calloc((size_t)(length + 7) / 8, 1) : NULL;
  int32_t* offsets = malloc(sizeof(int32_t) * (size_t)(length + 1));
  /* At least one byte, so that the buffer is never NULL. */
  char* data = malloc(data_length > 0 ? data_length : 1);
  if (private_data == NULL || (nulls > 0 && validity == NULL) || offsets == NULL ||
      data == NULL) {
    free(private_data);
    free(validity);
    free(offsets);
    free(data);
    return fail(ENOMEM, "c_range: out of memory");
  }
  int32_t position = 0;
  offsets[0] = 0;
  for (int64_t i = 0; i < length; i++) {
    int64_t id = id_at(ids, first, i);
    if (!label_is_null(id)) {
      if (validity != NULL) validity[i / 8] |= (uint8_t)(1u << (i % 8));
      position += (int32_t)write_label(id, data + position);
    }
    offsets[i + 1] = position;
  }
  private_data->allocations[0] = validity;
  private_data->allocations[1] = offsets;
  private_data->allocations[2] = data;
  private_data->buffers[0] = validity;
  private_data->buffers[1] = offsets;
  private_data->buffers[2] = data;
  *out = (struct ArrowArray){
      .length = length,
      .null_count = nulls,
      .offset = 0,
      .n_buffers = 3,
      .buffers = private_data->buffers,
      .release = release_array,
      .private_data = private_data,
  };
  return 0;
}

/* Fills `out` with a batch of `length` ids, ids[0..length) or [first, first + length) when ids is
 * NULL: a struct array with no nulls. */
static int fill_batch(const Columns* columns, const int64_t* ids, int64_t first, int64_t length,
                      struct ArrowArray* out) {
  ArrayPrivate* private_data = calloc(1, sizeof(ArrayPrivate));
  if (private_data == NULL) return fail(ENOMEM, "c_range: out of memory");
  for (int i = 0; i < columns->count; i++) {
    int status = columns->ids[i] == COLUMN_ID
                     ? fill_id_array(ids, first, length, &private_data->children[i])
                     : fill_label_array(ids, first, length, &private_data->children[i]);
    if (status != 0) {
      for (int j = 0; j < i; j++) release_array(&private_data->children[j]);
      free(private_data);
      return status;
    }
    private_data->child_pointers[i] = &private_data->children[i];
  }
  private_data->buffers[0] = NULL; /* the struct of a batch has no validity */
  *out = (struct ArrowArray){
      .length = length,
      .null_count = 0,
      .offset = 0,
      .n_buffers = 1,
      .n_children = columns->count,
      .buffers = private_data->buffers,
      .children = private_data->child_pointers,
      .release = release_array,
      .private_data = private_data,
  };
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Read (executor)
 * ------------------------------------------------------------------------------------------- */

typedef struct StreamPrivate {
  const SparkDsTaskContext* task;
  Columns columns;
  int64_t next;
  int64_t end;
  int64_t batch_rows;
  /* With a set of ids (owned, sorted): the next one to return, and how many rows the limit
   * still allows (-1: no limit). */
  IdFilter ids;
  int64_t index;
  int64_t remaining;
  char error[ERROR_CAPACITY];
} StreamPrivate;

static int stream_fail(StreamPrivate* stream, int code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  format_message(stream->error, sizeof(stream->error), format, args);
  va_end(args);
  return code;
}

static int stream_get_schema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  StreamPrivate* private_data = stream->private_data;
  int status = export_schema(&private_data->columns, out);
  if (status != 0) stream_fail(private_data, status, "%s", last_error_message);
  return status;
}

static int stream_get_next(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  StreamPrivate* private_data = stream->private_data;
  const SparkDsTaskContext* task = private_data->task;
  if (task != NULL && task->is_interrupted != NULL && task->is_interrupted(task)) {
    return stream_fail(private_data, ECANCELED, "c_range: task %lld was interrupted",
                       (long long)task->task_id);
  }
  if (private_data->ids.has_values) {
    /* The ids of the set within [next, end): from `index`, as many as fit a batch. */
    const IdFilter* ids = &private_data->ids;
    int64_t length = 0;
    while (private_data->index + length < ids->count &&
           ids->values[private_data->index + length] < private_data->end &&
           length < private_data->batch_rows &&
           (private_data->remaining < 0 || length < private_data->remaining)) {
      length++;
    }
    if (length == 0) {
      memset(out, 0, sizeof(*out));
      return 0;
    }
    int status = fill_batch(&private_data->columns, ids->values + private_data->index, 0, length,
                            out);
    if (status != 0) return stream_fail(private_data, status, "%s", last_error_message);
    private_data->index += length;
    if (private_data->remaining >= 0) private_data->remaining -= length;
    return 0;
  }
  if (private_data->next >= private_data->end) {
    /* End of stream: a released array. */
    memset(out, 0, sizeof(*out));
    return 0;
  }
  int64_t length = private_data->end - private_data->next;
  if (length > private_data->batch_rows) length = private_data->batch_rows;
  int status = fill_batch(&private_data->columns, NULL, private_data->next, length, out);
  if (status != 0) return stream_fail(private_data, status, "%s", last_error_message);
  private_data->next += length;
  return 0;
}

static const char* stream_get_last_error(struct ArrowArrayStream* stream) {
  return ((StreamPrivate*)stream->private_data)->error;
}

static void stream_release(struct ArrowArrayStream* stream) {
  if (stream == NULL || stream->release == NULL) return;
  free(((StreamPrivate*)stream->private_data)->ids.values);
  free(stream->private_data);
  stream->release = NULL;
}

/* Reads the reader state; *ids receives the accepted filter, whose values the caller owns. */
static int read_state(const uint8_t* state, int64_t length, Columns* columns,
                      int64_t* batch_rows, int64_t* limit, IdFilter* ids) {
  *ids = ALL_IDS;
  if (state == NULL || length == 0) {
    /* No serialized state: all the columns, the default batch size, no limit, no filter. */
    *columns = ALL_COLUMNS;
    *batch_rows = DEFAULT_BATCH_ROWS;
    *limit = -1;
    return 0;
  }
  int64_t fixed = length >= 2 ? STATE_FIXED_LENGTH(state[1]) : 0;
  int64_t count = length >= fixed && fixed > 0 ? get_i64(state + fixed - 8) : -1;
  if (length < 2 || state[0] != STATE_VERSION || state[1] > NUM_COLUMNS || length < fixed ||
      count < 0 || count > (length - fixed) / 8 || length != fixed + 8 * count ||
      state[fixed - 9] > 1) {
    return fail(EINVAL, "read: the reader state (%lld bytes) was not written by this build of "
                "c_range", (long long)length);
  }
  Columns result = {state[1], {0, 0}, {0, 0}};
  for (int i = 0; i < result.count; i++) {
    result.ids[i] = state[2 + i];
    result.nullable[i] = state[2 + result.count + i];
    if (result.ids[i] >= NUM_COLUMNS) return fail(EINVAL, "read: invalid column in the state");
  }
  const uint8_t* numbers = state + 2 + 2 * result.count;
  *columns = result;
  *batch_rows = get_i64(numbers);
  *limit = get_i64(numbers + 8);
  if (*batch_rows < 1 || *batch_rows > MAX_BATCH_ROWS) {
    return fail(EINVAL, "read: invalid batch size in the reader state");
  }
  IdFilter filter = {get_i64(numbers + 16), get_i64(numbers + 24), numbers[32], count, NULL};
  if (filter.has_values) {
    filter.values = malloc(sizeof(int64_t) * (size_t)(count > 0 ? count : 1));
    if (filter.values == NULL) return fail(ENOMEM, "c_range: out of memory");
    for (int64_t i = 0; i < count; i++) filter.values[i] = get_i64(numbers + 41 + 8 * i);
  }
  *ids = filter;
  return 0;
}

static int read_partition(const SparkDsTaskContext* task, const uint8_t* reader_state,
                int64_t reader_state_length, const uint8_t* partition, int64_t partition_length,
                struct ArrowArrayStream* out) {
  Columns columns;
  int64_t batch_rows = DEFAULT_BATCH_ROWS, limit = -1;
  IdFilter ids;
  int status =
      read_state(reader_state, reader_state_length, &columns, &batch_rows, &limit, &ids);
  if (status != 0) return status;
  if (partition == NULL || partition_length != 16) {
    id_filter_free(&ids);
    return fail(EINVAL, "read: a partition of c_range is 16 bytes, got %lld",
                (long long)partition_length);
  }
  int64_t first = get_i64(partition);
  int64_t end = get_i64(partition + 8);
  if (first < 0 || end < first) {
    id_filter_free(&ids);
    return fail(EINVAL, "read: invalid partition [%lld, %lld)", (long long)first,
                (long long)end);
  }
  /* The accepted filters hold on every row returned: only their ids are read. */
  id_bounds(&ids, &first, &end);
  /* Consecutive ids stop after `limit`; a set counts its rows as it goes (`remaining`). */
  if (!ids.has_values && limit >= 0 && end - first > limit) end = first + limit;
  StreamPrivate* private_data = calloc(1, sizeof(StreamPrivate));
  if (private_data == NULL) {
    id_filter_free(&ids);
    return fail(ENOMEM, "c_range: out of memory");
  }
  private_data->ids = ids;
  private_data->remaining = limit;
  /* The first id of the set at or after `first`. */
  while (ids.has_values && private_data->index < ids.count &&
         ids.values[private_data->index] < first) {
    private_data->index++;
  }
  private_data->task = task;
  private_data->columns = columns;
  private_data->next = first;
  private_data->end = end;
  private_data->batch_rows = batch_rows;
  *out = (struct ArrowArrayStream){
      .get_schema = stream_get_schema,
      .get_next = stream_get_next,
      .get_last_error = stream_get_last_error,
      .release = stream_release,
      .private_data = private_data,
  };
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------------------------- */

/* Designated initializers leave the write functions NULL: c_range declares no write capability. */
static const SparkDsLibrary LIBRARY = {
    .size = sizeof(SparkDsLibrary),
    .abi_version = SPARK_DS_ABI_VERSION,
    .last_error = last_error,
    .create = create,
    .schema = get_schema,
    .create_reader = create_reader,
    .create_stream_reader = create_stream_reader,
    .close = close_source,
    .push_limit = push_limit,
    .prune_columns = prune_columns,
    .partitions = partitions,
    .serialize_reader = serialize_reader,
    .close_reader = close_reader,
    .initial_offset = initial_offset,
    .latest_offset = latest_offset,
    .stream_partitions = stream_partitions,
    .serialize_stream_reader = serialize_stream_reader,
    .commit_offset = commit_offset,
    .close_stream_reader = close_reader,
    .read = read_partition,
};

SPARK_DS_EXPORT int spark_ds_init(const SparkDsHost* host, const SparkDsLibrary** library) {
  (void)host;
  *library = &LIBRARY;
  return 0;
}

/* The filter pushdown extension: a host that knows spark_datasource_filters.h finds it by this
 * symbol; one that does not never calls it, and c_range reads as without it. */
static const SparkDsFilterTable FILTER_TABLE = {
    .size = sizeof(SparkDsFilterTable),
    .version = SPARK_DS_FILTERS_VERSION,
    .push_filters = push_filters,
};

SPARK_DS_EXPORT int spark_ds_filters_init(const SparkDsHost* host,
                                          const SparkDsFilterTable** table) {
  (void)host;
  *table = &FILTER_TABLE;
  return 0;
}
