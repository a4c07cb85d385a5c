use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::Array;
use arrow_schema::{DataType, Field, Schema};
use sparkds::steps::{Checks, TaskIds};
use sparkds_jni::ops;

use crate::helpers::{c_range, ipc, load, options, read_back};

fn ids(partition_id: i32) -> TaskIds {
    TaskIds {
        task_id: 7,
        stage_id: 1,
        partition_id,
        attempt_number: 0,
    }
}

/// A batch read planned as the driver plans it, with the source's own schema: the schema's
/// IPC bytes, the partitions and the reader's state.
struct Planned {
    schema_bytes: Vec<u8>,
    partitions: Vec<Vec<u8>>,
    state: Option<Vec<u8>>,
}

fn plan(
    library: &'static sparkds_jni::loaded::Loaded,
    name: &str,
    opts: &[(&str, &str)],
) -> Planned {
    let source = ops::create(library, name, &options(opts)).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let reader = source.create_reader(&schema_bytes).expect("createReader");
    Planned {
        partitions: reader.partitions().expect("partitions"),
        state: reader.serialize().expect("serialize"),
        schema_bytes,
    }
}

/// Every row of every partition, read back through the descriptors.
fn read_all(
    library: &'static sparkds_jni::loaded::Loaded,
    schema: &Arc<Schema>,
    state: Option<&[u8]>,
    partitions: &[Vec<u8>],
) -> Vec<arrow_array::RecordBatch> {
    let mut batches = Vec::new();
    for (i, partition) in partitions.iter().enumerate() {
        let mut stream = ops::read(
            library,
            &ipc(schema),
            ops::ReadInputs {
                state,
                partition,
                accepted_filters: None,
            },
            ids(i as i32),
            None,
            Checks { full: true },
        )
        .expect("read opens");
        while let Some(descriptor) = stream.next_batch().expect("next") {
            batches.push(read_back(schema, descriptor));
        }
        // The end repeats.
        assert!(stream.next_batch().expect("next after the end").is_none());
    }
    batches
}

#[test]
fn a_read_of_c_range_describes_its_buffers_in_place_with_nulls_and_strings() {
    let library = load(c_range());
    let source = ops::create(
        library,
        "C_Range",
        &options(&[("end", "10"), ("batch_rows", "4")]),
    )
    .expect("create");
    assert_eq!(source.capabilities() & 1, 1, "SPARK_DS_BATCH_READ");
    let schema_bytes = source
        .schema()
        .expect("schema")
        .expect("c_range has a schema");
    let schema = Arc::new(sparkds_jni::ipc::schema_from_ipc(&schema_bytes, "schema").expect("ipc"));
    assert_eq!(
        schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>(),
        ["id", "label"]
    );
    let reader = source.create_reader(&schema_bytes).expect("createReader");
    let partitions = reader.partitions().expect("partitions");
    assert_eq!(partitions.len(), 2);
    let state = reader
        .serialize()
        .expect("serialize")
        .expect("c_range serializes");
    drop(reader);
    drop(source);

    let batches = read_all(library, &schema, Some(&state), &partitions);
    // 10 rows in 2 partitions of 5, in batches of at most 4.
    assert_eq!(
        batches.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
        [4, 1, 4, 1]
    );
    let all = arrow_select::concat::concat_batches(&schema, &batches).expect("concat");
    let id = all.column(0).as_primitive::<Int64Type>();
    assert_eq!(id.values().to_vec(), (0..10).collect::<Vec<i64>>());
    let label = all.column(1).as_string::<i32>();
    assert_eq!(label.value(0), "label 0");
    assert!(label.is_null(2) && label.is_null(5) && label.is_null(8));
    assert_eq!(label.null_count(), 3);
}

#[test]
fn pruning_and_a_limit_reach_the_stream_through_the_reader_state() {
    let library = load(c_range());
    let source = ops::create(library, "c_range", &options(&[("end", "100")])).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    let pruned = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    assert!(reader.prune_columns(&ipc(&pruned)).expect("pruneColumns"));
    assert!(reader.push_limit(3).expect("pushLimit"));
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    let batches = read_all(library, &pruned, state.as_deref(), &partitions);
    let rows: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
    assert_eq!(rows, [3, 3], "at most the limit per partition");
    assert_eq!(
        batches[1].column(0).as_primitive::<Int64Type>().value(0),
        50
    );
}

#[test]
fn a_read_pruned_to_no_column_describes_row_counts_only() {
    let library = load(c_range());
    let source = ops::create(library, "c_range", &options(&[("end", "7")])).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    let none = Arc::new(Schema::empty());
    assert!(reader.prune_columns(&ipc(&none)).expect("pruneColumns"));
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    let mut descriptors = Vec::new();
    for (i, partition) in partitions.iter().enumerate() {
        let mut stream = ops::read(
            library,
            &ipc(&none),
            ops::ReadInputs {
                state: state.as_deref(),
                partition,
                accepted_filters: None,
            },
            ids(i as i32),
            None,
            Checks::default(),
        )
        .expect("read opens");
        while let Some(d) = stream.next_batch().expect("next") {
            descriptors.push(d.to_vec());
        }
    }
    assert_eq!(descriptors, [vec![4], vec![3]]);
}

