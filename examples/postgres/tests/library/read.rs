//! Reads: partitions in ranges of a column as Spark's JDBC source plans them, the columns and
//! the limit that Spark pushes, a `query`, and filters: those accepted return exactly the rows
//! that Spark's evaluation keeps (`filter_batch`), the others are left to Spark, on a database
//! with `standard_conforming_strings` off too.

use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::{Date32Type, Int64Type};
use sparkds::arrow_array::RecordBatch;
use std::sync::OnceLock;

use sparkds::filters::{col, filter_batch, Filter, Literal, Value};

use crate::helpers::{concat, library, options, server, sql, table};
use crate::server::USER;

/// `count` rows with ids from 0, and three rows whose id is NULL.
fn numbers(count: i64) -> String {
    let t = table("numbers");
    sql(&format!(
        "CREATE TABLE {t} (id bigint, name text, day date); \
         INSERT INTO {t} SELECT i, 'name ' || i, DATE '2024-01-01' + (i % 10)::int \
           FROM generate_series(0, {}) AS i; \
         INSERT INTO {t} VALUES (NULL, 'no id', NULL), (NULL, NULL, NULL), (NULL, '', NULL);",
        count - 1
    ));
    t
}

fn with(mut options: Vec<(String, String)>, more: &[(&str, &str)]) -> Vec<(String, String)> {
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    options
}

/// The values of an integer or date `column` of a partition's batches, sorted (NULLs first).
fn values(batches: &[RecordBatch], column: &str) -> Vec<Option<i64>> {
    let mut values: Vec<Option<i64>> = batches
        .iter()
        .flat_map(|b| {
            let array = b.column_by_name(column).expect("the partition column");
            match array.as_primitive_opt::<Date32Type>() {
                Some(days) => days.iter().map(|d| d.map(i64::from)).collect::<Vec<_>>(),
                None => array.as_primitive::<Int64Type>().iter().collect(),
            }
        })
        .collect();
    values.sort();
    values
}

#[test]
fn partitions_are_ranges_of_the_column_with_the_nulls_in_the_first() -> sparkds::Result<()> {
    let t = numbers(100);
    let some = |r: std::ops::Range<i64>| r.map(Some).collect::<Vec<_>>();
    let nulls = vec![None; 3];
    // `day` holds 2024-01-01 (day 19,723) plus `id % 10`: each day ten times.
    let days = |r: std::ops::Range<i64>| {
        let mut days: Vec<Option<i64>> = r.flat_map(|d| [Some(d); 10]).collect();
        days.sort();
        days
    };
    // partitionColumn, lowerBound, upperBound, numPartitions, and the values of each partition.
    type Case<'a> = (&'a str, &'a str, &'a str, &'a str, Vec<Vec<Option<i64>>>);
    let cases: Vec<Case> = vec![
        (
            "id",
            "0",
            "100",
            "4",
            vec![
                [nulls.clone(), some(0..25)].concat(),
                some(25..50),
                some(50..75),
                some(75..100),
            ],
        ),
        // Fewer values in the range than partitions: one partition per value.
        (
            "id",
            "0",
            "3",
            "10",
            vec![
                [nulls.clone(), some(0..1)].concat(),
                some(1..2),
                some(2..100),
            ],
        ),
        (
            "day",
            "2024-01-01",
            "2024-01-11",
            "2",
            vec![
                [nulls.clone(), days(19_723..19_728)].concat(),
                days(19_728..19_733),
            ],
        ),
    ];
    for (column, lower, upper, partitions, expected) in cases {
        let read = library()?
            .batch_read()
            .options(with(
                options(&t),
                &[
                    ("partitionColumn", column),
                    ("lowerBound", lower),
                    ("upperBound", upper),
                    ("numPartitions", partitions),
                ],
            ))
            .run()?;
        let returned: Vec<Vec<Option<i64>>> = read
            .partitions
            .iter()
            .map(|p| values(&p.batches, column))
            .collect();
        assert_eq!(
            returned, expected,
            "{column} from {lower} to {upper} in {partitions}"
        );
    }
    Ok(())
}

