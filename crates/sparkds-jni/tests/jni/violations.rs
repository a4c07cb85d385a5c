//! Broken libraries: each violation is INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE, naming
//! the function, the column and the rule.

use spark_datasource_core::library_file::Os;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use sparkds::steps::{Checks, TaskIds};
use sparkds_jni::error::{Error, ErrorClass};
use sparkds_jni::ops;

use crate::helpers::{c_range, fixture, ipc, load, options};

/// The first failure of reading every batch of the first partition of the fixture built with
/// `fault`.
fn read_error(fault: &str, checks: Checks) -> Error {
    read_outcome(fault, checks)
        .unwrap_or_else(|| panic!("the {fault} fixture read without an error"))
}

/// The first failure of reading every batch of the first partition, if any.
fn read_outcome(fault: &str, checks: Checks) -> Option<Error> {
    let library = load(&fixture(Some(fault)));
    let source = ops::create(library, "range", &options(&[("end", "8")])).expect("create");
    let schema = source.schema().expect("schema").expect("a schema");
    let reader = source.create_reader(&schema).expect("createReader");
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    let mut stream = match ops::read(
        library,
        &schema,
        ops::ReadInputs {
            state: state.as_deref(),
            partition: &partitions[0],
            accepted_filters: None,
        },
        TaskIds::default(),
        None,
        checks,
    ) {
        Ok(stream) => stream,
        Err(e) => return Some(e),
    };
    loop {
        match stream.next_batch() {
            Ok(Some(_)) => {}
            Ok(None) => return None,
            Err(e) => return Some(e),
        }
    }
}

#[test]
fn a_sliced_array_is_a_conformance_error_naming_the_function_the_column_and_the_rule() {
    let e = read_error("SLICED_ARRAY", Checks::default());
    assert_eq!(e.class, ErrorClass::Conformance);
    assert_eq!(
        e.message,
        "native data source `range`: `read` (partition 0): batch 0, column `id`: array offset is 1; exported arrays must have offset 0 (rule 13: offset 0 at every level; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-13)"
    );
}

#[test]
fn invalid_utf8_is_found_only_with_full_checks() {
    assert_eq!(read_outcome("INVALID_UTF8", Checks::default()), None);
    let e = read_error("INVALID_UTF8", Checks { full: true });
    assert_eq!(e.class, ErrorClass::Conformance);
    assert!(
        e.message.starts_with("native data source `range`: `read` (partition 0): batch 0, column `name`: fails full validation:")
            && e.message.ends_with("(rule 12: batches pass full validation; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-12)"),
        "{e}"
    );
}

#[test]
fn a_stream_of_another_schema_than_asked_is_refused() {
    let library = load(c_range());
    let source = ops::create(library, "c_range", &[]).expect("create");
    let schema = source.schema().expect("schema").expect("a schema");
    let reader = source.create_reader(&schema).expect("createReader");
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    let id_only = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let e = ops::read(
        library,
        &ipc(&id_only),
        ops::ReadInputs {
            state: state.as_deref(),
            partition: &partitions[0],
            accepted_filters: None,
        },
        TaskIds::default(),
        None,
        Checks::default(),
    )
    .err()
    .expect("refused");
    assert_eq!(e.class, ErrorClass::Conformance);
    assert_eq!(
        e.message,
        "native data source `c_range`: `read` (partition 0): the stream's schema is `id Int64 not null, label Utf8` but `id Int64 not null` was asked for; return exactly the schema to read, after `prune_columns` (rule 19: the stream's schema is the one asked for; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-19)"
    );
}

#[test]
fn a_write_that_keeps_the_batch_without_taking_it_is_refused() {
    let library = load(&fixture(Some("KEEPS_BATCH")));
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let mut writer = ops::create_data_writer(
        library,
        &ipc(&schema),
        None,
        -1,
        TaskIds::default(),
        None,
        Checks::default(),
    )
    .expect("createDataWriter");
    let batch = arrow_array::RecordBatch::try_new(
        schema,
        vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2]))],
    )
    .expect("a batch");
    let e = writer.write_batch(&batch).expect_err("refused");
    assert_eq!(e.class, ErrorClass::Conformance);
    assert_eq!(
        e.message,
        "native data source `range`: `write` (task 0): batch 0 was not taken: its `release` is still set after the call; copy the struct out of `batch` and set `batch->release` to NULL, as the C data interface moves a struct (rule 11: each Arrow struct is released exactly once; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-11)"
    );
}

