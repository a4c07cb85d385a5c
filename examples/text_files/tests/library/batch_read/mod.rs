//! Batch reads: `spark.read.format("text_files").option("path", dir).load()`, over files that
//! the tests write by hand, as another tool would.

use std::fs;
use std::path::Path;

use sparkds::arrow_array::RecordBatch;

use crate::helpers::{library, message};

/// A directory of two CSV files with a header, and a file that the source does not read.
fn people() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |name: &str, text: &str| fs::write(dir.path().join(name), text).expect("written");
    write(
        "a.csv",
        "id,name,score\n1,Ada,9.5\n2,,7\n3,\"Lovelace, A.\",\n4,\"\",8.25\n",
    );
    write("b.csv", "id,name,score\n5,Grace,6\n6,Edsger,10\n");
    write("notes.txt", "not data\n");
    dir
}

fn path(dir: &Path) -> String {
    dir.to_string_lossy().to_string()
}

/// The rows of `batches`, one line each, sorted: the order of tasks is not the order of files.
fn sorted_rows(batches: &[RecordBatch]) -> Vec<String> {
    let table = sparkds::render::batches(batches);
    let mut rows: Vec<String> = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.contains(" id "))
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

#[test]
fn infers_the_schema_from_the_first_lines() -> sparkds::Result<()> {
    let dir = people();
    let read = library()?
        .batch_read()
        .option("path", path(dir.path()))
        .run()?;
    insta::assert_snapshot!(sparkds::render::schema(&read.schema));
    Ok(())
}

#[test]
fn reads_nulls_and_empty_strings_apart() -> sparkds::Result<()> {
    let dir = people();
    let read = library()?
        .batch_read()
        .option("path", path(dir.path()))
        .run()?;
    insta::assert_snapshot!(sparkds::render::batches(&read.batches()));
    Ok(())
}

#[test]
fn plans_byte_range_splits_from_the_sizes_of_the_files() -> sparkds::Result<()> {
    let dir = people();
    let read = library()?
        .batch_read()
        .options([("path", path(dir.path())), ("split_bytes", "24".into())])
        .run()?;
    insta::assert_snapshot!(sparkds::render::partitions(&read.partition_bytes()));
    Ok(())
}

#[test]
fn reads_every_row_once_whatever_the_split_size() -> sparkds::Result<()> {
    let dir = people();
    let library = library()?;
    let whole = library
        .batch_read()
        .option("path", path(dir.path()))
        .run()?;
    let expected = sorted_rows(&whole.batches());
    assert_eq!(expected.len(), 6);
    for split_bytes in [1, 2, 3, 5, 7, 11, 16, 31, 64] {
        let read = library
            .batch_read()
            .options([
                ("path", path(dir.path())),
                ("split_bytes", split_bytes.to_string()),
            ])
            .run()?;
        assert_eq!(
            sorted_rows(&read.batches()),
            expected,
            "split_bytes={split_bytes}"
        );
    }
    Ok(())
}

#[test]
fn reads_only_the_requested_columns_up_to_the_limit() -> sparkds::Result<()> {
    let dir = people();
    let read = library()?
        .batch_read()
        .option("path", path(dir.path()))
        .columns(["score", "id"])
        .limit(2)
        .run()?;
    assert!(read.pruned);
    assert_eq!(read.limit_accepted, Some(true));
    // One partition, since both files fit in one split: the limit holds for the whole read.
    insta::assert_snapshot!(sparkds::render::batches(&read.batches()));
    Ok(())
}

#[test]
fn reads_with_the_schema_the_query_gives() -> sparkds::Result<()> {
    let dir = people();
    let schema = sparkds::ddl::parse("id int not null, name string, score string")?;
    let read = library()?
        .batch_read()
        .option("path", path(dir.path()))
        .schema(schema)
        .run()?;
    insta::assert_snapshot!(sparkds::render::batches(&read.batches()));
    Ok(())
}

