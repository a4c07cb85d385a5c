/*
 * spark_datasource_filters.h: filter pushdown for Apache Spark native data sources, an
 * extension of spark_datasource.h, version 1 of the extension.
 *
 * Version 1 of spark_datasource.h pushes limits and columns only. This extension pushes the
 * conditions of a query (the V2 predicates of Data Source V2's SupportsPushDownV2Filters) to a
 * batch reader, outside the frozen version-1 table: it changes no struct of spark_datasource.h.
 * A library opts in by exporting one more symbol, spark_ds_filters_init; a library without it,
 * and a host that never looks for it (such as Spark 4.4 or an older sparkds), work exactly as
 * without this header.
 *
 * This header depends only on the C standard library and spark_datasource.h, and follows its
 * conventions (errors and last_error, borrowed byte arrays, sinks that copy, no exception or
 * panic across the interface).
 *
 * ---------------------------------------------------------------------------------------------
 * Finding the extension
 * ---------------------------------------------------------------------------------------------
 *
 * After spark_ds_init has succeeded, a host that supports this extension looks up the symbol
 * spark_ds_filters_init in the library (dlsym, GetProcAddress). When it is absent, the host
 * pushes no filter. When it is present, the host calls it once, with the same host struct as
 * spark_ds_init, and uses the table it returns for every reader of the library. If it fails, the
 * host reports the library as invalid, as for spark_ds_init.
 *
 * The table starts with its size and its version, as SparkDsLibrary does: fields are only ever
 * appended, with a new SPARK_DS_FILTERS_VERSION, and a host reads only the fields that fit in
 * `size`. New operators and literal types do not change the version: a parser skips what it
 * does not know (see the encoding), so any host can send them to any library.
 *
 * ---------------------------------------------------------------------------------------------
 * push_filters: when it is called, what it answers
 * ---------------------------------------------------------------------------------------------
 *
 * Driver, optional, for SPARK_DS_BATCH_READ only (never for a micro-batch reader). The host
 * calls push_filters at most once per reader, after create_reader and before push_limit,
 * prune_columns, partitions and serialize_reader, with the top-level conjuncts of the query's
 * condition: `WHERE a > 1 AND b IS NULL` gives two predicates. A host may skip the call when
 * there is no conjunct.
 *
 * - `filters` and `length`: one message of the encoding below, borrowed for the call (NULL only
 *   when length is 0). Column paths name fields of the schema that create_reader received,
 *   spelled as in that schema, before any pruning: a column that only accepted filters use may
 *   be pruned afterwards, and the library must still apply the filter.
 * - The library answers through `accepted` exactly once, during the call and on the calling
 *   thread: accepted(sink, answers, count), where count is the number of predicates of the
 *   message and answers[i] is 1 or 0 for the predicate i:
 *     1  accepted: the library guarantees that the predicate is TRUE on every row it returns
 *        (SQL semantics: a row whose predicate is FALSE or NULL is not returned). Spark does not
 *        evaluate it again.
 *     0  not accepted: Spark evaluates it on the rows after the scan. The library may still use
 *        it to skip data, as long as it returns every row where it is TRUE.
 *   A library that accepts none is correct. A predicate that the library does not understand
 *   (an unknown operator or literal type, a column it cannot filter on, a function of a future
 *   encoding) is simply not accepted: it is never an error.
 * - Returns 0 on success. A failure (non-zero, with last_error) is reserved for what is wrong
 *   with the call itself, such as a malformed message; the host then fails the query with
 *   NATIVE_DATA_SOURCE_ERROR. A host also fails the query when a library that returned 0 did
 *   not call `accepted` exactly once with `count` bytes of 0 or 1.
 * - A host pushes a limit (push_limit) only when every predicate was accepted, since a limit
 *   applied before Spark's own filter would drop rows.
 * - Accepted filters are state of the reader: serialize_reader returns them to the executors
 *   with the rest of the reader's state, which is how read applies them (executors share no
 *   memory with the driver). The host passes the message once; the library keeps what it needs.
 *
 * ---------------------------------------------------------------------------------------------
 * The encoding, version 1
 * ---------------------------------------------------------------------------------------------
 *
 * Binary, little-endian, with no padding: u8, u32, i8 .. i64 are the integer types of those
 * widths; i128 is 16 bytes, little-endian two's complement.
 *
 *   message   = u32 count, then count predicates
 *   predicate = u32 n, then n bytes: u8 operator, then the operands of the operator
 *   value     = u8 kind, then: kind 0 (column): column
 *                              kind 1 (literal): literal
 *   column    = u32 parts (at least 1), then each part: u32 n, then n bytes of UTF-8 (a nested
 *               field is the path of its names: `a.b` is 2 parts, "a" and "b")
 *   literal   = u8 type, then the parameters of the type, then u8 null (1: NULL, 0: not
 *               NULL), then, unless NULL, the value of the type
 *
 *   operator (code)        operands                        meaning (Spark V2 predicate name)
 *   EQ             1       value, value                    a = b                        "="
 *   NULL_SAFE_EQ   2       value, value                    a <=> b                      "<=>"
 *   LT             3       value, value                    a < b                        "<"
 *   LE             4       value, value                    a <= b                       "<="
 *   GT             5       value, value                    a > b                        ">"
 *   GE             6       value, value                    a >= b                       ">="
 *   IN             7       value, u32 n, then n values     a IN (v1, .., vn)            "IN"
 *   IS_NULL        8       value                           a IS NULL                    "IS_NULL"
 *   IS_NOT_NULL    9       value                           a IS NOT NULL          "IS_NOT_NULL"
 *   AND           10       predicate, predicate            p AND q                      "AND"
 *   OR            11       predicate, predicate            p OR q                       "OR"
 *   NOT           12       predicate                       NOT p                        "NOT"
 *   STARTS_WITH   13       value, value                    a starts with b        "STARTS_WITH"
 *   ENDS_WITH     14       value, value                    a ends with b            "ENDS_WITH"
 *   CONTAINS      15       value, value                    a contains b              "CONTAINS"
 *   ALWAYS_TRUE   16       (none)                          TRUE                   "ALWAYS_TRUE"
 *   ALWAYS_FALSE  17       (none)                          FALSE                 "ALWAYS_FALSE"
 *
 *   type (code)        parameters            value          Arrow type / Spark SQL type
 *   NULL         0     (none)                (always NULL)  null "n" / void
 *   BOOLEAN      1     (none)                u8 0 or 1      boolean "b" / boolean
 *   INT8         2     (none)                i8             int8 "c" / tinyint
 *   INT16        3     (none)                i16            int16 "s" / smallint
 *   INT32        4     (none)                i32            int32 "i" / int
 *   INT64        5     (none)                i64            int64 "l" / bigint
 *   FLOAT32      6     (none)                u32 IEEE 754 bits (NaN, infinities, -0.0 exact)
 *   FLOAT64      7     (none)                u64 IEEE 754 bits
 *   DECIMAL128   8     u8 precision 1-38,    i128 unscaled  decimal128 "d:P,S" /
 *                      u8 scale 0-precision                 decimal(P,S)
 *   UTF8         9     (none)                u32 n, n bytes utf8 "u" / string
 *   BINARY      10     (none)                u32 n, n bytes binary "z" / binary
 *   DATE32      11     (none)                i32 days since 1970-01-01    date32 "tdD" / date
 *   TIMESTAMP   12     (none)                i64 microseconds since 1970-01-01T00:00:00Z,
 *                                            timestamp[us, UTC] "tsu:UTC" / timestamp
 *   TIMESTAMP_NTZ 13   (none)                i64 microseconds since 1970-01-01T00:00:00 local,
 *                                            timestamp[us] "tsu:" / timestamp_ntz
 *
 * Semantics are Spark's: comparisons of a NULL are NULL (except <=>, which is TRUE when both
 * sides are NULL and FALSE when one is); IN is TRUE when a value equals a, else NULL when a or a
 * value is NULL, else FALSE, and IN with no value is FALSE; AND, OR and NOT are three-valued;
 * floating-point NaN equals NaN and is greater than any other value, and -0.0 equals 0.0;
 * strings and binary compare as unsigned bytes; STARTS_WITH, ENDS_WITH and CONTAINS take
 * strings (or binary). Literals have the type of the column they are compared with.
 *
 * Skipping what a parser does not know. Each predicate is prefixed by its length, so a parser
 * that meets an unknown operator, value kind or literal type inside a predicate stops reading
 * it, skips to the end of the top-level predicate, and answers 0 for it; the other predicates
 * are unaffected. Only a malformed message is an error: a length that runs past the end of its
 * enclosing predicate or message, operands of a known operator that do not fill its predicate
 * exactly, bytes after the last predicate, a null flag or a boolean other than 0 or 1, a column
 * with no part or a part that is not UTF-8, a decimal precision or scale out of range.
 * Strings are UTF-8 as Spark holds them; a parser may answer 0 for a string that is not.
 *
 * A parser in C needs no library: read the count, then for each predicate its u32 length n,
 * check that n bytes remain, and parse the operator and operands within those n bytes.
 *
 * ---------------------------------------------------------------------------------------------
 * A future official function
 * ---------------------------------------------------------------------------------------------
 *
 * When filter pushdown becomes part of the interface, in a later SPARK_DS_ABI_VERSION, the
 * function can be a field appended to SparkDsLibrary (after close_data_writer) with exactly the
 * signature of push_filters below and this encoding, which the operator and type codes then
 * version as they do here. A library then points both the appended field and this table's
 * push_filters at the same function, and keeps exporting spark_ds_filters_init for the hosts
 * that only know the extension; a host that finds the field in a table whose size covers it uses
 * it, and looks for this symbol otherwise.
 */