/// A read of no column, as Spark's `count(*)`, is one statement that counts every row, NULLs
/// of the partition column and rows outside the bounds included, whatever the partitioning.
#[test]
fn a_read_of_no_column_counts_every_row_in_one_partition() -> sparkds::Result<()> {
    let t = numbers(100);
    let partitioned = |columns: &[&str]| {
        library()?
            .batch_read()
            .options(with(
                options(&t),
                &[
                    ("partitionColumn", "id"),
                    ("lowerBound", "10"),
                    ("upperBound", "60"),
                    ("numPartitions", "4"),
                ],
            ))
            .columns(columns.iter().copied())
            .run()
    };
    let counted = partitioned(&[])?;
    assert_eq!(counted.partitions.len(), 1);
    let rows: usize = counted.batches().iter().map(|b| b.num_rows()).sum();
    let read = partitioned(&["id"])?;
    assert_eq!(read.partitions.len(), 4);
    let all: usize = read.batches().iter().map(|b| b.num_rows()).sum();
    // 100 ids and three NULL ones.
    assert_eq!((rows, all), (103, 103));
    Ok(())
}

#[test]
fn reads_only_the_requested_columns_up_to_the_limit_in_each_partition() -> sparkds::Result<()> {
    let t = numbers(100);
    let read = library()?
        .batch_read()
        .options(with(
            options(&t),
            &[
                ("partitionColumn", "id"),
                ("lowerBound", "0"),
                ("upperBound", "100"),
                ("numPartitions", "2"),
            ],
        ))
        .columns(["name", "id"])
        .limit(5)
        .run()?;
    assert!(read.pruned);
    assert_eq!(read.limit_accepted, Some(true));
    let names: Vec<&str> = read
        .schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect();
    assert_eq!(names, ["name", "id"]);
    for partition in &read.partitions {
        let rows: usize = partition.batches.iter().map(RecordBatch::num_rows).sum();
        assert_eq!(rows, 5);
    }
    Ok(())
}

#[test]
fn a_query_is_read_as_a_subquery() -> sparkds::Result<()> {
    let t = numbers(100);
    let mut options = options(&t);
    options.retain(|(k, _)| k != "dbtable");
    options.push((
        "query".into(),
        format!("SELECT id * 2 AS twice FROM {t} WHERE id < 10"),
    ));
    let read = library()?.batch_read().options(options).run()?;
    let batch = concat(&read.batches());
    let mut twice: Vec<i64> = batch
        .column(0)
        .as_primitive::<Int64Type>()
        .iter()
        .flatten()
        .collect();
    twice.sort();
    assert_eq!(twice, (0..10).map(|i| i * 2).collect::<Vec<_>>());
    Ok(())
}

/// A table for filters: NaN, -0 and infinities, strings whose byte order differs from a
/// linguistic order, padded `char`, NULLs everywhere.
fn filter_table() -> String {
    let t = table("filters");
    sql(&format!(
        "CREATE TABLE {t} (id bigint, name text, code char(3), x double precision, f real, \
           amount numeric(10,2), day date, ts timestamp, tz timestamptz, flag boolean, \
           bin bytea, big numeric, tags text[]); \
         INSERT INTO {t} VALUES \
           (1, 'apple', 'ab', 'NaN', '-0', 12.50, '2024-01-01', '2024-01-01 10:00', \
            '2024-01-01 10:00+00', true, '\\x01', 1.5, '{{a}}'), \
           (2, 'Banana', 'abc', '-0', '0', 12.49, '2023-12-31', '2024-01-01 09:59:59.999999', \
            '2024-01-01 09:00+00', false, '\\x0102', 2, NULL), \
           (3, 'éclair', NULL, 'Infinity', 'NaN', -1, NULL, NULL, NULL, NULL, NULL, NULL, '{{}}'), \
           (4, NULL, 'z', '-Infinity', '-Infinity', NULL, '2024-06-01', '2030-01-01', \
            '2030-01-01+00', true, '\\x', 3.25, NULL), \
           (5, 'zebra', 'ab ', 1.5, 1.5, 100, '1999-01-01', '1999-01-01', '1999-01-01+00', false, \
            '\\xff', NULL, '{{b,c}}'), \
           (6, 'Zoo', 'Zoo', NULL, NULL, 0, '2024-01-01', NULL, NULL, NULL, NULL, NULL, NULL), \
           (NULL, 'apple pie', NULL, 0, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"
    ));
    t
}

