//! Streaming writes: `df.writeStream.format("tail_stream").option("path", dir).start()`. Each
//! epoch becomes one file, published whole, and a replayed epoch writes nothing.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use sparkds::arrow_array::{Int64Array, RecordBatch, StringArray};
use sparkds::arrow_schema::{DataType, Field, Schema};

use sparkds::testing::{library, listing, message};

/// Events `ids`, with a null name for odd ids.
fn events(ids: std::ops::Range<i64>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let names: StringArray = ids
        .clone()
        .map(|id| (id % 2 == 0).then(|| format!("event {id}")))
        .collect();
    RecordBatch::try_new(
        schema,
        vec![Arc::new(Int64Array::from_iter_values(ids)), Arc::new(names)],
    )
    .expect("a valid batch")
}

fn path(dir: &Path) -> String {
    dir.to_string_lossy().to_string()
}

#[test]
fn each_epoch_becomes_one_file_and_a_replay_writes_nothing() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let library = library()?;
    let write = || {
        library
            .streaming_write()
            .option("path", path(dir.path()))
            .epoch([[events(0..2)], [events(2..3)]])
            .epoch([[events(3..5)], [events(5..6)]])
            .run()
    };
    let epochs = write()?;
    assert!(epochs.iter().all(|epoch| epoch.committed));
    let first = listing(dir.path());
    insta::assert_snapshot!(first);
    // The same query (same query ID) restarted replays its epochs: nothing is written twice.
    write()?;
    assert_eq!(listing(dir.path()), first);
    Ok(())
}

#[test]
fn a_failed_task_aborts_its_epoch_only() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let epochs = library()?
        .streaming_write()
        .option("path", path(dir.path()))
        .epoch([[events(0..2)], [events(2..3)]])
        .epoch([[events(3..5)], [events(5..6)]])
        .failing_task(1, 0)
        .run()?;
    assert!(epochs[0].committed && epochs[1].aborted);
    let files: Vec<String> = fs::read_dir(dir.path())
        .expect("readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .filter(|name| !name.starts_with('_'))
        .collect();
    assert_eq!(files, vec!["sparkds-streaming-write-0000000000.jsonl"]);
    assert_eq!(
        listing(&dir.path().join("_staging")),
        "",
        "the aborted epoch left staged files"
    );
    Ok(())
}

#[test]
fn a_stream_reads_what_a_stream_wrote() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let library = library()?;
    library
        .streaming_write()
        .option("path", path(dir.path()))
        .epoch([[events(0..2)]])
        .epoch([[events(2..3)]])
        .run()?;
    let read = library
        .stream_read()
        .option("path", path(dir.path()))
        .micro_batches(1)
        .run()?;
    insta::assert_snapshot!(sparkds::render::batches(&read.batches()));
    Ok(())
}

#[test]
fn a_write_without_a_path_says_how_to_give_one() -> sparkds::Result<()> {
    let error = message(
        library()?
            .streaming_write()
            .epoch([[events(0..1)]])
            .run()
            .map(|_| ()),
    );
    assert!(
        error.contains(
            "`create_writer` failed: missing option `path`: set it with .option(\"path\", ...), it must be \
             a local path or a file: URI"
        ),
        "{error}"
    );
    Ok(())
}
