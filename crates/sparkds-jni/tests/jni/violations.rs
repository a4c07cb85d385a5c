//! Broken libraries: each violation is INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE, naming
//! the function, the column and the rule.

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
            Ok(Some(_)) => continue,
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
        "native data source `range`: `read` (partition 0): batch 0, column `id`: array offset is 1; exported arrays must have offset 0 (rule 13: offset 0 at every level; see the book, reference/rules.html#rule-13)"
    );
}

#[test]
fn invalid_utf8_is_found_only_with_full_checks() {
    assert_eq!(read_outcome("INVALID_UTF8", Checks::default()), None);
    let e = read_error("INVALID_UTF8", Checks { full: true });
    assert_eq!(e.class, ErrorClass::Conformance);
    assert!(
        e.message.starts_with("native data source `range`: `read` (partition 0): batch 0, column `name`: fails full validation:")
            && e.message.ends_with("(rule 12: batches pass full validation; see the book, reference/rules.html#rule-12)"),
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
        "native data source `c_range`: `read` (partition 0): the stream's schema is `id Int64 not null, label Utf8` but `id Int64 not null` was asked for; return exactly the schema to read, after `prune_columns` (rule 19: the stream's schema is the one asked for; see the book, reference/rules.html#rule-19)"
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
        "native data source `range`: `write` (task 0): batch 0 was not taken: its `release` is still set after the call; copy the struct out of `batch` and set `batch->release` to NULL, as the C data interface moves a struct (rule 11: each Arrow struct is released exactly once; see the book, reference/rules.html#rule-11)"
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
