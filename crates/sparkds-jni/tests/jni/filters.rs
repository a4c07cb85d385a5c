//! `Native.pushFilters`: the filter pushdown extension through the JNI library's reader, with
//! examples/c_range (which implements it) and the conformance fixture (which does not).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use sparkds::filters::{col, encode, Filter};
use sparkds::steps::{Checks, TaskIds};
use sparkds_jni::ops;

use crate::helpers::{c_range, fixture, ipc, load, options, read_back};

fn message() -> Vec<u8> {
    encode(&[
        Filter::Ge(col("id"), 4i64.into()),
        Filter::IsNotNull(col("label")),
        Filter::In(col("id"), vec![1i64.into(), 5i64.into(), 6i64.into()]),
    ])
    .expect("encodes")
}

#[test]
fn c_range_answers_push_filters_and_reads_only_the_accepted_rows() {
    let library = load(c_range());
    let source = ops::create(library, "c_range", &options(&[("end", "10")])).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let schema = Arc::new(sparkds_jni::ipc::schema_from_ipc(&schema_bytes, "schema").expect("ipc"));
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    let answers = reader.push_filters(&message()).expect("pushFilters");
    assert_eq!(answers, Some(vec![true, false, true]));
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    drop(reader);
    drop(source);

    let mut ids: Vec<i64> = Vec::new();
    for (i, partition) in partitions.iter().enumerate() {
        let task = TaskIds {
            partition_id: i as i32,
            ..TaskIds::default()
        };
        let mut stream = ops::read(
            library,
            &ipc(&schema),
            ops::ReadInputs {
                state: state.as_deref(),
                partition,
                accepted_filters: None,
            },
            task,
            None,
            Checks { full: true },
        )
        .expect("read opens");
        while let Some(descriptor) = stream.next_batch().expect("next") {
            let batch = read_back(&schema, descriptor);
            ids.extend(batch.column(0).as_primitive::<Int64Type>().values().iter());
        }
    }
    assert_eq!(ids, [5, 6]);
}

#[test]
fn a_library_without_the_extension_answers_none() {
    let library = load(&fixture(None));
    let source = ops::create(library, "range", &options(&[("end", "10")])).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    assert_eq!(reader.push_filters(&message()).expect("pushFilters"), None);
}

#[test]
fn a_sink_called_twice_is_a_violation() {
    let library = load(&fixture(Some("FILTER_SINK_TWICE")));
    let source = ops::create(library, "range", &options(&[("end", "10")])).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    let error = reader
        .push_filters(&message())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        error.contains("`push_filters`: called its sink 2 times; it must call it exactly once, with one byte per filter (rule 30"),
        "{error}"
    );
}

/// The ids that partition 0 of the reader's plan returns, read with `accepted` checked (or taken
/// as they are without it).
fn ids_read(
    library: &'static sparkds_jni::loaded::Loaded,
    reader: &ops::ReaderHandle,
    schema: &Arc<arrow_schema::Schema>,
    accepted: Option<&[u8]>,
) -> Result<Vec<i64>, sparkds_jni::error::Error> {
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    let mut stream = ops::read(
        library,
        &ipc(schema),
        ops::ReadInputs {
            state: state.as_deref(),
            partition: &partitions[0],
            accepted_filters: accepted,
        },
        TaskIds::default(),
        None,
        Checks::default(),
    )?;
    let mut ids = Vec::new();
    while let Some(descriptor) = stream.next_batch()? {
        let batch = read_back(schema, descriptor);
        ids.extend(batch.column(0).as_primitive::<Int64Type>().values().iter());
    }
    Ok(ids)
}

/// The fixture that accepts every comparison on `id` and applies none: its rows as they are,
/// or a conformance error on the first row that breaks the accepted filter when it is checked.
#[test]
fn a_row_that_breaks_an_accepted_filter_fails_the_read_that_checks_it() {
    let library = load(&fixture(Some("FILTER_BROKEN_ROW")));
    let source = ops::create(library, "range", &options(&[("end", "10")])).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let schema = Arc::new(sparkds_jni::ipc::schema_from_ipc(&schema_bytes, "schema").expect("ipc"));
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    let offered = encode(&[
        Filter::Ge(col("id"), 4i64.into()),
        Filter::IsNotNull(col("name")),
    ])
    .expect("encodes");
    assert_eq!(
        reader.push_filters(&offered).expect("pushFilters"),
        Some(vec![true, false])
    );
    let accepted = encode(&[Filter::Ge(col("id"), 4i64.into())]).expect("encodes");

    let trusted = ids_read(library, &reader, &schema, None).expect("reads");
    assert_eq!(trusted, [0, 1, 2, 3, 4]);
    let error = ids_read(library, &reader, &schema, Some(&accepted)).expect_err("checked");
    assert_eq!(error.class, sparkds_jni::error::ErrorClass::Conformance);
    assert_eq!(
        error.message,
        "native data source `range`: `read` (partition 0): batch 0, row 0: the accepted filter `id >= 4` is not TRUE; return only rows where every accepted filter is TRUE, or answer 0 for it (rule 31: returned rows satisfy the accepted filters; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-31)"
    );
}

#[test]
fn an_accepted_filter_on_a_column_the_read_does_not_have_is_refused() {
    let library = load(c_range());
    let source = ops::create(library, "c_range", &options(&[("end", "10")])).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    let accepted = encode(&[Filter::Ge(col("id"), 4i64.into())]).expect("encodes");
    assert_eq!(
        reader.push_filters(&accepted).expect("pushFilters"),
        Some(vec![true])
    );
    let label = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "label",
        arrow_schema::DataType::Utf8,
        true,
    )]));
    assert!(reader.prune_columns(&ipc(&label)).expect("prunes"));
    let error = ids_read(library, &reader, &label, Some(&accepted)).expect_err("refused");
    assert_eq!(
        error.to_string(),
        "native data source `c_range`: the accepted filter `id >= 4` names the column `id`, which the read's schema `label Utf8` does not have; read every column that an accepted filter names, so that its rows can be checked"
    );
}