#[test]
fn a_failing_function_is_a_native_data_source_error_with_its_message() {
    let library = load(c_range());
    let e = ops::create(library, "c_range", &options(&[("end", "ten")]))
        .err()
        .expect("refused");
    assert_eq!(e.class, ErrorClass::NativeError);
    assert_eq!(
        e.message,
        "native data source `c_range`: `create` failed: option `end` must be a non-negative integer, got `ten`"
    );
}

/// How a fault of the conformance fixture is reached on the plugin's path.
#[derive(Clone, Copy)]
enum Path {
    /// Load, create, a reader (filters pushed and, with a column, pruned to it), its partitions
    /// and state, every partition read with the accepted filters checked (the default).
    Read(Option<&'static str>),
    /// `create` with an option the fixture refuses.
    Refused,
    /// A writer, two data writers of one task each, and a batch written by the first.
    Write,
}

/// The first error on `path` of the fixture built with `fault`.
fn first_error(fault: &str, path: Path) -> Option<Error> {
    let library = match sparkds_jni::loaded::load(
        &fixture(Some(fault)),
        None,
        "4.3.0",
        sparkds_jni::library_log,
    ) {
        Ok(library) => library,
        Err(e) => return Some(e),
    };
    let end = options(&[("end", "8")]);
    let result = match path {
        Path::Refused => ops::create(library, "range", &options(&[("bogus", "1")])).map(|_| ()),
        Path::Read(pruned) => read_everything(library, &end, pruned),
        Path::Write => write_one_batch(library, &end),
    };
    result.err()
}

fn read_everything(
    library: &'static sparkds_jni::loaded::Loaded,
    end: &[(String, String)],
    pruned: Option<&str>,
) -> Result<(), Error> {
    let source = ops::create(library, "range", end)?;
    let schema = source.schema()?.expect("a schema");
    // As the plugin does: the scan builder's reader hears the pushdowns, and the scan replays
    // them on the reader that plans (rule 32).
    let mut probe = source.create_reader(&schema)?;
    let offered = sparkds::filters::encode(&[sparkds::filters::Filter::Ge(
        sparkds::filters::col("id"),
        4i64.into(),
    )])
    .expect("encodes");
    let answers = probe.push_filters(&offered)?;
    let accepted = match &answers {
        Some(answers) if answers == &[true] => Some(offered.clone()),
        _ => None,
    };
    let mut read_schema = schema.clone();
    let mut pruned_schema = None;
    if let Some(column) = pruned {
        let full = sparkds_jni::ipc::schema_from_ipc(&read_schema, "schema").expect("ipc");
        let field = full.field_with_name(column).expect("a column").clone();
        read_schema = ipc(&Schema::new(vec![field]));
        if probe.prune_columns(&read_schema)? {
            pruned_schema = Some(read_schema.clone());
        }
    }
    drop(probe);
    let mut reader = source.create_reader(&schema)?;
    let filters = answers.map(|answers| (offered, answers));
    reader.replay(filters, None, pruned_schema.as_deref())?;
    let partitions = reader.partitions()?;
    let state = reader.serialize()?;
    for partition in &partitions {
        let inputs = ops::ReadInputs {
            state: state.as_deref(),
            partition,
            accepted_filters: accepted.as_deref(),
        };
        let mut stream = ops::read(
            library,
            &read_schema,
            inputs,
            TaskIds::default(),
            None,
            Checks::default(),
        )?;
        while stream.next_batch()?.is_some() {}
    }
    Ok(())
}

fn write_one_batch(
    library: &'static sparkds_jni::loaded::Loaded,
    end: &[(String, String)],
) -> Result<(), Error> {
    let source = ops::create(library, "range", end)?;
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let writer = source.create_writer(&ipc(&schema), "q", 0, false)?;
    let state = writer.serialize()?;
    let open = |partition_id| {
        let ids = TaskIds {
            partition_id,
            ..TaskIds::default()
        };
        ops::create_data_writer(
            library,
            &ipc(&schema),
            state.as_deref(),
            -1,
            ids,
            None,
            Checks::default(),
        )
    };
    let mut first = open(0)?;
    let _second = open(1)?;
    let batch = arrow_array::RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(arrow_array::Int64Array::from(vec![1, 2]))],
    )
    .expect("a batch");
    first.write_batch(&batch)?;
    first.commit().map(|_| ())
}

