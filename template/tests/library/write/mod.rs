//! Writes: `df.write.format(name).option("path", ...).save()` and `writeStream`. Tasks stage
//! their files; only `commit` publishes them, in one step.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use sparkds::testing::{exports, listing, message};

use crate::library;

/// Rows `ids` with their labels, one null among them, as Spark would write them.
fn rows(ids: std::ops::Range<i64>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("label", DataType::Utf8, true),
    ]));
    let labels: StringArray = ids
        .clone()
        .map(|id| (id % 2 == 0).then(|| format!("written {id}")))
        .collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(labels),
        ],
    )
    .expect("a valid batch")
}

/// Snapshot settings: task and write IDs differ from run to run, so the files show `[id]`.
fn stable() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"task-\d+", "task-[id]");
    settings.add_filter(r"sparkds-batch-write-\d+-\d+", "sparkds-batch-write-[id]");
    settings
}

#[test]
fn a_batch_write_publishes_the_files_of_every_task_on_commit() -> sparkds::Result<()> {
    if !exports("batch_write") {
        return Ok(());
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().to_string_lossy().to_string();
    let write = library()?
        .batch_write()
        .option("path", &path)
        .task([rows(0..3)])
        .task([rows(3..5)])
        .run()?;
    assert!(write.committed);
    let messages: Vec<String> = write
        .messages
        .iter()
        .map(|m| sparkds::render::bytes(m.as_deref().unwrap_or_default()))
        .collect();
    stable().bind(|| insta::assert_snapshot!("commit_messages", messages.join("\n")));
    stable().bind(|| insta::assert_snapshot!("written_files", listing(dir.path())));
    Ok(())
}

#[test]
fn a_failed_task_aborts_the_write_and_leaves_nothing() -> sparkds::Result<()> {
    if !exports("batch_write") {
        return Ok(());
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().to_string_lossy().to_string();
    let write = library()?
        .batch_write()
        .option("path", &path)
        .task([rows(0..3)])
        .task([rows(3..5)])
        .failing_task(1)
        .run()?;
    assert!(write.aborted && !write.committed);
    assert_eq!(listing(dir.path()), "");
    Ok(())
}

#[test]
fn an_overwrite_replaces_what_was_there() -> sparkds::Result<()> {
    if !exports("batch_write") || !exports("truncate") {
        return Ok(());
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().to_string_lossy().to_string();
    let library = library()?;
    library
        .batch_write()
        .option("path", &path)
        .task([rows(0..4)])
        .run()?;
    library
        .batch_write()
        .option("path", &path)
        .mode(sparkds::WriteMode::Truncate)
        .task([rows(10..12)])
        .run()?;
    stable().bind(|| insta::assert_snapshot!(listing(dir.path())));
    Ok(())
}

#[test]
fn reads_back_what_it_wrote() -> sparkds::Result<()> {
    if !exports("batch_write") || !exports("batch_read") {
        return Ok(());
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().to_string_lossy().to_string();
    let library = library()?;
    library
        .batch_write()
        .option("path", &path)
        .task([rows(0..3)])
        .task([rows(3..5)])
        .run()?;
    let read = library.batch_read().option("path", &path).run()?;
    stable().bind(|| insta::assert_snapshot!(sparkds::render::batches(&read.batches())));
    Ok(())
}

#[test]
fn a_file_uri_names_the_same_directory_as_its_path() -> sparkds::Result<()> {
    if !exports("batch_write") || !exports("batch_read") {
        return Ok(());
    }
    // Spark gives the location of a catalog table as a URI, spaces percent-encoded.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let table = dir.path().join("my table");
    let uri = format!("file://{}", table.display()).replace(' ', "%20");
    let library = library()?;
    library
        .batch_write()
        .option("path", &uri)
        .task([rows(0..3)])
        .run()?;
    let path = table.to_string_lossy().to_string();
    let read = library.batch_read().option("path", &path).run()?;
    assert_eq!(read.num_rows(), 3);
    let error = message(library.batch_read().option("path", "s3://bucket/t").run());
    assert!(
        error.contains("option `path` must be a local path or a file: URI, got `s3://bucket/t`"),
        "{error}"
    );
    Ok(())
}

#[test]
fn a_streaming_write_commits_each_epoch_once() -> sparkds::Result<()> {
    if !exports("streaming_write") {
        return Ok(());
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().to_string_lossy().to_string();
    let epochs = library()?
        .streaming_write()
        .option("path", &path)
        .epoch([[rows(0..2)], [rows(2..3)]])
        .epoch([[rows(3..5)], [rows(5..6)]])
        .epoch([[rows(6..7)], [rows(7..8)]])
        .run()?;
    assert!(epochs.iter().all(|epoch| epoch.committed));
    stable().bind(|| insta::assert_snapshot!(listing(dir.path())));
    Ok(())
}

#[test]
fn a_write_without_a_path_says_how_to_give_one() -> sparkds::Result<()> {
    let library = library()?;
    let error = if exports("batch_write") {
        message(library.batch_write().task([rows(0..1)]).run())
    } else {
        message(
            library
                .streaming_write()
                .epoch([[rows(0..1)]])
                .run()
                .map(|_| ()),
        )
    };
    assert!(
        error.contains(
            "`create_writer` failed: missing option `path`: set it with .option(\"path\", ...), it must be \
             a local path or a file: URI"
        ),
        "{error}"
    );
    Ok(())
}
