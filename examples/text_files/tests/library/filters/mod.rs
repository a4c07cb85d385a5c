//! Filter pushdown (`push_filters`, the extension of `spark_datasource_filters.h`): the
//! conditions that text_files accepts are checked on each parsed batch, before the limit, so
//! that only the rows where they are TRUE leave the library; the rest are left to Spark. Either
//! way, the rows Spark ends with are those of filtering every row afterwards.

use std::fs;

use sparkds::arrow_array::RecordBatch;
use sparkds::filters::{col, filter_batch, Column, Filter, Literal, Value};
use sparkds::testing::library;
use sparkds::BatchReadOutcome;

/// Six people, with nulls in every column but `id`, a NaN and a negative zero.
fn people() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("people.csv"),
        "id,name,score,born,active,amount\n\
         1,Ada,9.5,1815-12-10,true,1.50\n\
         2,,7,1906-12-09,false,\n\
         3,\"Lovelace, A.\",,1815-12-10,,10.00\n\
         4,Grace,NaN,1906-12-09,true,-0.50\n\
         5,Edsger,-0.0,1930-05-11,false,3.25\n\
         6,Alan,10,,true,0.00\n",
    )
    .expect("written");
    dir
}

const SCHEMA: &str =
    "id bigint, name string, score double, born date, active boolean, amount decimal(10,2)";

fn read(filters: &[Filter], columns: Option<&[&str]>) -> sparkds::Result<BatchReadOutcome> {
    let dir = people();
    let mut read = library()?
        .batch_read()
        .option("path", dir.path().to_string_lossy())
        .schema(sparkds::ddl::parse(SCHEMA)?)
        .filters(filters.to_vec());
    if let Some(columns) = columns {
        read = read.columns(columns.iter().copied());
    }
    read.run()
}

/// The rows of `batches` with `filters` applied, one line each, sorted.
fn rows(batches: &[RecordBatch], filters: &[Filter]) -> sparkds::Result<Vec<String>> {
    let filtered = batches
        .iter()
        .map(|b| filter_batch(filters, b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| sparkds::Error::usage(e.to_string()))?;
    // The lines of the table's rows, after its header's.
    let table = sparkds::render::batches(&filtered);
    let mut rows: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(str::to_string)
        .collect();
    rows.sort();
    Ok(rows)
}

fn double(value: f64) -> Value {
    Value::Literal(Literal::Float64(Some(value)))
}

fn date(days: i32) -> Value {
    Value::Literal(Literal::Date32(Some(days)))
}

fn cents(value: i128) -> Value {
    Value::Literal(Literal::Decimal128 {
        value: Some(value),
        precision: 10,
        scale: 2,
    })
}

/// Conditions on every type the files are parsed as, with what text_files answers.
fn conditions() -> Vec<(Filter, bool)> {
    let null_name = Value::Literal(Literal::Utf8(None));
    vec![
        (Filter::Gt(col("id"), 2i64.into()), true),
        (Filter::Le(3i64.into(), col("id")), true),
        (Filter::Eq(col("name"), "Ada".into()), true),
        (Filter::NullSafeEq(col("name"), null_name.clone()), true),
        (Filter::Eq(col("name"), null_name), true),
        (
            Filter::In(
                col("id"),
                vec![1i64.into(), 4i64.into(), Literal::Null.into()],
            ),
            true,
        ),
        (Filter::In(col("id"), vec![]), true),
        (Filter::IsNull(col("score")), true),
        (Filter::IsNotNull(col("born")), true),
        // NaN equals NaN and is above every other double; -0.0 equals 0.0.
        (Filter::Eq(col("score"), double(f64::NAN)), true),
        (Filter::Gt(col("score"), double(9.0)), true),
        (Filter::Eq(col("score"), double(0.0)), true),
        (
            Filter::Lt(col("score"), double(8.0)).or(Filter::IsNull(col("score"))),
            true,
        ),
        (!Filter::Eq(col("name"), "Grace".into()), true),
        (Filter::Ge(col("born"), date(-23034)), true),
        (Filter::Eq(col("active"), true.into()), true),
        (Filter::Lt(col("amount"), cents(200)), true),
        (Filter::StartsWith(col("name"), "L".into()), true),
        // Left to Spark: columns of two types, a column the read does not have, a nested
        // field, a literal of another type, a predicate of a newer encoding.
        (Filter::Gt(col("id"), col("score")), false),
        (Filter::Eq(col("nope"), 1i64.into()), false),
        (
            Filter::Eq(Value::Column(Column::nested(["name", "first"])), "A".into()),
            false,
        ),
        (Filter::Eq(col("born"), "1815-12-10".into()), false),
        (Filter::Unsupported(vec![99]), false),
    ]
}

#[test]
fn accepted_filters_leave_only_matching_rows_the_same_as_filtering_afterwards(
) -> sparkds::Result<()> {
    let all = read(&[], None)?.batches();
    for (filter, accepted) in conditions() {
        let filters = [filter];
        let read = read(&filters, None)?;
        assert_eq!(read.filters_accepted, Some(vec![accepted]), "{filters:?}");
        if accepted {
            // Only the rows where it is TRUE left the library: those of filtering afterwards.
            assert_eq!(
                rows(&read.batches(), &[])?,
                rows(&all, &filters)?,
                "{filters:?}"
            );
        } else {
            // Every row, for Spark to filter.
            assert_eq!(rows(&read.batches(), &[])?, rows(&all, &[])?, "{filters:?}");
        }
    }
    Ok(())
}

#[test]
fn conjuncts_are_answered_one_by_one_and_applied_together() -> sparkds::Result<()> {
    let filters = [
        Filter::Ge(col("id"), 2i64.into()),
        Filter::Eq(col("nope"), 1i64.into()),
        Filter::IsNotNull(col("name")),
        Filter::Eq(col("active"), false.into()),
    ];
    let read = read(&filters, None)?;
    assert_eq!(read.filters_accepted, Some(vec![true, false, true, true]));
    let ids: Vec<String> = rows(&read.batches(), &[])?
        .iter()
        .map(|row| row.split('|').nth(1).unwrap_or_default().trim().to_string())
        .collect();
    assert_eq!(ids, ["5"]);
    Ok(())
}

#[test]
fn a_filter_on_a_pruned_column_still_filters_the_rows() -> sparkds::Result<()> {
    // `SELECT name ... WHERE score > 9`: Spark prunes `score`, which only the accepted filter
    // reads, and the library parses it all the same.
    let filter = [Filter::Gt(col("score"), double(9.0))];
    let read = read(&filter, Some(&["name"]))?;
    assert_eq!(read.filters_accepted, Some(vec![true]));
    assert_eq!(read.schema.fields().len(), 1);
    assert_eq!(
        rows(&read.batches(), &[])?,
        ["| Ada   |", "| Alan  |", "| Grace |"]
    );
    Ok(())
}

#[test]
fn a_limit_counts_the_rows_that_pass_the_filters() -> sparkds::Result<()> {
    let dir = people();
    let read = library()?
        .batch_read()
        .option("path", dir.path().to_string_lossy())
        .schema(sparkds::ddl::parse(SCHEMA)?)
        .filters(vec![Filter::Gt(col("id"), 3i64.into())])
        .columns(["id"])
        .limit(2)
        .run()?;
    // Every filter accepted, so the limit is pushed, and applied after the filter.
    assert_eq!(read.limit_accepted, Some(true));
    assert_eq!(rows(&read.batches(), &[])?, ["| 4  |", "| 5  |"]);
    Ok(())
}
