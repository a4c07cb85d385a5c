//! Nothing lost: every row of a read arrives or the task fails, whatever the size of the rows;
//! a value that one side cannot hold is an error naming its column, never another value; a
//! filter whose literal PostgreSQL cannot hold is left to Spark; a failed write leaves no
//! staging table behind; a write's table is one name, resolved once.

use std::sync::Arc;

use spark_datasource::filters::{col, Filter, Literal, Value};
use spark_datasource::{BatchRead as _, BatchReader as _, DataSource as _, Options, TaskContext};
use spark_datasource_postgres::connector::Source;
use sparkds::arrow_array::{
    Array as _, Int64Array, RecordBatch, StructArray, TimestampMicrosecondArray,
};
use sparkds::arrow_schema::{DataType, Field, Schema, TimeUnit};
use sparkds::steps::{Checks, DataWriter, OpenSource, TaskContext as HostTask, TaskIds};
use sparkds::WriteMode;

use crate::helpers::{library, message, options, sql, table};
use crate::write::{ids_of, staged};

fn with(mut options: Vec<(String, String)>, more: &[(&str, &str)]) -> Vec<(String, String)> {
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    options
}

/// The options of a read of `query`.
fn query(query: &str) -> Vec<(String, String)> {
    let mut options = options("");
    options.retain(|(k, _)| k != "dbtable");
    options.push(("query".into(), query.into()));
    options
}

#[test]
fn rows_of_a_mebibyte_at_the_default_fetchsize_all_arrive() -> spark_datasource::Result<()> {
    // 2.1 GiB of text: one batch of `fetchsize` (65,536) rows would pass the 2 GiB that
    // Arrow's 32-bit offsets address; its builder panicked on the read's thread, and Spark
    // read 0 rows without an error.
    let rows = 2_100;
    let options = query(&format!(
        "SELECT i AS id, repeat('x', 1048576) AS body FROM generate_series(1, {rows}) AS i"
    ));
    let source = Source::create("postgres", Options::new(options))?;
    let reader = source.reader(source.schema()?)?;
    let partition = reader.partitions()?.remove(0);
    let (mut read, mut batches) = (0, 0);
    // Counted as they come, not kept: the host's drivers would hold all 2.1 GiB.
    for batch in reader.read(partition, &TaskContext::for_tests(0, 0))? {
        let batch = batch?;
        read += batch.num_rows();
        batches += 1;
    }
    assert_eq!(read, rows);
    // 32 MiB a batch: 32 rows of 1 MiB (the 32nd reaches it), 66 batches.
    assert_eq!(batches, rows.div_ceil(32));
    Ok(())
}

#[test]
fn a_batch_closes_at_its_byte_budget() -> sparkds::Result<()> {
    let read = library()?
        .batch_read()
        .options(with(
            query("SELECT i AS id, repeat('y', 3000) AS body FROM generate_series(1, 22) AS i"),
            &[("batchBytes", "10000")],
        ))
        .run()?;
    let sizes: Vec<usize> = read.partitions[0]
        .batches
        .iter()
        .map(RecordBatch::num_rows)
        .collect();
    // The fourth row of 3,000 bytes reaches 10,000; the id's 8 bytes do not count.
    assert_eq!(sizes, [4, 4, 4, 4, 4, 2]);
    let error = message(
        library()?
            .batch_read()
            .options(with(options("t"), &[("batchBytes", "0")]))
            .run(),
    );
    assert!(
        error.contains("option `batchBytes` must be from 1 to 1073741824 (1 GiB), got 0"),
        "{error}"
    );
    Ok(())
}