/// Each rule that the plugin checks, broken by one fault of the conformance fixture, is found
/// where the plugin's JNI library runs it (the driver's calls, the executor's reads and
/// writes), with the cheap checks only (no SPARKDS_JNI_FULL_CHECKS): the rules chapter's table
/// of what the JVM plugin checks cites this test.
#[test]
fn each_rule_the_plugin_checks_is_found_on_its_path() {
    let cases: &[(&str, Path, u32)] = &[
        ("SMALL_TABLE", Path::Read(None), 2),
        ("ABI_VERSION", Path::Read(None), 3),
        ("MISSING_WRITE", Path::Read(None), 4),
        ("NO_MESSAGE", Path::Refused, 7),
        ("OUT_ON_FAILURE", Path::Read(None), 8),
        ("LATE_SINK", Path::Read(None), 10),
        ("SINK_FROM_THREAD", Path::Read(None), 10),
        ("KEEPS_BATCH", Path::Write, 11),
        ("RELEASES_SCHEMA", Path::Write, 11),
        ("SLICED_ARRAY", Path::Read(None), 13),
        ("STRING_OFFSETS", Path::Read(None), 14),
        ("NULL_COUNT", Path::Read(None), 15),
        ("WRONG_NULL_COUNT", Path::Read(None), 15),
        ("NULL_ROW", Path::Read(None), 16),
        ("SHORT_COLUMN", Path::Read(None), 16),
        ("NULL_IN_NOT_NULL", Path::Read(None), 17),
        ("LARGE_STRING", Path::Read(None), 18),
        ("PRUNE_IGNORED", Path::Read(Some("id")), 19),
        ("MISALIGNED", Path::Read(None), 20),
        ("NULL_HANDLE", Path::Read(None), 21),
        ("SAME_DATA_WRITER", Path::Write, 21),
        ("FILTER_SMALL_TABLE", Path::Read(None), 29),
        ("FILTER_SINK_TWICE", Path::Read(None), 30),
        ("FILTER_WRONG_COUNT", Path::Read(None), 30),
        ("FILTER_ANSWER_TWO", Path::Read(None), 30),
        ("FILTER_BROKEN_ROW", Path::Read(None), 31),
        ("UNSTABLE_PUSHDOWN", Path::Read(None), 32),
    ];
    let mut wrong = Vec::new();
    for &(fault, path, rule) in cases {
        match first_error(fault, path) {
            Some(e) if e.message.contains(&format!("(rule {rule}: ")) => {}
            other => wrong.push(format!("{fault}: rule {rule} expected, got {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Rule 1 at the plugin's load: a shared library that does not export `spark_ds_init`.
#[test]
fn a_library_without_spark_ds_init_is_refused() {
    let dir = crate::helpers::fresh_dir("no-init");
    let source = dir.join("no_init.c");
    std::fs::write(&source, "int not_a_data_source(void) { return 0; }\n").expect("written");
    let library = dir.join(Os::current().library_file_name("no_init"));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let built = std::process::Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("the C compiler ($CC, else cc) runs");
    assert!(built.success(), "cc failed to build {}", library.display());
    let e = sparkds_jni::loaded::load(&library, None, "4.3.0", sparkds_jni::library_log)
        .expect_err("no spark_ds_init");
    assert_eq!(e.class, ErrorClass::InitFailed);
    assert!(e.message.contains("(rule 1: "), "{e}");
}
