//! Batch reads: `spark.read.format("text_files").option("path", dir).load()`, over files that
//! the tests write by hand, as another tool would.

use std::fs;
use std::path::Path;

use sparkds::arrow_array::RecordBatch;

use sparkds::testing::{library, message};

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
fn infers_the_schema_from_every_record() -> sparkds::Result<()> {
    let dir = people();
    let read = library()?
        .batch_read()
        .option("path", path(dir.path()))
        .run()?;
    insta::assert_snapshot!(sparkds::render::schema(&read.schema));
    Ok(())
}

#[test]
fn reads_empty_values_as_null_as_spark_does() -> sparkds::Result<()> {
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
            .options([
                ("path", path(dir.path())),
                ("split_bytes", "10".into()),
                ("mode", "FAILFAST".into()),
            ])
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
            .options([("path", path(dir.path())), ("mode", "FAILFAST".into())])
            .schema(sparkds::ddl::parse("id bigint")?)
            .run(),
    );
    assert!(
        error.contains(
            "t.csv` line 4: column `id`: `three` is not a bigint; fix the line, read the \
             column as string with .schema(...), or read with mode=PERMISSIVE to get null"
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
        error.contains("`create` failed: option `format` must be `csv` or `jsonl`, got `xml`"),
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
        // The test's own directory: the writes may replace what is there.
        .scratch()
        .run();
    insta::assert_snapshot!(report.to_string());
    assert!(report.passed(), "{report}");
    Ok(())
}

/// A file with a malformed record of each kind: too many fields, a value that is not an int,
/// too few fields.
fn malformed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("m.csv"),
        "a,b\n1,x\n2,y,z\nthree,w\n4\n5,v\n",
    )
    .expect("written");
    dir
}

fn rows_in_mode(mode: &str, schema: &str) -> sparkds::Result<String> {
    let dir = malformed();
    let read = library()?
        .batch_read()
        .options([("path", path(dir.path())), ("mode", mode.into())])
        .schema(sparkds::ddl::parse(schema)?)
        .run()?;
    Ok(sparkds::render::batches(&read.batches()))
}

#[test]
fn permissive_reads_what_it_can_and_keeps_the_malformed_text() -> sparkds::Result<()> {
    // The rows Spark 4.3 reads from the same file with the same schema.
    insta::assert_snapshot!(format!(
        "{}\n{}",
        rows_in_mode("PERMISSIVE", "a int, b string")?,
        rows_in_mode("PERMISSIVE", "a int, b string, _corrupt_record string")?
    ));
    Ok(())
}

#[test]
fn dropmalformed_leaves_the_malformed_records_out() -> sparkds::Result<()> {
    insta::assert_snapshot!(rows_in_mode(
        "DROPMALFORMED",
        "a int, b string, _corrupt_record string"
    )?);
    Ok(())
}

#[test]
fn failfast_names_the_first_malformed_record() -> sparkds::Result<()> {
    let error = message(rows_in_mode("FAILFAST", "a int, b string"));
    assert!(
        error.contains("m.csv` line 3: 3 field(s), but the table has 2 column(s) (a, b)"),
        "{error}"
    );
    Ok(())
}

#[test]
fn the_column_of_malformed_records_must_be_a_string() -> sparkds::Result<()> {
    let error = message(rows_in_mode(
        "PERMISSIVE",
        "a int, b string, _corrupt_record int",
    ));
    assert!(
        error.contains(
            "column `_corrupt_record` holds the text of malformed records (the option \
             `columnNameOfCorruptRecord`), so it must be a nullable string, not Int32"
        ),
        "{error}"
    );
    Ok(())
}

