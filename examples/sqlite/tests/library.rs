//! The library as Spark loads it (through `sparkds`), on a database generated here with every
//! storage class and NULLs: the conformance kit (`sparkds::testing::Conformance`: `count(*)`,
//! options, killed reads, limits, filters against Spark's evaluation, aborted and retried
//! writes), then what is SQLite's own: reads equal to SQLite's rows, the filters it leaves to
//! Spark, appends and overwrites, and the errors of its options.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::types::Value;
use rusqlite::Connection;
use sparkds::arrow_array::{Array, ArrayRef, RecordBatch};
use sparkds::arrow_schema::DataType;
use sparkds::filters::{Column, Filter, Literal, Value as Operand};
use sparkds::testing::{library, message, Conformance};
use sparkds::WriteMode;

/// Rows of the generated table: a few batches' worth, so that the suite runs in seconds.
const ROWS: i64 = 20_000;

/// A database with table `t`: an integer, a real, a text, a blob and a NUMERIC column, each
/// NULL in some rows, with negative numbers, infinities, -0.0, empty and non-ASCII text.
fn database(dir: &Path) -> PathBuf {
    let path = dir.join("db.sqlite");
    let mut connection = Connection::open(&path).expect("a database");
    connection
        .execute_batch("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n NUMERIC)")
        .expect("a table");
    let transaction = connection.transaction().expect("a transaction");
    {
        let mut insert = transaction
            .prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
            .expect("an insert");
        for k in 0..ROWS {
            let null = |every: i64| k % every == 0;
            let i = (!null(7)).then_some(k * 7919 % 1000 - 500);
            let r = match k % 11 {
                0 => None,
                1 => Some(f64::INFINITY),
                2 => Some(-0.0),
                _ => Some(k as f64 / 8.0 - 1000.0),
            };
            let s = (!null(5)).then(|| {
                ["", "a", "A", "é☃", "ab%_", "b"][k as usize % 6].repeat(k as usize % 3 + 1)
            });
            let b = (!null(3)).then(|| vec![(k % 256) as u8, 0, 255]);
            let n = (!null(13)).then_some(k / 2);
            insert
                .execute(rusqlite::params![i, r, s, b, n])
                .expect("a row");
        }
    }
    transaction.commit().expect("committed");
    path
}

fn options(path: &Path, more: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut options = vec![("path".to_string(), path.display().to_string())];
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    options
}

/// The rows of batches, as SQLite values, sorted (partitions come in any order).
fn rows_of(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            rows.push(batch.columns().iter().map(|c| cell(c, row)).collect());
        }
    }
    rows.sort();
    rows
}

fn cell(array: &ArrayRef, row: usize) -> String {
    use sparkds::arrow_array::cast::AsArray;
    use sparkds::arrow_array::types::{Float64Type, Int64Type};
    if array.is_null(row) {
        return "NULL".into();
    }
    match array.data_type() {
        DataType::Int64 => format!(
            "{:?}",
            Value::Integer(array.as_primitive::<Int64Type>().value(row))
        ),
        DataType::Float64 => format!(
            "{:?}",
            Value::Real(array.as_primitive::<Float64Type>().value(row))
        ),
        DataType::Utf8 => format!(
            "{:?}",
            Value::Text(array.as_string::<i32>().value(row).into())
        ),
        other => match other {
            DataType::Binary => format!(
                "{:?}",
                Value::Blob(array.as_binary::<i32>().value(row).to_vec())
            ),
            _ => panic!("unexpected type {other}"),
        },
    }
}

/// SQLite's own rows of `sql`, as [`rows_of`] writes them (NUMERIC's integers as reals, as the
/// schema reads them).
fn sqlite_rows(path: &Path, sql: &str) -> Vec<Vec<String>> {
    let connection = Connection::open(path).expect("a database");
    let mut statement = connection.prepare(sql).expect("a query");
    let width = statement.column_count();
    let numeric: Vec<bool> = statement
        .columns()
        .map(|c| c.decl_type() == Some("NUMERIC"))
        .collect();
    let mut rows: Vec<Vec<String>> = statement
        .query_map([], |row| {
            (0..width)
                .map(|i| {
                    let value: Value = row.get(i)?;
                    Ok(match (value, numeric[i]) {
                        (Value::Null, _) => "NULL".to_string(),
                        (Value::Integer(v), true) => format!("{:?}", Value::Real(v as f64)),
                        (value, _) => format!("{value:?}"),
                    })
                })
                .collect()
        })
        .expect("rows")
        .collect::<rusqlite::Result<_>>()
        .expect("rows");
    rows.sort();
    rows
}

#[test]
fn reads_every_storage_class_and_null_as_sqlite_stores_them() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a directory");
    let db = database(dir.path());
    for partitions in ["1", "4"] {
        let read = library()?
            .batch_read()
            .options(options(
                &db,
                &[("table", "t"), ("numPartitions", partitions)],
            ))
            .run()?;
        let types: Vec<String> = read
            .schema
            .fields()
            .iter()
            .map(|f| f.data_type().to_string())
            .collect();
        assert_eq!(types, ["Int64", "Float64", "Utf8", "Binary", "Float64"]);
        assert_eq!(
            read.partitions.len(),
            partitions.parse::<usize>().unwrap_or(0)
        );
        assert_eq!(
            rows_of(&read.batches()),
            sqlite_rows(&db, "SELECT * FROM t")
        );
    }
    let query = library()?
        .batch_read()
        .options(options(
            &db,
            &[("query", "SELECT s, i * 2 AS twice FROM t WHERE i > 0")],
        ))
        .run()?;
    assert_eq!(
        rows_of(&query.batches()),
        sqlite_rows(&db, "SELECT s, i * 2 AS twice FROM t WHERE i > 0")
    );
    Ok(())
}