fn lit(literal: Literal) -> Value {
    Value::Literal(literal)
}

/// Each filter with whether PostgreSQL evaluates it as Spark does.
fn filters() -> Vec<(Filter, bool)> {
    let date = |days: i32| lit(Literal::Date32(Some(days)));
    let decimal = |value: i128| {
        lit(Literal::Decimal128 {
            value: Some(value),
            precision: 10,
            scale: 2,
        })
    };
    let micros_2024 = 1_704_103_200_000_000; // 2024-01-01T10:00:00
    vec![
        (Filter::Gt(col("id"), 2i64.into()), true),
        (Filter::Lt(4i64.into(), col("id")), true),
        (
            Filter::In(
                col("id"),
                vec![1i64.into(), 3i64.into(), lit(Literal::Int64(None))],
            ),
            true,
        ),
        (Filter::In(col("id"), vec![]), true),
        (
            Filter::NullSafeEq(col("name"), lit(Literal::Utf8(None))),
            true,
        ),
        (Filter::NullSafeEq(col("id"), 5i64.into()), true),
        (Filter::Lt(col("name"), "a".into()), true),
        (Filter::Ge(col("name"), "Zoo".into()), true),
        (Filter::Gt(col("name"), "zebra".into()), true),
        (Filter::StartsWith(col("name"), "app".into()), true),
        (Filter::EndsWith(col("name"), "a".into()), true),
        (Filter::Contains(col("name"), "cla".into()), true),
        (Filter::Contains(col("name"), "".into()), true),
        (Filter::Eq(col("x"), f64::NAN.into()), true),
        (Filter::Gt(col("x"), 1.0f64.into()), true),
        (Filter::Eq(col("x"), 0.0f64.into()), true),
        (Filter::Eq(col("f"), (-0.0f32).into()), true),
        (Filter::Lt(col("f"), f32::NAN.into()), true),
        (Filter::Ge(col("amount"), decimal(1250)), true),
        (Filter::Lt(col("day"), date(19_723)), true),
        // `timestamp` reads as Spark's `timestamp` (no preferTimestampNTZ): an instant in the
        // session's time zone, in which PostgreSQL compares it too.
        (
            Filter::Ge(col("ts"), lit(Literal::Timestamp(Some(micros_2024)))),
            true,
        ),
        (
            Filter::Ge(col("ts"), lit(Literal::TimestampNtz(Some(micros_2024)))),
            false,
        ),
        (
            Filter::Lt(col("tz"), lit(Literal::Timestamp(Some(micros_2024)))),
            true,
        ),
        (Filter::Eq(col("flag"), true.into()), true),
        (Filter::Eq(col("bin"), vec![1u8].into()), true),
        (Filter::Gt(col("bin"), vec![1u8].into()), true),
        (Filter::IsNull(col("name")), true),
        (Filter::IsNotNull(col("tags")), true),
        (
            Filter::Eq(col("id"), 1i64.into()).or(Filter::IsNull(col("name"))),
            true,
        ),
        (!Filter::Eq(col("id"), 3i64.into()), true),
        (
            !Filter::In(col("id"), vec![1i64.into(), lit(Literal::Int64(None))]),
            true,
        ),
        (Filter::AlwaysFalse, true),
        // PostgreSQL compares char(n) without its trailing spaces, Spark with them.
        (Filter::Eq(col("code"), "ab ".into()), false),
        // An unconstrained numeric is rounded by the read.
        (
            Filter::Eq(
                col("big"),
                lit(Literal::Decimal128 {
                    value: Some(15),
                    precision: 38,
                    scale: 1,
                }),
            ),
            false,
        ),
        (Filter::Eq(col("id"), col("id")), false),
        (Filter::Eq(col("x"), 1.5f32.into()), false),
        (
            Filter::Eq(col("id"), 1i64.into()).and(Filter::Eq(col("code"), "z".into())),
            false,
        ),
        (Filter::Unsupported(vec![200, 1, 2]), false),
    ]
}