#[test]
fn infers_from_every_record_of_every_file_as_spark_does() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // A column whose first 256 values are integers and whose 257th is a fraction, `NA` as the
    // null value, dates, timestamps, a header with a duplicate and an empty name, and a
    // second file that widens an int to a bigint.
    let mut text = String::from("\u{feff}precip,day,at,x,x,,flag\n");
    for i in 0..256 {
        text.push_str(&format!(
            "0,2013-01-{:02},2013-01-01T10:00:00Z,1,a,NA,true\n",
            i % 28 + 1
        ));
    }
    text.push_str("0.05,2013-02-01,2013-01-01 11:00:00,NA,b,,FALSE\n\n");
    fs::write(dir.path().join("a.csv"), text).expect("written");
    fs::write(
        dir.path().join("b.csv"),
        "precip,day,at,x,x,,flag\n1,2013-03-01,2013-01-02,99999999999,c,,\n",
    )
    .expect("written");
    let options = |extra: &[(&str, &str)]| {
        let mut all = vec![("path".to_string(), path(dir.path()))];
        all.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        all
    };
    let library = library()?;
    let read = library
        .batch_read()
        .options(options(&[("nullValue", "NA")]))
        .run()?;
    let sampled = library
        .batch_read()
        .options(options(&[("nullValue", "NA"), ("samplingRatio", "0.5")]))
        .run()?;
    let strings = library
        .batch_read()
        .options(options(&[("inferSchema", "false")]))
        .run()?;
    assert_eq!(
        read.batches().iter().map(|b| b.num_rows()).sum::<usize>(),
        258
    );
    insta::assert_snapshot!(format!(
        "{}\nsamplingRatio=0.5:\n{}\ninferSchema=false:\n{}",
        sparkds::render::schema(&read.schema),
        sparkds::render::schema(&sampled.schema),
        sparkds::render::schema(&strings.schema)
    ));
    Ok(())
}

#[test]
fn reads_values_across_lines_with_multiline() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("notes.csv"),
        "id,note\n1,\"two\nlines\"\n2,one line\n",
    )
    .expect("written");
    let library = library()?;
    let multi = library
        .batch_read()
        .options([("path", path(dir.path())), ("multiLine", "true".into())])
        .run()?;
    // Without multiLine, as in Spark, the open quote ends with the line and the next line is
    // a record of its own.
    let single = library
        .batch_read()
        .options([("path", path(dir.path()))])
        .run()?;
    insta::assert_snapshot!(format!(
        "multiLine=true:\n{}{}\nmultiLine=false:\n{}{}",
        sparkds::render::schema(&multi.schema),
        sparkds::render::batches(&multi.batches()),
        sparkds::render::schema(&single.schema),
        sparkds::render::batches(&single.batches())
    ));
    Ok(())
}

#[test]
fn json_lines_are_inferred_as_sparks_json_reader_does() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("e.jsonl"),
        "{\"b\": 1, \"a\": \"x\"}\nnot json\n{\"b\": 1.5, \"c\": true}\n",
    )
    .expect("written");
    let library = library()?;
    let read = |mode: &str| {
        library
            .batch_read()
            .options([
                ("path", path(dir.path())),
                ("format", "jsonl".into()),
                ("mode", mode.into()),
            ])
            .run()
    };
    let permissive = read("PERMISSIVE")?;
    let dropped = read("DROPMALFORMED")?;
    insta::assert_snapshot!(format!(
        "{}{}\nDROPMALFORMED:\n{}{}",
        sparkds::render::schema(&permissive.schema),
        sparkds::render::batches(&permissive.batches()),
        sparkds::render::schema(&dropped.schema),
        sparkds::render::batches(&dropped.batches())
    ));
    let error = message(read("FAILFAST"));
    assert!(error.contains("e.jsonl` line 2: not valid JSON"), "{error}");
    Ok(())
}

