//! Writes: each task stages its rows, the commit publishes them in one transaction; an
//! overwrite truncates in that same transaction; a retried task adds its rows once; an abort,
//! or a failed task, leaves the target as it was and no staging table behind.

use std::sync::Arc;

use spark_datasource::arrow_array::{Int64Array, RecordBatch, StringArray};
use spark_datasource::arrow_schema::{DataType, Field, Schema};
use spark_datasource::{
    DataSource, DataWriter as _, Options, TaskContext, Write as _, WriteInfo, WriteMode,
    Writer as _,
};
use spark_datasource_postgres::connector::Source;
use sparkds::WriteMode as HostMode;

use crate::helpers::{library, options, server, sql, table};

/// Rows `ids`, with a name that is NULL for odd ids.
fn rows(ids: std::ops::Range<i64>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let names: StringArray = ids
        .clone()
        .map(|id| (id % 2 == 0).then(|| format!("name {id}")))
        .collect();
    RecordBatch::try_new(
        schema,
        vec![Arc::new(Int64Array::from_iter_values(ids)), Arc::new(names)],
    )
    .expect("a valid batch")
}

/// The ids of `table`, in order.
pub fn ids_of(table: &str) -> Vec<i64> {
    server()
        .client()
        .query(&format!("SELECT id FROM {table} ORDER BY id"), &[])
        .expect("the table reads")
        .iter()
        .map(|row| row.get::<_, i64>(0))
        .collect()
}

/// The staging tables whose name starts with `prefix`.
pub fn staged(prefix: &str) -> Vec<String> {
    server()
        .client()
        .query(
            "SELECT relname::text FROM pg_class WHERE left(relname, length($1)) = $1",
            &[&prefix],
        )
        .expect("the catalog reads")
        .iter()
        .map(|row| row.get::<_, String>(0))
        .collect()
}

/// The staging table that a commit message names, and the prefix of its write's tables.
pub fn staging_prefix(message: &[u8]) -> String {
    let text = String::from_utf8_lossy(message);
    let start = text
        .find("sparkds_")
        .expect("the message names its staging table");
    let name: String = text[start..].chars().take_while(|c| *c != '"').collect();
    // sparkds_<id>_<partition>_<attempt>: the write's prefix ends after the id.
    let id_end = "sparkds_".len() + name["sparkds_".len()..].find('_').expect("an id") + 1;
    name[..id_end].to_string()
}

#[test]
fn appends_add_rows_and_an_overwrite_replaces_them_in_one_step() -> sparkds::Result<()> {
    let t = table("people");
    sql(&format!(
        "CREATE TABLE {t} (id bigint PRIMARY KEY, name text)"
    ));
    let write = |batches: Vec<RecordBatch>, mode| -> sparkds::Result<()> {
        let mut write = library()?.batch_write().options(options(&t)).mode(mode);
        for batch in batches {
            write = write.task([batch]);
        }
        let outcome = write.run()?;
        assert!(outcome.committed);
        for message in outcome.messages.iter().flatten() {
            assert_eq!(staged(&staging_prefix(message)), Vec::<String>::new());
        }
        Ok(())
    };
    write(vec![rows(0..5), rows(5..10)], HostMode::Append)?;
    write(vec![rows(10..12)], HostMode::Append)?;
    assert_eq!(ids_of(&t), (0..12).collect::<Vec<_>>());
    write(vec![rows(100..103), rows(103..104)], HostMode::Truncate)?;
    assert_eq!(ids_of(&t), [100, 101, 102, 103]);
    Ok(())
}

#[test]
fn a_failed_task_leaves_the_target_unchanged_and_nothing_staged() -> sparkds::Result<()> {
    let t = table("unchanged");
    sql(&format!(
        "CREATE TABLE {t} (id bigint, name text); INSERT INTO {t} VALUES (1, 'one');"
    ));
    for mode in [HostMode::Append, HostMode::Truncate] {
        let outcome = library()?
            .batch_write()
            .options(options(&t))
            .mode(mode)
            .task([rows(10..20)])
            .task([rows(20..30)])
            .failing_task(1)
            .run()?;
        assert!(outcome.aborted && !outcome.committed);
        assert_eq!(ids_of(&t), [1]);
        let message = outcome.messages[0].as_ref().expect("task 0 committed");
        assert_eq!(staged(&staging_prefix(message)), Vec::<String>::new());
    }
    Ok(())
}

#[test]
fn a_retried_task_adds_its_rows_once() -> spark_datasource::Result<()> {
    let t = table("retried");
    sql(&format!("CREATE TABLE {t} (id bigint, name text)"));
    let source = Source::create("postgres", Options::new(options(&t)))?;
    let mut writer = source.writer(WriteInfo {
        schema: rows(0..1).schema(),
        mode: WriteMode::Append,
        query_id: "retried-query-1".into(),
        streaming: false,
    })?;
    // The first attempt stages its rows and dies before it commits.
    let mut first = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
    first.write(rows(0..50))?;
    drop(first);
    let mut second = writer.data_writer(&TaskContext::for_tests(0, 1), None)?;
    second.write(rows(0..50))?;
    let message = second.commit()?;
    let other = {
        let mut task = writer.data_writer(&TaskContext::for_tests(1, 0), None)?;
        task.write(rows(50..60))?;
        task.commit()?
    };
    writer.commit(None, vec![message, other])?;
    assert_eq!(ids_of(&t), (0..60).collect::<Vec<_>>());
    assert_eq!(staged("sparkds_retriedquery1_"), Vec::<String>::new());
    Ok(())
}