#ifndef SPARK_DATASOURCE_FILTERS_H
#define SPARK_DATASOURCE_FILTERS_H

#include <stdint.h>

#include "spark_datasource.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of SparkDsFilterTable that this header declares. */
#define SPARK_DS_FILTERS_VERSION 1

/* Operator codes of the encoding. */
#define SPARK_DS_FILTER_EQ 1
#define SPARK_DS_FILTER_NULL_SAFE_EQ 2
#define SPARK_DS_FILTER_LT 3
#define SPARK_DS_FILTER_LE 4
#define SPARK_DS_FILTER_GT 5
#define SPARK_DS_FILTER_GE 6
#define SPARK_DS_FILTER_IN 7
#define SPARK_DS_FILTER_IS_NULL 8
#define SPARK_DS_FILTER_IS_NOT_NULL 9
#define SPARK_DS_FILTER_AND 10
#define SPARK_DS_FILTER_OR 11
#define SPARK_DS_FILTER_NOT 12
#define SPARK_DS_FILTER_STARTS_WITH 13
#define SPARK_DS_FILTER_ENDS_WITH 14
#define SPARK_DS_FILTER_CONTAINS 15
#define SPARK_DS_FILTER_ALWAYS_TRUE 16
#define SPARK_DS_FILTER_ALWAYS_FALSE 17