#[test]
fn reads_json_lines_and_semicolon_separated_files_without_header() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("events.jsonl"),
        "{\"id\": 1, \"kind\": \"start\", \"tags\": [\"a\"]}\n\n{\"id\": 2, \"ok\": true}\n",
    )
    .expect("written");
    fs::write(dir.path().join("plain.csv"), "1;x\n2;y\n").expect("written");
    let library = library()?;
    let json = library
        .batch_read()
        .options([("path", path(dir.path())), ("format", "jsonl".into())])
        .run()?;
    let csv = library
        .batch_read()
        .options([
            ("path", path(dir.path())),
            ("delimiter", ";".into()),
            ("header", "false".into()),
        ])
        .run()?;
    insta::assert_snapshot!(format!(
        "{}{}\n{}{}",
        sparkds::render::schema(&json.schema),
        sparkds::render::batches(&json.batches()),
        sparkds::render::schema(&csv.schema),
        sparkds::render::batches(&csv.batches())
    ));
    Ok(())
}

#[test]
fn a_malformed_line_names_its_file_and_line_number() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("bad.csv"),
        "id,name\n1,a\n2,b\n3,c,extra\n4,d\n",
    )
    .expect("written");
    let schema = sparkds::ddl::parse("id bigint, name string")?;
    // Small splits: the bad line is read by a split that starts in the middle of the file.
    let error = message(
        library()?
            .batch_read()
            .options([("path", path(dir.path())), ("split_bytes", "10".into())])
            .schema(schema)
            .run(),
    );
    assert!(
        error.contains("bad.csv` line 4: 3 field(s), but the table has 2 column(s) (id, name)"),
        "{error}"
    );
    Ok(())
}

#[test]
fn a_value_of_the_wrong_type_names_the_column_and_the_fix() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(dir.path().join("t.csv"), "id\n1\n2\nthree\n").expect("written");
    let error = message(
        library()?
            .batch_read()
            .options([("path", path(dir.path())), ("infer_rows", "2".into())])
            .run(),
    );
    assert!(
        error.contains(
            "t.csv` line 4: column `id`: `three` is not a bigint; fix the line, or read the \
             column as string with .schema(...)"
        ),
        "{error}"
    );
    Ok(())
}

#[test]
fn an_empty_directory_asks_for_a_schema() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let library = library()?;
    let error = message(library.batch_read().option("path", path(dir.path())).run());
    assert!(error.contains("no `.csv` data in"), "{error}");
    assert!(
        error.contains("give the schema with .schema(\"id bigint, name string\")"),
        "{error}"
    );
    let read = library
        .batch_read()
        .option("path", path(dir.path()))
        .schema(sparkds::ddl::parse("id bigint")?)
        .run()?;
    assert!(read.partitions.is_empty());
    Ok(())
}

#[test]
fn a_bad_option_says_what_it_must_be() -> sparkds::Result<()> {
    let library = library()?;
    let error = message(
        library
            .batch_read()
            .options([("path", "/tmp"), ("format", "xml")])
            .run(),
    );
    assert!(
        error.contains("create: option `format` must be `csv` or `jsonl`, got `xml`"),
        "{error}"
    );
    let error = message(library.batch_read().option("delimiter", ";").run());
    assert!(
        error.contains("missing option `path`: set it with .option(\"path\", ...)"),
        "{error}"
    );
    Ok(())
}

#[test]
fn passes_every_protocol_of_the_conformance_check() -> sparkds::Result<()> {
    let dir = people();
    let library = sparkds::cdylib(concat!("spark_datasource_", env!("CARGO_PKG_NAME")))?;
    let report = sparkds::check::Check::new(library)
        .options([("path", path(dir.path())), ("split_bytes", "32".into())])
        .run();
    insta::assert_snapshot!(report.to_string());
    assert!(report.passed(), "{report}");
    Ok(())
}