fn sorted(batch: &RecordBatch) -> Vec<String> {
    let mut rows: Vec<String> = (0..batch.num_rows())
        .map(|i| format!("{:?}", batch.slice(i, 1).columns()))
        .collect();
    rows.sort();
    rows
}

#[test]
fn accepted_filters_return_the_rows_that_spark_keeps_and_others_are_left_to_spark(
) -> sparkds::Result<()> {
    let t = filter_table();
    let all = concat(
        &library()?
            .batch_read()
            .options(options(&t))
            .run()?
            .batches(),
    );
    assert_eq!(all.num_rows(), 7);
    for (filter, accepted) in filters() {
        let read = library()?
            .batch_read()
            .options(options(&t))
            .filters(vec![filter.clone()])
            .run()?;
        assert_eq!(
            read.filters_accepted,
            Some(vec![accepted]),
            "whether {filter:?} is accepted"
        );
        let returned = concat(&[vec![all.slice(0, 0)], read.batches()].concat());
        let expected = if accepted {
            filter_batch(std::slice::from_ref(&filter), &all)
                .map_err(|e| sparkds::Error::usage(e.to_string()))?
        } else {
            all.clone()
        };
        assert_eq!(
            sorted(&returned),
            sorted(&expected),
            "the rows of {filter:?}"
        );
    }
    Ok(())
}

#[test]
fn every_filter_together_returns_the_rows_that_spark_keeps() -> sparkds::Result<()> {
    let t = filter_table();
    let all = concat(
        &library()?
            .batch_read()
            .options(options(&t))
            .run()?
            .batches(),
    );
    let conjuncts = vec![
        Filter::IsNotNull(col("id")),
        Filter::Lt(col("name"), "zz".into()),
        Filter::Eq(col("code"), "ab".into()),
    ];
    let read = library()?
        .batch_read()
        .options(options(&t))
        .filters(conjuncts.clone())
        .limit(100)
        .run()?;
    assert_eq!(read.filters_accepted, Some(vec![true, true, false]));
    // A limit is not pushed past a filter that Spark still evaluates.
    assert_eq!(read.limit_accepted, None);
    let returned = concat(&[vec![all.slice(0, 0)], read.batches()].concat());
    let kept =
        filter_batch(&conjuncts[..2], &all).map_err(|e| sparkds::Error::usage(e.to_string()))?;
    assert_eq!(sorted(&returned), sorted(&kept));
    let ids: Vec<i64> = concat(&[kept])
        .column_by_name("id")
        .map(|c| c.as_primitive::<Int64Type>().iter().flatten().collect())
        .unwrap_or_default();
    // apple, Banana, zebra, Zoo: 'é' is above 'zz' in byte order.
    assert_eq!(ids.len(), 4);
    Ok(())
}

/// A database of the shared server where `standard_conforming_strings` is off, as old
/// applications have it: there, a backslash in a string literal of the SQL text escapes.
fn nonstandard_database() -> &'static str {
    const NAME: &str = "sparkds_nonstandard";
    static MADE: OnceLock<()> = OnceLock::new();
    MADE.get_or_init(|| {
        // Two statements: CREATE DATABASE cannot run in the transaction of a multi-statement
        // string.
        server().admin(&format!("CREATE DATABASE {NAME} OWNER {USER}"));
        server().admin(&format!(
            "ALTER DATABASE {NAME} SET standard_conforming_strings = off"
        ));
    });
    NAME
}

