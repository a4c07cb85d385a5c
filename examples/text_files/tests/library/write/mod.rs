//! Writes: `df.write.format("text_files").option("path", dir).mode(...).save()`. Tasks stage
//! their part files; only `commit` publishes them, in one step.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use sparkds::arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray};
use sparkds::arrow_schema::{DataType, Field, Schema};

use sparkds::testing::{library, listing, message};

/// Rows `ids`: a name that is null for odd ids and empty for id 2, and a score.
fn rows(ids: std::ops::Range<i64>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
    ]));
    let names: StringArray = ids
        .clone()
        .map(|id| match id {
            2 => Some(String::new()),
            id if id % 2 == 0 => Some(format!("name {id}, \"quoted\"")),
            _ => None,
        })
        .collect();
    let scores: Float64Array = ids.clone().map(|id| Some(id as f64 / 2.0)).collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(names),
            Arc::new(scores),
        ],
    )
    .expect("a valid batch")
}

/// Snapshot settings: task and write IDs differ from run to run.
fn stable() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"task-\d+", "task-[id]");
    settings.add_filter(r"sparkds-batch-write-\d+-\d+", "sparkds-batch-write-[id]");
    settings
}

fn path(dir: &Path) -> String {
    dir.to_string_lossy().to_string()
}

#[test]
fn a_write_publishes_the_part_of_every_task_on_commit() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = library()?
        .batch_write()
        .option("path", path(dir.path()))
        .task([rows(0..3)])
        .task([rows(3..5)])
        .task([])
        .run()?;
    assert!(write.committed);
    let messages: Vec<String> = write
        .messages
        .iter()
        .map(|m| sparkds::render::bytes(m.as_deref().unwrap_or_default()))
        .collect();
    stable().bind(|| insta::assert_snapshot!("commit_messages", messages.join("\n")));
    // The task with no rows leaves no file.
    stable().bind(|| insta::assert_snapshot!("written_files", listing(dir.path())));
    Ok(())
}

#[test]
fn reads_back_what_it_wrote() -> sparkds::Result<()> {
    for format in ["csv", "jsonl"] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let library = library()?;
        let options = [("path", path(dir.path())), ("format", format.to_string())];
        library
            .batch_write()
            .options(options.clone())
            .task([rows(0..3)])
            .task([rows(3..5)])
            .run()?;
        let read = library.batch_read().options(options.clone()).run()?;
        let shown = format!(
            "{}{}",
            sparkds::render::schema(&read.schema),
            sparkds::render::batches(&read.batches())
        );
        // In CSV, as with Spark, an empty string (written `""`) reads as null unless the
        // `nullValue` is something else.
        insta::assert_snapshot!(format!("reads_back_{format}"), shown);
        if format == "csv" {
            let mut apart = options.to_vec();
            apart.push(("nullValue", "NA".to_string()));
            let read = library.batch_read().options(apart).run()?;
            insta::assert_snapshot!(
                "reads_back_csv_nulls_and_empty_strings_apart",
                sparkds::render::batches(&read.batches())
            );
        }
    }
    Ok(())
}

#[test]
fn a_failed_task_aborts_the_write_and_leaves_nothing() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(dir.path().join("old.csv"), "id\n1\n").expect("written");
    let write = library()?
        .batch_write()
        .option("path", path(dir.path()))
        .task([rows(0..3)])
        .task([rows(3..5)])
        .failing_task(1)
        .run()?;
    assert!(write.aborted && !write.committed);
    // What was there before is untouched, and nothing of the write remains.
    assert_eq!(listing(dir.path()), "== old.csv\nid\n1");
    Ok(())
}

#[test]
fn an_overwrite_replaces_what_was_there_in_one_step() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // A file written by another tool is part of the table until the overwrite.
    fs::write(dir.path().join("old.csv"), "id,name,score\n100,old,1\n").expect("written");
    let library = library()?;
    library
        .batch_write()
        .option("path", path(dir.path()))
        .task([rows(0..2)])
        .run()?;
    library
        .batch_write()
        .option("path", path(dir.path()))
        .mode(sparkds::WriteMode::Truncate)
        .task([rows(10..12)])
        .run()?;
    stable().bind(|| insta::assert_snapshot!(listing(dir.path())));
    let read = library
        .batch_read()
        .option("path", path(dir.path()))
        .run()?;
    assert_eq!(read.num_rows(), 2);
    Ok(())
}

#[test]
fn a_value_with_a_line_break_cannot_be_written_as_csv() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let schema = Arc::new(Schema::new(vec![Field::new("text", DataType::Utf8, true)]));
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(StringArray::from(vec!["two\nlines"]))],
    )
    .expect("a valid batch");
    let error = message(
        library()?
            .batch_write()
            .option("path", path(dir.path()))
            .task([batch])
            .run(),
    );
    assert!(
        error.contains(
            "the value of column `text` holds a line break, which a line of CSV cannot: write \
             with the option format=jsonl instead"
        ),
        "{error}"
    );
    Ok(())
}