/* Value kinds of the encoding. */
#define SPARK_DS_FILTER_VALUE_COLUMN 0
#define SPARK_DS_FILTER_VALUE_LITERAL 1

/* Literal type codes of the encoding. */
#define SPARK_DS_FILTER_TYPE_NULL 0
#define SPARK_DS_FILTER_TYPE_BOOLEAN 1
#define SPARK_DS_FILTER_TYPE_INT8 2
#define SPARK_DS_FILTER_TYPE_INT16 3
#define SPARK_DS_FILTER_TYPE_INT32 4
#define SPARK_DS_FILTER_TYPE_INT64 5
#define SPARK_DS_FILTER_TYPE_FLOAT32 6
#define SPARK_DS_FILTER_TYPE_FLOAT64 7
#define SPARK_DS_FILTER_TYPE_DECIMAL128 8
#define SPARK_DS_FILTER_TYPE_UTF8 9
#define SPARK_DS_FILTER_TYPE_BINARY 10
#define SPARK_DS_FILTER_TYPE_DATE32 11
#define SPARK_DS_FILTER_TYPE_TIMESTAMP 12
#define SPARK_DS_FILTER_TYPE_TIMESTAMP_NTZ 13

/* The table of the extension. Owned by the library, valid until it is unloaded. */
typedef struct SparkDsFilterTable {
  /* sizeof the table as the library declares it. */
  int64_t size;
  /* The version of the table: SPARK_DS_FILTERS_VERSION. */
  int32_t version;

  /* Driver, for SPARK_DS_BATCH_READ: offers the conjuncts of the query's condition to `reader`,
   * a handle of create_reader, as the top of this header describes. `filters` (borrowed) is one
   * message of `length` bytes; the library calls accepted(sink, answers, count) once, with one
   * byte per predicate. */
  int (*push_filters)(void* reader, const uint8_t* filters, int64_t length, SparkDsSink accepted,
                      void* sink);
} SparkDsFilterTable;

/* The symbol that a library exports to support filter pushdown. The host calls it once, after
 * spark_ds_init succeeded, with the same `host` (borrowed, valid until the library is
 * unloaded); the library writes to *table its table, which stays valid until the library is
 * unloaded. Returns 0 on success. */
SPARK_DS_EXPORT int spark_ds_filters_init(const SparkDsHost* host,
                                          const SparkDsFilterTable** table);

typedef int (*SparkDsFiltersInitFunction)(const SparkDsHost* host,
                                          const SparkDsFilterTable** table);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SPARK_DATASOURCE_FILTERS_H */