/// Filters on the edges of SQLite's types, checked by the kit with those it makes of the rows.
fn edge_filters() -> Vec<Filter> {
    let col = |name: &str| Operand::Column(Column::new(name));
    let lit = Operand::Literal;
    let text = |s: &str| lit(Literal::Utf8(Some(s.into())));
    vec![
        Filter::Gt(col("i"), lit(Literal::Int64(Some(100)))),
        Filter::Lt(col("r"), lit(Literal::Float64(Some(0.0)))).negate(),
        Filter::Eq(col("r"), lit(Literal::Float64(Some(-0.0)))),
        Filter::StartsWith(col("s"), text("a")).negate(),
        Filter::Contains(col("s"), text("%_")),
        Filter::EndsWith(col("s"), text("")),
        Filter::In(col("s"), vec![text("A"), lit(Literal::Utf8(None))]).negate(),
        Filter::Le(col("b"), lit(Literal::Binary(Some(vec![9, 0, 255])))),
        Filter::NullSafeEq(col("n"), lit(Literal::Float64(None))),
        Filter::IsNull(col("i")).or(Filter::In(col("i"), vec![])),
    ]
}

// ANCHOR: kit
#[test]
fn passes_the_conformance_kit() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a directory");
    let db = database(dir.path());
    Conformance::new(library()?)
        .options(options(&db, &[("table", "t"), ("numPartitions", "3")]))
        .write_options(options(&db, &[("table", "written")]))
        .filters(edge_filters())
        .assert_passes();
    Ok(())
}
// ANCHOR_END: kit

#[test]
fn filters_that_sqlite_evaluates_otherwise_are_left_to_spark() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a directory");
    let db = database(dir.path());
    let col = |name: &str| Operand::Column(Column::new(name));
    // SQLite has no NaN, and compares a string column with an integer by affinity.
    let declined = [
        Filter::Lt(col("r"), Operand::Literal(Literal::Float64(Some(f64::NAN)))),
        Filter::Eq(col("s"), Operand::Literal(Literal::Int64(Some(1)))),
    ];
    for filter in declined {
        let read = library()?
            .batch_read()
            .options(options(&db, &[("table", "t")]))
            .filters(vec![filter.clone()])
            .run()?;
        assert_eq!(read.filters_accepted, Some(vec![false]), "{filter:?}");
    }
    Ok(())
}

fn people(ids: std::ops::Range<i64>) -> RecordBatch {
    use sparkds::arrow_array::{Int64Array, StringArray};
    let schema = Arc::new(sparkds::arrow_schema::Schema::new(vec![
        sparkds::arrow_schema::Field::new("id", DataType::Int64, false),
        sparkds::arrow_schema::Field::new("name", DataType::Utf8, true),
    ]));
    let names: Vec<Option<String>> = ids
        .clone()
        .map(|i| (i % 2 == 0).then(|| format!("n{i}")))
        .collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(StringArray::from(names)),
        ],
    )
    .expect("a batch")
}

#[test]
fn appends_add_rows_and_an_overwrite_replaces_them() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a directory");
    let db = dir.path().join("new.sqlite");
    let write = |mode, batches: Vec<RecordBatch>| -> sparkds::Result<bool> {
        let mut write = library()?
            .batch_write()
            .options(options(&db, &[("table", "people")]))
            .mode(mode);
        for batch in batches {
            write = write.task([batch]);
        }
        Ok(write.run()?.committed)
    };
    let ids = || sqlite_rows(&db, "SELECT id FROM people");
    let expect = |range: std::ops::Range<i64>| {
        let mut rows: Vec<Vec<String>> = range
            .map(|i| vec![format!("{:?}", Value::Integer(i))])
            .collect();
        rows.sort();
        rows
    };
    assert!(write(WriteMode::Append, vec![people(0..5), people(5..10)])?);
    assert!(write(WriteMode::Append, vec![people(10..12)])?);
    assert_eq!(ids(), expect(0..12));
    assert!(write(
        WriteMode::Truncate,
        vec![people(100..103), people(103..104)]
    )?);
    assert_eq!(ids(), expect(100..104));
    let stages = sqlite_rows(
        &db,
        "SELECT name FROM sqlite_schema WHERE name LIKE 'spark stage %'",
    );
    assert!(stages.is_empty(), "{stages:?}");
    Ok(())
}

#[test]
fn bad_options_are_refused_with_the_fix() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a directory");
    let db = database(dir.path());
    let read = |more: &[(&str, &str)]| {
        message(library().and_then(|l| l.batch_read().options(options(&db, more)).run()))
    };
    assert!(read(&[]).contains(
        "give exactly one of the options `table` (the name of a table) and `query` (a SELECT statement)"
    ));
    assert!(read(&[("table", "t"), ("numPartitions", "0")])
        .contains("option `numPartitions` must be at least 1, got 0"));
    assert!(read(&[("table", "missing")]).contains("no such table: missing"));
    Ok(())
}
