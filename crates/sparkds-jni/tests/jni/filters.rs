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
            state.as_deref(),
            partition,
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
