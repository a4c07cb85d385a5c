//! The library as Spark loads it (through `sparkds`), on a database generated here with every
//! storage class and NULLs: reads equal to SQLite's own rows, filters that agree with Spark's
//! evaluation, the conformance checks of `cargo sparkds check`, and atomic writes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::types::Value;
use rusqlite::Connection;
use sparkds::arrow_array::{Array, ArrayRef, RecordBatch};
use sparkds::arrow_schema::DataType;
use sparkds::check::{Check, Protocol};
use sparkds::filters::{Column, Filter, Literal, Value as Operand};
use sparkds::testing::{library, message};
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

#[test]
fn pushed_filters_agree_with_sparks_evaluation() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a directory");
    let db = database(dir.path());
    let col = |name: &str| Operand::Column(Column::new(name));
    let lit = Operand::Literal;
    let not = |f: Filter| Filter::Not(Box::new(f));
    let cases: Vec<(Filter, bool)> = vec![
        (Filter::Gt(col("i"), lit(Literal::Int64(Some(100)))), true),
        (
            not(Filter::Lt(col("r"), lit(Literal::Float64(Some(0.0))))),
            true,
        ),
        (
            Filter::Eq(col("r"), lit(Literal::Float64(Some(-0.0)))),
            true,
        ),
        (
            not(Filter::StartsWith(
                col("s"),
                lit(Literal::Utf8(Some("a".into()))),
            )),
            true,
        ),
        (
            Filter::Contains(col("s"), lit(Literal::Utf8(Some("%_".into())))),
            true,
        ),
        (
            Filter::EndsWith(col("s"), lit(Literal::Utf8(Some("".into())))),
            true,
        ),
        (
            not(Filter::In(
                col("s"),
                vec![
                    lit(Literal::Utf8(Some("A".into()))),
                    lit(Literal::Utf8(None)),
                ],
            )),
            true,
        ),
        (
            Filter::Le(col("b"), lit(Literal::Binary(Some(vec![9, 0, 255])))),
            true,
        ),
        (
            Filter::NullSafeEq(col("n"), lit(Literal::Float64(None))),
            true,
        ),
        (
            Filter::Or(
                Box::new(Filter::IsNull(col("i"))),
                Box::new(Filter::In(col("i"), vec![])),
            ),
            true,
        ),
        // SQLite has no NaN, and compares a string column with an integer by affinity.
        (
            Filter::Lt(col("r"), lit(Literal::Float64(Some(f64::NAN)))),
            false,
        ),
        (Filter::Eq(col("s"), lit(Literal::Int64(Some(1)))), false),
    ];
    let everything = library()?
        .batch_read()
        .options(options(&db, &[("table", "t")]))
        .run()?;
    for (filter, pushed) in cases {
        let read = library()?
            .batch_read()
            .options(options(&db, &[("table", "t"), ("numPartitions", "3")]))
            .filters(vec![filter.clone()])
            .run()?;
        assert_eq!(read.filters_accepted, Some(vec![pushed]), "{filter:?}");
        if pushed {
            let spark: Vec<RecordBatch> = everything
                .batches()
                .iter()
                .map(|b| sparkds::filters::filter_batch(std::slice::from_ref(&filter), b))
                .collect::<Result<_, _>>()
                .map_err(|e| sparkds::Error::usage(e.to_string()))?;
            assert_eq!(rows_of(&read.batches()), rows_of(&spark), "{filter:?}");
        }
    }
    Ok(())
}

#[test]
fn passes_the_conformance_checks_of_cargo_sparkds_check() {
    let dir = tempfile::tempdir().expect("a directory");
    let db = database(dir.path());
    let lib = sparkds::cdylib("spark_datasource_sqlite").expect("cargo test built the library");
    // The writes ask the source for the schema of the rows they write: the tables exist.
    let connection = Connection::open(&db).expect("a database");
    for table in ["written", "failed", "replaced"] {
        let sql = format!("CREATE TABLE {table} (id INTEGER NOT NULL, name TEXT)");
        connection.execute(&sql, []).expect("a table");
    }
    // ANCHOR: check
    let report = Check::new(lib)
        .option("path", db.display().to_string())
        .protocol_option(Protocol::BatchRead, "table", "t")
        .protocol_option(Protocol::BatchRead, "numPartitions", "3")
        .protocol_option(Protocol::BatchWrite, "table", "written")
        .protocol_option(Protocol::FailingWrite, "table", "failed")
        .protocol_option(Protocol::TruncateWrite, "table", "replaced")
        .protocol_option(Protocol::Load, "table", "t")
        .protocols([
            Protocol::Load,
            Protocol::BatchRead,
            Protocol::BatchWrite,
            Protocol::FailingWrite,
            Protocol::TruncateWrite,
        ])
        .scratch()
        .run();
    assert!(report.passed(), "{report}");
    // ANCHOR_END: check
    // The failing write left no row and no stage.
    let count = |sql: &str| {
        connection
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .expect(sql)
    };
    assert_eq!(count("SELECT count(*) FROM failed"), 0);
    assert_eq!(
        count("SELECT count(*) FROM sqlite_schema WHERE name LIKE 'spark stage %'"),
        0
    );
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
fn appends_add_rows_an_overwrite_replaces_them_and_a_failed_write_changes_nothing(
) -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a directory");
    let db = dir.path().join("new.sqlite");
    let opts = options(&db, &[("table", "people")]);
    let write = |mode, fail: bool, batches: Vec<RecordBatch>| -> sparkds::Result<bool> {
        let mut write = library()?.batch_write().options(opts.clone()).mode(mode);
        for batch in batches {
            write = write.task([batch]);
        }
        if fail {
            write = write.failing_task(1);
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
    assert!(write(
        WriteMode::Append,
        false,
        vec![people(0..5), people(5..10)]
    )?);
    assert!(write(WriteMode::Append, false, vec![people(10..12)])?);
    assert_eq!(ids(), expect(0..12));
    assert!(!write(
        WriteMode::Truncate,
        true,
        vec![people(100..103), people(103..104)]
    )?);
    assert_eq!(ids(), expect(0..12));
    assert!(write(
        WriteMode::Truncate,
        false,
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
    assert!(read(&[("table", "t"), ("numPartition", "2")]).contains("numPartition"));
    assert!(read(&[("table", "t"), ("numPartitions", "0")])
        .contains("option `numPartitions` must be at least 1, got 0"));
    assert!(read(&[("table", "missing")]).contains("no such table: missing"));
    Ok(())
}