/// The table `patterns` of `database`: `names`, with their ids, bound as values.
fn pattern_table(database: &str, names: &[&str]) -> sparkds::Result<()> {
    let failed = |e: postgres::Error| sparkds::Error::usage(e.to_string());
    let mut client = server().client_of(database);
    let setting = client
        .query_one("SHOW standard_conforming_strings", &[])
        .map(|row| row.get::<_, String>(0));
    assert_eq!(setting.ok().as_deref(), Some("off"));
    client
        .batch_execute("CREATE TABLE patterns (id bigint, name text)")
        .map_err(failed)?;
    for (id, name) in (0i64..).zip(names) {
        client
            .execute("INSERT INTO patterns VALUES ($1, $2)", &[&id, name])
            .map_err(failed)?;
    }
    Ok(())
}

#[test]
fn patterns_with_wildcards_backslashes_and_quotes_hold_without_standard_conforming_strings(
) -> sparkds::Result<()> {
    let database = nonstandard_database();
    let names = [
        "50%_off\\ it's",
        "50% off",
        "50_off",
        "a\\b",
        "a_b",
        "a%b",
        "axb",
        "it's",
        "!bang",
        "bang!",
        "C:\\dir\\",
        "'",
    ];
    pattern_table(database, &names)?;
    let mut options = options("patterns");
    for (key, value) in options.iter_mut() {
        if key == "url" {
            *value = value.replace("/sparkds", &format!("/{database}"));
        }
    }
    let all = concat(
        &library()?
            .batch_read()
            .options(options.clone())
            .run()?
            .batches(),
    );
    assert_eq!(all.num_rows(), names.len());
    let literals = [
        "50%_off\\",
        "%",
        "_",
        "\\",
        "'",
        "it's",
        "!",
        "a\\b",
        "\\dir\\",
        "x",
    ];
    for literal in literals {
        for filter in [
            Filter::StartsWith(col("name"), literal.into()),
            Filter::EndsWith(col("name"), literal.into()),
            Filter::Contains(col("name"), literal.into()),
        ] {
            let read = library()?
                .batch_read()
                .options(options.clone())
                .filters(vec![filter.clone()])
                .run()?;
            assert_eq!(read.filters_accepted, Some(vec![true]), "{filter:?}");
            let returned = concat(&[vec![all.slice(0, 0)], read.batches()].concat());
            let expected = filter_batch(std::slice::from_ref(&filter), &all)
                .map_err(|e| sparkds::Error::usage(e.to_string()))?;
            assert_eq!(
                sorted(&returned),
                sorted(&expected),
                "the rows of {filter:?}"
            );
        }
    }
    Ok(())
}

#[test]
fn filters_are_left_to_spark_with_push_down_predicate_false() -> sparkds::Result<()> {
    let t = filter_table();
    let read = library()?
        .batch_read()
        .options(with(options(&t), &[("pushDownPredicate", "false")]))
        .filters(vec![Filter::Gt(col("id"), 2i64.into())])
        .run()?;
    assert_eq!(read.filters_accepted, Some(vec![false]));
    assert_eq!(read.num_rows(), 7);
    Ok(())
}

#[test]
fn a_filter_that_would_bind_too_many_values_is_left_to_spark() -> sparkds::Result<()> {
    let t = filter_table();
    // 1,600 values at most, of which a partition's bounds and the time zone keep 3: each is a
    // column of the statement that binds them.
    let many = |n: i64| Filter::In(col("id"), (0..n).map(Value::from).collect());
    let read = library()?
        .batch_read()
        .options(options(&t))
        .filters(vec![many(1_597), many(2)])
        .run()?;
    assert_eq!(read.filters_accepted, Some(vec![true, false]));
    // Ids 1 to 6; not the row without one.
    assert_eq!(read.num_rows(), 6);
    Ok(())
}