#[test]
fn every_value_that_spark_holds_reads_and_the_others_fail_naming_column_value_and_row(
) -> sparkds::Result<()> {
    // PostgreSQL's first date and timestamp, the years about 0001 and 9999 that Spark's
    // literals name in the zones east and west of UTC, and its last date: Spark holds them all.
    let t = table("edges");
    sql(&format!(
        "CREATE TABLE {t} (id int PRIMARY KEY, day date, ts timestamp, tz timestamptz); \
         INSERT INTO {t} VALUES (1, '4714-11-24 BC', '4714-11-24 00:00 BC', \
             '4714-11-24 00:00+00 BC'), \
           (2, '0001-01-01', '0001-01-01 00:00', '0001-01-01 00:00+00'), \
           (3, '9999-12-31', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999+00'), \
           (4, '5874897-12-31', '294247-01-10 04:00:54.775807', \
             '294247-01-10 04:00:54.775807+00');"
    ));
    let read = library()?.batch_read().options(options(&t)).run()?;
    assert_eq!(read.num_rows(), 4);
    // Past what Spark holds: the infinities, and the instants after 294247-01-10.
    let past = [
        (
            "day",
            "'infinity'",
            "an infinite date, which Spark's date cannot hold",
        ),
        (
            "ts",
            "'-infinity'",
            "an infinite timestamp, which Spark's timestamp cannot hold",
        ),
        (
            "ts",
            "'294276-12-31 23:59:59'",
            "the timestamp 294276-12-31 23:59:59, after Spark's last instant, 294247-01-10 \
             04:00:54.775807 UTC",
        ),
        (
            "tz",
            "'294247-01-10 04:00:54.775808+00'",
            "the timestamp 294247-01-10 04:00:54.775808, after Spark's last instant",
        ),
    ];
    for (column, value, why) in past {
        let t = table("past");
        sql(&format!(
            "CREATE TABLE {t} (id int, k text, day date, ts timestamp, tz timestamptz, \
               PRIMARY KEY (id, k)); \
             INSERT INTO {t} (id, k, day) VALUES (1, 'a', '2024-01-01'); \
             INSERT INTO {t} (id, k, {column}) VALUES (7, 'b''c', {value});"
        ));
        let error = message(library()?.batch_read().options(options(&t)).run());
        assert!(
            error.contains(&format!("column `{column}` of `dbtable` {t} holds {why}")),
            "{error}"
        );
        assert!(error.contains(", in the row (id, k) = (7, b'c)"), "{error}");
        // A query has no key: the message names none.
        let mut query_options = options(&t);
        query_options.retain(|(k, _)| k != "dbtable");
        query_options.push(("query".into(), format!("SELECT {column} FROM {t}")));
        let error = message(library()?.batch_read().options(query_options).run());
        assert!(
            error.contains(why) && !error.contains("in the row"),
            "{error}"
        );
    }
    Ok(())
}

fn lit(literal: Literal) -> Value {
    Value::Literal(literal)
}

#[test]
fn a_filter_whose_literal_postgresql_cannot_hold_is_left_to_spark() -> sparkds::Result<()> {
    let t = table("instants");
    sql(&format!(
        "CREATE TABLE {t} (id bigint, day date, ts timestamp, tz timestamptz); \
         INSERT INTO {t} SELECT i, DATE '2024-01-01' + i, TIMESTAMP '2024-01-01' + i * \
           INTERVAL '1 hour', TIMESTAMPTZ '2024-01-01 00:00+00' + i * INTERVAL '1 hour' \
           FROM generate_series(1, 50) AS i;"
    ));
    let edge = -9_223_372_036_854_775_000;
    let filters = [
        // Shifted to PostgreSQL's epoch, the literal wrapped to a date in 294,000 AD: the
        // filter returned no row where Spark keeps every one.
        Filter::Gt(col("tz"), lit(Literal::Timestamp(Some(edge)))),
        !Filter::Gt(col("tz"), lit(Literal::Timestamp(Some(edge)))),
        Filter::Ge(col("ts"), lit(Literal::TimestampNtz(Some(i64::MIN)))),
        // Shifted, this one was PostgreSQL's -infinity.
        Filter::Gt(
            col("ts"),
            lit(Literal::TimestampNtz(Some(i64::MIN + 946_684_800_000_000))),
        ),
        Filter::Gt(col("day"), lit(Literal::Date32(Some(i32::MIN)))),
        Filter::Lt(col("day"), lit(Literal::Date32(Some(i32::MAX)))),
    ];
    for filter in filters {
        let read = library()?
            .batch_read()
            .options(options(&t))
            .filters(vec![filter.clone()])
            .run()?;
        assert_eq!(read.filters_accepted, Some(vec![false]), "{filter:?}");
        assert_eq!(read.num_rows(), 50, "{filter:?}");
    }
    // Spark's last instant (in 294247) is one that PostgreSQL holds: it binds.
    let read = library()?
        .batch_read()
        .options(options(&t))
        .filters(vec![Filter::Lt(
            col("tz"),
            lit(Literal::Timestamp(Some(i64::MAX))),
        )])
        .run()?;
    assert_eq!(read.filters_accepted, Some(vec![true]));
    assert_eq!(read.num_rows(), 50);
    Ok(())
}