#[test]
fn a_stream_of_micro_batches_reads_between_its_offsets_and_commits_them() {
    let library = load(c_range());
    let source =
        ops::create(library, "c_range", &options(&[("rows_per_batch", "6")])).expect("create");
    assert_eq!(source.capabilities() & 2, 2, "SPARK_DS_MICRO_BATCH_READ");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let schema = Arc::new(sparkds_jni::ipc::schema_from_ipc(&schema_bytes, "schema").expect("ipc"));
    let reader = source
        .create_stream_reader(&schema_bytes)
        .expect("createStreamReader");
    let start = reader.initial_offset().expect("initialOffset");
    let end = reader.latest_offset(&start).expect("latestOffset");
    assert_ne!(start, end);
    let partitions = reader.partitions(&start, &end).expect("streamPartitions");
    let state = reader.serialize().expect("serializeStreamReader");
    let first = read_all(library, &schema, state.as_deref(), &partitions);
    assert_eq!(first.iter().map(|b| b.num_rows()).sum::<usize>(), 6);
    // The same range again gives the same rows (rule 25), then the offset is committed.
    let again = read_all(
        library,
        &schema,
        state.as_deref(),
        &reader.partitions(&start, &end).expect("again"),
    );
    assert_eq!(first, again);
    reader.commit_offset(&end).expect("commitOffset");
    let next = reader.latest_offset(&end).expect("latestOffset");
    let second = read_all(
        library,
        &schema,
        state.as_deref(),
        &reader.partitions(&end, &next).expect("next"),
    );
    assert_eq!(second[0].column(0).as_primitive::<Int64Type>().value(0), 6);
}

#[test]
fn is_interrupted_asks_the_task_context() {
    let library = load(c_range());
    let Planned {
        schema_bytes,
        partitions,
        state,
    } = plan(
        library,
        "c_range",
        &[
            ("end", "100"),
            ("batch_rows", "10"),
            ("num_partitions", "1"),
        ],
    );
    let killed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = killed.clone();
    let mut stream = ops::read(
        library,
        &schema_bytes,
        ops::ReadInputs {
            state: state.as_deref(),
            partition: &partitions[0],
            accepted_filters: None,
        },
        ids(0),
        Some(Box::new(move || {
            flag.load(std::sync::atomic::Ordering::SeqCst)
        })),
        Checks::default(),
    )
    .expect("read opens");
    assert!(stream.next_batch().expect("a first batch").is_some());
    killed.store(true, std::sync::atomic::Ordering::SeqCst);
    // c_range checks before each batch: it ends, or fails, within one batch.
    let mut more = 0;
    loop {
        match stream.next_batch() {
            Ok(Some(_)) => more += 1,
            Ok(None) => break,
            Err(e) => {
                assert!(e.message.contains("`read`"), "{e}");
                break;
            }
        }
    }
    assert!(more <= 1, "{more} batches after the kill");
}

#[test]
fn tasks_on_several_threads_read_their_partitions_at_once() {
    let library = load(c_range());
    let Planned {
        schema_bytes,
        partitions,
        state,
    } = plan(
        library,
        "c_range",
        &[
            ("end", "40000"),
            ("num_partitions", "4"),
            ("batch_rows", "1000"),
        ],
    );
    let sums: Vec<i64> = std::thread::scope(|scope| {
        let tasks: Vec<_> = partitions
            .iter()
            .enumerate()
            .map(|(i, partition)| {
                let (schema_bytes, state) = (&schema_bytes, &state);
                scope.spawn(move || {
                    let mut stream = ops::read(
                        library,
                        schema_bytes,
                        ops::ReadInputs {
                            state: state.as_deref(),
                            partition,
                            accepted_filters: None,
                        },
                        ids(i as i32),
                        None,
                        Checks::default(),
                    )
                    .expect("read opens");
                    let mut sum = 0i64;
                    while let Some(batch) = stream.stream().next_batch().expect("next") {
                        let batch = batch.to_record_batch().expect("a record batch");
                        sum += batch
                            .column(0)
                            .as_primitive::<Int64Type>()
                            .values()
                            .iter()
                            .sum::<i64>();
                    }
                    sum
                })
            })
            .collect();
        tasks
            .into_iter()
            .map(|t| t.join().expect("a task"))
            .collect()
    });
    assert_eq!(sums.iter().sum::<i64>(), (0..40000).sum::<i64>());
    assert_eq!(sums.len(), 4);
}

#[test]
fn pruning_to_a_column_the_reader_does_not_have_names_the_columns_it_has() {
    let library = load(c_range());
    let source = ops::create(library, "c_range", &[]).expect("create");
    let schema_bytes = source.schema().expect("schema").expect("a schema");
    let mut reader = source.create_reader(&schema_bytes).expect("createReader");
    let nope = Schema::new(vec![Field::new("nope", DataType::Int64, true)]);
    let e = reader.prune_columns(&ipc(&nope)).expect_err("refused");
    assert_eq!(e.class, sparkds_jni::error::ErrorClass::IllegalArgument);
    assert_eq!(
        e.message,
        "native data source `c_range`: the required column `nope: Int64` is not a column of the reader's schema (id: Int64, label: Utf8); ask for some of those columns, as they are"
    );
}

#[test]
fn a_library_built_with_the_rust_sdk_reads_in_place_too() {
    let library = load(&crate::helpers::example("rust_range"));
    let planned = plan(library, "rust_range", &[("end", "1000")]);
    let schema_bytes = &planned.schema_bytes;
    let schema = Arc::new(sparkds_jni::ipc::schema_from_ipc(schema_bytes, "schema").expect("ipc"));
    let (partitions, state) = (planned.partitions, planned.state);
    let batches = read_all(library, &schema, state.as_deref(), &partitions);
    let all = arrow_select::concat::concat_batches(&schema, &batches).expect("concat");
    assert_eq!(
        all.column(0).as_primitive::<Int64Type>().values().to_vec(),
        (0..1000).collect::<Vec<i64>>()
    );
}