/// The value of row `row` of `array` as a literal of its Spark type.
fn literal_at(array: &dyn sparkds::arrow_array::Array, row: usize) -> Literal {
    use sparkds::arrow_array::types::{Decimal128Type, TimestampMicrosecondType};
    use sparkds::arrow_schema::{DataType, TimeUnit};
    if array.is_null(row) {
        return Literal::Null;
    }
    match array.data_type() {
        DataType::Int64 => Literal::Int64(Some(array.as_primitive::<Int64Type>().value(row))),
        DataType::Boolean => Literal::Boolean(Some(array.as_boolean().value(row))),
        DataType::Date32 => Literal::Date32(Some(array.as_primitive::<Date32Type>().value(row))),
        DataType::Decimal128(precision, scale) => Literal::Decimal128 {
            value: Some(array.as_primitive::<Decimal128Type>().value(row)),
            precision: *precision,
            scale: u8::try_from(*scale).expect("a scale of 0 to 38"),
        },
        DataType::Timestamp(TimeUnit::Microsecond, zone) => {
            let micros = array.as_primitive::<TimestampMicrosecondType>().value(row);
            match zone {
                Some(_) => Literal::Timestamp(Some(micros)),
                None => Literal::TimestampNtz(Some(micros)),
            }
        }
        other => panic!("no literal of {other} in this test"),
    }
}

#[test]
fn values_at_the_ends_of_each_type_written_as_constants_find_their_rows() -> sparkds::Result<()> {
    // Integers, booleans, decimals, dates and timestamps are written into the statement as
    // constants (the planner then knows them): each value that a read returns, pushed back as
    // `column = value`, finds exactly the rows that hold it, BC dates and the last instants
    // included (each `timestamp` a day inside PostgreSQL's first and Spark's last instant, as
    // a read in any time zone holds them).
    let t = table("constants");
    sql(&format!(
        "CREATE TABLE {t} (id int, big bigint, amount numeric(38,6), flag boolean, day date, \
           ts timestamp, tz timestamptz); \
         INSERT INTO {t} VALUES \
           (1, -9223372036854775808, -99999999999999999999999999999999.999999, true, \
            '4714-11-24 BC', '4714-11-25 00:00 BC', '4714-11-24 00:00+00 BC'), \
           (2, 9223372036854775807, 0.000001, false, '0044-03-15 BC', \
            '0044-03-15 12:34:56.789012 BC', '0044-03-15 12:34:56.789012+00 BC'), \
           (3, 0, -0.5, NULL, '9999-12-31', '9999-12-31 23:59:59.999999', \
            '9999-12-31 23:59:59.999999+00'), \
           (4, -1, 12.5, true, '5874897-12-31', '294247-01-09 04:00:54.775807', \
            '294247-01-10 04:00:54.775807+00');"
    ));
    for ntz in ["false", "true"] {
        let options = with(options(&t), &[("preferTimestampNTZ", ntz)]);
        let all = concat(
            &library()?
                .batch_read()
                .options(options.clone())
                .run()?
                .batches(),
        );
        assert_eq!(all.num_rows(), 4);
        let ids = all.column_by_name("id").expect("id");
        for column in ["big", "amount", "flag", "day", "ts", "tz"] {
            let array = all.column_by_name(column).expect("the column");
            for row in 0..all.num_rows() {
                let literal = literal_at(array.as_ref(), row);
                if literal.is_null() {
                    continue;
                }
                let expected: Vec<String> = (0..all.num_rows())
                    .filter(|&other| literal_at(array.as_ref(), other) == literal)
                    .map(|other| format!("{:?}", ids.slice(other, 1)))
                    .collect();
                let read = library()?
                    .batch_read()
                    .options(options.clone())
                    .filters(vec![Filter::Eq(col(column), lit(literal.clone()))])
                    .run()?;
                assert_eq!(
                    read.filters_accepted,
                    Some(vec![true]),
                    "{column} = {literal:?}"
                );
                let found = concat(&[vec![all.slice(0, 0)], read.batches()].concat());
                let found_ids = found.column_by_name("id").expect("id");
                let found: Vec<String> = (0..found.num_rows())
                    .map(|r| format!("{:?}", found_ids.slice(r, 1)))
                    .collect();
                assert_eq!(
                    found, expected,
                    "{column} = {literal:?} (preferTimestampNTZ {ntz})"
                );
            }
        }
    }
    Ok(())
}
