//! The conformance kit (`sparkds::testing::Conformance`) on a table of every kind of column that
//! the filters meet (integers, floats with NaN and infinities, text with NULLs, dates,
//! timestamps, numeric, boolean) and a NOT NULL key, read in three partitions and written to a
//! table of the same columns: `count(*)`, an unknown option, killed reads, limits, pushed filters against Spark's
//! evaluation, an aborted write and a retried task.

use sparkds::testing::Conformance;

use crate::helpers::{library, options, sql, table};

/// `id` is NOT NULL, which this source reads as not nullable: the kit checks that no batch
/// holds a NULL there, and writes its sample rows with NULLs in every other column only.
const COLUMNS: &str = "id bigint NOT NULL, n int, x double precision, name text, day date, \
                       at timestamptz, amount numeric(12, 2), flag boolean";

#[test]
fn passes_the_conformance_kit() -> sparkds::Result<()> {
    let read = table("kit_read");
    let written = table("kit_written");
    sql(&format!(
        "CREATE TABLE {read} ({COLUMNS}); CREATE TABLE {written} ({COLUMNS}); \
         INSERT INTO {read} SELECT i, \
           CASE WHEN i % 7 = 0 THEN NULL ELSE i % 100 - 50 END, \
           CASE i % 11 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN '-Infinity' ELSE i / 3.0 END, \
           CASE WHEN i % 5 = 0 THEN NULL ELSE 'name ' || (i % 37) END, \
           date '2020-01-01' + (i % 400), \
           timestamptz '2024-03-01 00:00:00+00' + i * interval '17 minutes', \
           (i % 1000) / 7.0, i % 3 = 0 \
         FROM generate_series(1, 5000) AS i"
    ));
    let mut read_options = options(&read);
    read_options.extend([
        ("partitionColumn".to_string(), "id".to_string()),
        ("lowerBound".to_string(), "1".to_string()),
        ("upperBound".to_string(), "5000".to_string()),
        ("numPartitions".to_string(), "3".to_string()),
    ]);
    Conformance::new(library()?)
        .options(read_options)
        .write_options(options(&written))
        .assert_passes();
    Ok(())
}