#[test]
fn options_spark_does_not_read_the_same_way_are_refused_with_the_fix() -> sparkds::Result<()> {
    let library = library()?;
    let error = |options: &[(&str, &str)]| {
        let mut all = vec![("path", "/tmp")];
        all.extend_from_slice(options);
        message(library.batch_read().options(all).run())
    };
    assert!(error(&[("encoding", "ISO-8859-1")]).contains(
        "option `encoding` must be UTF-8, got `ISO-8859-1`: this source reads UTF-8 \
             only; convert the files first, such as with `iconv -f ISO-8859-1 -t UTF-8`"
    ));
    assert!(error(&[("mode", "lenient")])
        .contains("option `mode` must be PERMISSIVE, DROPMALFORMED or FAILFAST, got `LENIENT`"));
    assert!(error(&[("samplingRatio", "2")])
        .contains("option `samplingRatio` must be a number in (0, 1], such as 0.1, got `2`"));
    assert!(error(&[("timeZone", "Europe/Paris")]).contains("fixed offset such as +01:00"));
    assert!(error(&[("format", "jsonl"), ("header", "true")])
        .contains("option `header` applies to format=csv only"));
    assert!(error(&[("infer_rows", "100")]).contains("set `samplingRatio`"));
    Ok(())
}

#[test]
fn reads_integers_past_a_bigint_as_decimals_and_special_doubles() -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    fs::write(
        dir.path().join("n.csv"),
        "big,x,when\n123456789012345678901,NaN,2014-02-01\n-5,-Inf,2014-12-31\n,1.5d,\n",
    )
    .expect("written");
    let read = library()?
        .batch_read()
        .option("path", path(dir.path()))
        .run()?;
    insta::assert_snapshot!(format!(
        "{}{}",
        sparkds::render::schema(&read.schema),
        sparkds::render::batches(&read.batches())
    ));
    Ok(())
}

#[test]
fn a_count_reads_batches_of_no_column_with_their_row_counts() -> sparkds::Result<()> {
    // Spark's count(*) prunes every column away.
    let dir = people();
    let read = library()?
        .batch_read()
        .option("path", path(dir.path()))
        .columns(Vec::<String>::new())
        .run()?;
    let batches = read.batches();
    assert!(batches.iter().all(|b| b.num_columns() == 0));
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 6);
    Ok(())
}

#[test]
fn a_count_finds_the_records_and_the_errors_that_a_full_read_finds() -> sparkds::Result<()> {
    // A line of only non-ASCII white space is blank (as `str::trim` says), a comment may
    // begin with a character of two bytes, and text that is not UTF-8 fails both reads at its
    // line, past a buffer of good lines that the count checks at once.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut text = String::from("id,name\n1,é\n\u{a0}\u{2003}\n§ a comment\n");
    for i in 2..20_000 {
        text.push_str(&format!("{i},n{i}\n"));
    }
    let mut bytes = text.into_bytes();
    let good = bytes.clone();
    fs::write(dir.path().join("a.csv"), &good).expect("written");
    let library = library()?;
    let read = |columns: Option<Vec<String>>| {
        // The schema given: inference would fail first on the text that is not UTF-8.
        let mut read = library
            .batch_read()
            .options([("path", path(dir.path())), ("comment", "§".to_string())])
            .schema(sparkds::ddl::parse("id int, name string")?);
        if let Some(columns) = columns {
            read = read.columns(columns);
        }
        read.run()
            .map(|r| r.batches().iter().map(RecordBatch::num_rows).sum::<usize>())
    };
    assert_eq!(read(None)?, 19_999);
    assert_eq!(read(Some(Vec::new()))?, 19_999);
    let at = bytes.len();
    bytes.extend_from_slice(b"20000,\xff\n20001,x\n");
    fs::write(dir.path().join("a.csv"), &bytes).expect("written");
    for columns in [None, Some(Vec::new())] {
        let error = message(read(columns.clone()));
        assert!(
            error.contains(&format!("the line at byte {at} is not UTF-8 text")),
            "{columns:?}: {error}"
        );
    }
    Ok(())
}