#[test]
fn an_in_list_past_what_a_statement_binds_is_left_to_spark() -> sparkds::Result<()> {
    let t = table("long_in");
    sql(&format!(
        "CREATE TABLE {t} (id bigint); INSERT INTO {t} SELECT generate_series(1, 3000);"
    ));
    let in_list =
        |count: i64| Filter::In(col("id"), (1..=count).map(|i| Value::from(i * 2)).collect());
    for (count, accepted) in [(1_000, true), (2_000, false), (20_000, false)] {
        let read = library()?
            .batch_read()
            .options(options(&t))
            .filters(vec![in_list(count)])
            .run()?;
        assert_eq!(read.filters_accepted, Some(vec![accepted]), "{count}");
        let expected = if accepted { count as usize } else { 3_000 };
        assert_eq!(read.num_rows(), expected, "{count}");
    }
    // Two lists that fit alone but not together: the second is left to Spark.
    let read = library()?
        .batch_read()
        .options(options(&t))
        .filters(vec![in_list(1_000), in_list(1_000)])
        .run()?;
    assert_eq!(read.filters_accepted, Some(vec![true, false]));
    assert_eq!(read.num_rows(), 1_000);
    Ok(())
}

/// Rows of `(id, at)`, `at` a timestamp without a time zone.
fn instants(ids: &[i64], at: &[i64]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("at", DataType::Timestamp(TimeUnit::Microsecond, None), true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.to_vec())),
            Arc::new(TimestampMicrosecondArray::from(at.to_vec())),
        ],
    )
    .expect("a valid batch")
}

#[test]
fn a_spark_value_that_postgresql_cannot_hold_fails_the_write_by_column() -> sparkds::Result<()> {
    let t = table("far_instants");
    sql(&format!("CREATE TABLE {t} (id bigint, at timestamp)"));
    // Shifted to PostgreSQL's epoch the first wrapped to 294247 AD, the second became
    // -infinity: both were written without an error.
    for at in [i64::MIN + 1, i64::MIN + 946_684_800_000_000] {
        let error = message(
            library()?
                .batch_write()
                .options(options(&t))
                .task([instants(&[1, 2], &[0, at])])
                .run(),
        );
        assert!(
            error.contains("cannot write the column `at`: it holds the timestamp 290")
                && error.contains("BC, outside PostgreSQL's range of 4714-11-24 BC"),
            "{error}"
        );
    }
    assert_eq!(ids_of(&t), Vec::<i64>::new());
    Ok(())
}

/// The bytes of `batch` as a data writer of the host takes them.
fn data(batch: RecordBatch) -> arrow_data::ArrayData {
    StructArray::from(batch).into_data()
}

/// The data writer of attempt `attempt` of the task of `partition`, of a batch write whose
/// writer serialized `state`, for batches like `like`.
fn task_writer(
    like: &RecordBatch,
    state: Option<&[u8]>,
    partition: i32,
    attempt: i32,
) -> sparkds::Result<DataWriter> {
    let ids = TaskIds {
        task_id: i64::from(partition * 10 + attempt),
        stage_id: 0,
        partition_id: partition,
        attempt_number: attempt,
    };
    let task = HostTask::new(ids, None);
    DataWriter::create(
        library()?,
        task,
        like.schema(),
        state,
        -1,
        Checks::default(),
    )
}

#[test]
fn an_abort_with_the_messages_spark_gives_drops_every_staging_table() -> sparkds::Result<()> {
    let t = table("aborted_steps");
    sql(&format!("CREATE TABLE {t} (id bigint, at timestamp)"));
    let source = OpenSource::create(library()?, "postgres", &options(&t))?;
    let batch = instants(&[1, 2], &[0, 1]);
    let writer =
        source.create_writer(&batch.schema(), "abort-steps-1", WriteMode::Append, false)?;
    let state = writer.serialize()?;
    let task = |partition, attempt| task_writer(&batch, state.as_deref(), partition, attempt);
    // Task 0 commits.
    let mut committed = task(0, 0)?;
    committed.write(data(batch.clone()))?;
    let message = committed.commit()?;
    // Task 1 fails on a value, and is aborted; its retry is lost with its executor (closed,
    // neither committed nor aborted); task 2 still runs when the driver aborts.
    let mut failed = task(1, 0)?;
    assert!(failed.write(data(instants(&[3], &[i64::MIN + 1]))).is_err());
    failed.abort()?;
    let mut retry = task(1, 1)?;
    retry.write(data(batch.clone()))?;
    drop(retry);
    let mut running = task(2, 0)?;
    running.write(data(batch.clone()))?;
    let prefix = "sparkds_abortsteps1_";
    // Three staging tables and the write's anchor.
    assert_eq!(staged(prefix).len(), 4);
    writer.abort(-1, &[Some(message), None, None])?;
    assert_eq!(staged(prefix), Vec::<String>::new());
    assert_eq!(ids_of(&t), Vec::<i64>::new());
    drop(running);
    Ok(())
}

