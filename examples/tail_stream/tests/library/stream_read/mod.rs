//! Micro-batch reads: `spark.readStream.format("tail_stream").option("path", dir).load()`
//! over log files that the tests append to by hand.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::Int64Type;
use sparkds::arrow_array::RecordBatch;

use sparkds::testing::{library, message};

/// Two log files; the last line of the second is still being written (no line break yet).
fn logs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(dir.path().join("app-1.log"), "alpha\nbeta\ngamma\n").expect("written");
    fs::write(dir.path().join("app-2.log"), "delta\r\nepsilon\nzet").expect("written");
    fs::write(dir.path().join("_hidden.log"), "never read\n").expect("written");
    dir
}

fn path(dir: &Path) -> String {
    dir.to_string_lossy().to_string()
}

/// `(file, position)` of every row: what identifies a line.
fn keys(batches: &[RecordBatch]) -> Vec<(String, i64)> {
    batches
        .iter()
        .flat_map(|b| {
            let files = b.column(0).as_string::<i32>();
            let positions = b.column(1).as_primitive::<Int64Type>();
            (0..b.num_rows())
                .map(|i| (files.value(i).to_string(), positions.value(i)))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn offsets_advance_by_file_and_a_restart_reads_every_line_exactly_once() -> sparkds::Result<()> {
    let dir = logs();
    let stream = library()?
        .stream_read()
        .options([
            ("path", path(dir.path())),
            ("max_lines_per_trigger", "2".into()),
        ])
        .micro_batches(4)
        .restart_after(2)
        .run()?;
    let offsets: Vec<String> = stream
        .offsets()
        .iter()
        .zip(stream.rows_per_micro_batch())
        .map(|((start, end), rows)| format!("{start} -> {end}: {rows} rows"))
        .collect();
    insta::assert_snapshot!(offsets.join("\n"));
    let keys = keys(&stream.batches());
    let distinct: BTreeSet<(String, i64)> = keys.iter().cloned().collect();
    assert_eq!(
        keys.len(),
        distinct.len(),
        "a line was read twice: {keys:?}"
    );
    // Every complete line, and not the one still being written.
    assert_eq!(keys.len(), 5);
    Ok(())
}

#[test]
fn a_micro_batch_reads_the_complete_lines_of_its_offset_range() -> sparkds::Result<()> {
    let dir = logs();
    let stream = library()?
        .stream_read()
        .option("path", path(dir.path()))
        .micro_batches(2)
        .run()?;
    insta::assert_snapshot!(sparkds::render::batches(&stream.micro_batches[0].batches));
    // Nothing was appended since: the second micro-batch is empty.
    assert_eq!(stream.micro_batches[1].start, stream.micro_batches[1].end);
    Ok(())
}

#[test]
fn commit_records_the_committed_offset() -> sparkds::Result<()> {
    let dir = logs();
    // Spark commits a micro-batch's end when it plans the next one.
    library()?
        .stream_read()
        .option("path", path(dir.path()))
        .micro_batches(2)
        .run()?;
    let recorded = fs::read_to_string(dir.path().join("_committed.json")).expect("recorded");
    insta::assert_snapshot!(recorded);
    Ok(())
}

#[test]
fn a_missing_directory_says_what_to_do() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let missing = dir.path().join("nowhere");
    let error = message(
        library()?
            .stream_read()
            .option("path", path(&missing))
            .micro_batches(1)
            .run(),
    );
    assert!(
        error.contains("nowhere` does not exist: create it, or check the option `path`"),
        "{error}"
    );
    Ok(())
}

#[test]
fn a_bad_option_names_the_option() -> sparkds::Result<()> {
    let dir = logs();
    let error = message(
        library()?
            .stream_read()
            .options([
                ("path", path(dir.path())),
                ("max_lines_per_trigger", "many".into()),
            ])
            .micro_batches(1)
            .run(),
    );
    assert!(
        error.contains(
            "`create_stream_reader` failed: option `max_lines_per_trigger` must be a non-negative \
             integer, got `many`"
        ),
        "{error}"
    );
    Ok(())
}

#[test]
fn passes_every_protocol_of_the_conformance_check() -> sparkds::Result<()> {
    let dir = logs();
    let library = sparkds::cdylib(concat!("spark_datasource_", env!("CARGO_PKG_NAME")))?;
    let report = sparkds::check::Check::new(library)
        .options([
            ("path", path(dir.path())),
            ("max_lines_per_trigger", "2".into()),
        ])
        // The test's own directory: the streaming write may add to it.
        .scratch()
        .run();
    insta::assert_snapshot!(report.to_string());
    assert!(report.passed(), "{report}");
    Ok(())
}