/// A table whose lines straddle any split boundary: a byte order mark, a header, CRLF and LF
/// line breaks, a blank line, quoted delimiters, an escaped quote, lines of many lengths, and
/// no line break after the last line.
fn straddling() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut text = String::from("\u{feff}id,name,score\r\n");
    for i in 0..40 {
        let name = match i % 5 {
            0 => format!("\"x,{i}\""),
            1 => format!("\"say \\\"{i}\\\"\""),
            2 => "é".repeat(i),
            3 => String::new(),
            _ => "n".repeat(3 * i),
        };
        let end = if i % 3 == 0 { "\r\n" } else { "\n" };
        text.push_str(&format!("{i},{name},{}.5{end}", i * 7));
        if i == 17 {
            text.push('\n');
        }
    }
    text.push_str("40,last,1");
    fs::write(dir.path().join("a.csv"), text).expect("written");
    dir
}

#[test]
fn every_line_straddling_a_split_boundary_is_read_once() -> sparkds::Result<()> {
    let dir = straddling();
    let size = fs::metadata(dir.path().join("a.csv"))
        .expect("written")
        .len();
    let library = library()?;
    let read = |split_bytes: u64, columns: Option<Vec<String>>| {
        let mut read = library.batch_read().options([
            ("path", path(dir.path())),
            ("split_bytes", split_bytes.to_string()),
        ]);
        if let Some(columns) = columns {
            read = read.columns(columns);
        }
        read.run()
    };
    let whole = read(size, None)?;
    let expected = sorted_rows(&whole.batches());
    assert_eq!(expected.len(), 41);
    assert!(
        expected.iter().any(|r| r.contains("say \"3")),
        "{expected:?}"
    );
    for split_bytes in 1..=size {
        let rows = sorted_rows(&read(split_bytes, None)?.batches());
        assert_eq!(rows, expected, "split_bytes={split_bytes}");
        // A count parses no column: it must find the same records.
        let counted: usize = read(split_bytes, Some(Vec::new()))?
            .batches()
            .iter()
            .map(RecordBatch::num_rows)
            .sum();
        assert_eq!(counted, 41, "count(*) with split_bytes={split_bytes}");
    }
    Ok(())
}

#[test]
fn json_lines_straddling_a_split_boundary_are_read_once_whatever_their_key_order(
) -> sparkds::Result<()> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut text = String::new();
    for i in 0..30 {
        let line = match i % 4 {
            0 => format!(r#"{{"id":{i},"name":"n{i}","score":{i}.5}}"#),
            // Another key order, an escaped key and string, and an unknown key.
            1 => format!(r#"{{"score":{i}.25,"other":[1],"n\u0061me":"q\"{i}","id":{i}}}"#),
            // A key given twice keeps its last value; a missing key is null.
            2 => format!(r#"{{"id":-1,"id":{i}}}"#),
            _ => format!(r#"{{"name":null,"id":{i},"score":-{i}e1}}"#),
        };
        text.push_str(&line);
        text.push_str(if i % 2 == 0 { "\r\n" } else { "\n" });
    }
    text.push_str(r#"{"id":30,"name":"last"}"#);
    fs::write(dir.path().join("a.jsonl"), &text).expect("written");
    let library = library()?;
    let schema = sparkds::ddl::parse("id bigint, name string, score double")?;
    let read = |split_bytes: usize| {
        library
            .batch_read()
            .options([
                ("path", path(dir.path())),
                ("format", "jsonl".into()),
                ("split_bytes", split_bytes.to_string()),
            ])
            .schema(schema.clone())
            .run()
    };
    let whole = read(text.len())?;
    let expected = sorted_rows(&whole.batches());
    assert_eq!(expected.len(), 31);
    for wanted in ["q\"1 ", "n0 ", "-30"] {
        assert!(
            expected.iter().any(|r| r.contains(wanted)),
            "{wanted}: {expected:?}"
        );
    }
    assert!(!expected.iter().any(|r| r.contains("-1 ")), "{expected:?}");
    for split_bytes in 1..=text.len() {
        let rows = sorted_rows(&read(split_bytes)?.batches());
        assert_eq!(rows, expected, "split_bytes={split_bytes}");
    }
    Ok(())
}