#[test]
fn a_commit_that_fails_leaves_no_staging_table() -> sparkds::Result<()> {
    let t = table("refused");
    sql(&format!(
        "CREATE TABLE {t} (id bigint CHECK (id < 100), at timestamp)"
    ));
    let source = OpenSource::create(library()?, "postgres", &options(&t))?;
    let schema = instants(&[], &[]).schema();
    let writer = source.create_writer(&schema, "refused-commit-1", WriteMode::Append, false)?;
    let state = writer.serialize()?;
    let mut messages = Vec::new();
    for (partition_id, ids) in [(0, [1, 2]), (1, [100, 101])] {
        let rows = instants(&ids, &[0, 0]);
        let mut task = task_writer(&rows, state.as_deref(), partition_id, 0)?;
        task.write(data(rows))?;
        messages.push(task.commit()?);
    }
    let prefix = "sparkds_refusedcommit1_";
    // Two staging tables and the write's anchor.
    assert_eq!(staged(prefix).len(), 3);
    // The CHECK refuses the second task's rows when the commit publishes them. A host that
    // does not call abort after a failed commit (Spark does) found the staging tables left.
    let error = message(writer.commit(-1, &messages));
    assert!(error.contains("violates check constraint"), "{error}");
    assert_eq!(staged(prefix), Vec::<String>::new());
    assert_eq!(ids_of(&t), Vec::<i64>::new());
    Ok(())
}

#[test]
fn a_table_that_appeared_after_the_write_was_planned_is_not_written_into() -> sparkds::Result<()> {
    let t = table("appeared");
    let source = OpenSource::create(library()?, "postgres", &options(&t))?;
    let batch = instants(&[1, 2], &[0, 0]);
    let writer = source.create_writer(&batch.schema(), "appeared-1", WriteMode::Append, false)?;
    let state = writer.serialize()?;
    let mut task = task_writer(&batch, state.as_deref(), 0, 0)?;
    task.write(data(batch))?;
    let staged_rows = task.commit()?;
    // Someone else creates the table, with columns of their own, before the commit.
    sql(&format!(
        "CREATE TABLE {t} (id bigint, at timestamp, owner text NOT NULL DEFAULT 'them')"
    ));
    let error = message(writer.commit(-1, &[staged_rows]));
    assert!(error.contains("already exists"), "{error}");
    assert_eq!(ids_of(&t), Vec::<i64>::new());
    assert_eq!(staged("sparkds_appeared1_"), Vec::<String>::new());
    Ok(())
}

#[test]
fn the_table_of_a_write_is_one_name_resolved_once() -> sparkds::Result<()> {
    let victim = table("victim");
    sql(&format!("CREATE TABLE {victim} (id bigint)"));
    let error = message(
        library()?
            .batch_write()
            .options(options(&format!("{victim}; DROP TABLE {victim}")))
            .task([instants(&[1], &[0])])
            .run(),
    );
    assert!(
        error.contains("option `dbtable` of a write must be a table name, [schema.]table"),
        "{error}"
    );
    assert_eq!(ids_of(&victim), Vec::<i64>::new());
    // A quoted name keeps its case and its spaces; a qualified one its schema.
    let t = table("Mixed Case");
    for dbtable in [format!("\"{t}\""), format!("public.\"{t}\"")] {
        library()?
            .batch_write()
            .options(options(&dbtable))
            .task([instants(&[1], &[0])])
            .run()?;
    }
    assert_eq!(ids_of(&format!("\"{t}\"")), [1, 1]);
    Ok(())
}