#[test]
fn an_abort_drops_what_every_task_staged() -> spark_datasource::Result<()> {
    let t = table("aborted");
    sql(&format!("CREATE TABLE {t} (id bigint, name text)"));
    let source = Source::create("postgres", Options::new(options(&t)))?;
    let mut writer = source.writer(WriteInfo {
        schema: rows(0..1).schema(),
        mode: WriteMode::Truncate,
        query_id: "aborted-query-2".into(),
        streaming: false,
    })?;
    let mut task = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
    task.write(rows(0..10))?;
    let message = task.commit()?;
    // A task whose attempt never reported: its table is found by the write's prefix.
    let mut lost = writer.data_writer(&TaskContext::for_tests(1, 0), None)?;
    lost.write(rows(10..20))?;
    // The two tables and the write's anchor.
    assert_eq!(staged("sparkds_abortedquery2_").len(), 3);
    writer.abort(None, vec![Some(message), None])?;
    assert_eq!(staged("sparkds_abortedquery2_"), Vec::<String>::new());
    assert_eq!(ids_of(&t), Vec::<i64>::new());
    Ok(())
}

#[test]
fn a_task_attempt_that_outlives_the_abort_leaves_nothing_staged() -> spark_datasource::Result<()> {
    let t = table("outlived");
    sql(&format!("CREATE TABLE {t} (id bigint, name text)"));
    let source = Source::create("postgres", Options::new(options(&t)))?;
    let mut writer = source.writer(WriteInfo {
        schema: rows(0..1).schema(),
        mode: WriteMode::Append,
        query_id: "outlived-query-3".into(),
        streaming: false,
    })?;
    // An attempt that Spark gave up on, held between the driver's abort and its own commit.
    let mut late = writer.data_writer(&TaskContext::for_tests(0, 0), None)?;
    late.write(rows(0..10))?;
    writer.abort(None, vec![None])?;
    assert_eq!(staged("sparkds_outlivedquery3_"), Vec::<String>::new());
    let error = late.commit().err().map(|e| e.to_string());
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.starts_with("cannot stage rows in sparkds_outlivedquery3_0_0")),
        "{error:?}"
    );
    // An attempt that starts only after the abort creates no table.
    let error = writer
        .data_writer(&TaskContext::for_tests(1, 0), None)
        .err()
        .map(|e| e.to_string());
    assert!(
        error.as_deref().is_some_and(|e| e.contains(
            "was committed or aborted before this task attempt started (its anchor table \
             sparkds_outlivedquery3_live is gone): the attempt stages nothing"
        )),
        "{error:?}"
    );
    assert_eq!(staged("sparkds_outlivedquery3_"), Vec::<String>::new());
    assert_eq!(ids_of(&t), Vec::<i64>::new());
    Ok(())
}

#[test]
fn a_missing_table_is_created_with_the_types_and_nullability_of_the_dataframe(
) -> sparkds::Result<()> {
    let t = table("created");
    library()?
        .batch_write()
        .options(options(&t))
        .task([rows(0..3)])
        .run()?;
    assert_eq!(ids_of(&t), [0, 1, 2]);
    let types: Vec<String> = server()
        .client()
        .query(
            "SELECT format_type(atttypid, atttypmod) || CASE WHEN attnotnull THEN ' NOT NULL' \
             ELSE '' END FROM pg_attribute \
             WHERE attrelid = $1::text::regclass AND attnum > 0 ORDER BY attnum",
            &[&t],
        )
        .expect("the catalog reads")
        .iter()
        .map(|row| row.get(0))
        .collect();
    // `id` is not nullable in the DataFrame: NOT NULL, as Spark's JDBC source creates it, and
    // not nullable when read back.
    assert_eq!(types, ["bigint NOT NULL", "text"]);
    let read = library()?.batch_read().options(options(&t)).run()?;
    let nullable: Vec<bool> = read
        .schema
        .fields()
        .iter()
        .map(|f| f.is_nullable())
        .collect();
    assert_eq!(nullable, [false, true]);
    Ok(())
}

#[test]
fn a_dataframe_column_that_the_table_lacks_is_named() {
    let t = table("narrow");
    sql(&format!("CREATE TABLE {t} (id bigint)"));
    let error = crate::helpers::message(library().and_then(|l| {
        l.batch_write()
            .options(options(&t))
            .task([rows(0..3)])
            .run()
    }));
    assert!(
        error.contains(&format!(
            "the DataFrame's column `name` is not a column of the table {t}; its columns are: id"
        )),
        "{error}"
    );
}
