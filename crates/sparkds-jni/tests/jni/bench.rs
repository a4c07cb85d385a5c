//! How long `next` takes per batch of 65536 rows of c_range, with the cheap checks only and
//! with `SPARKDS_JNI_FULL_CHECKS` (full validation): figures printed, not asserted. Run it
//! optimized to get figures worth reading:
//! `cargo test --release -p sparkds-jni --test jni next_per_batch -- --nocapture`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_schema::{Field, Schema};
use sparkds::steps::{Checks, TaskIds};
use sparkds_jni::ops;

use crate::helpers::{c_range, ipc, load, options};

const ROWS_PER_BATCH: usize = 65536;
const BATCHES: usize = if cfg!(debug_assertions) { 20 } else { 400 };

/// The time of each `next` over one partition of `BATCHES` batches of `columns`.
fn time_next(columns: &[&str], checks: Checks) -> (usize, Duration) {
    let library = load(c_range());
    let end = (ROWS_PER_BATCH * BATCHES).to_string();
    let rows = ROWS_PER_BATCH.to_string();
    let source = ops::create(
        library,
        "c_range",
        &options(&[
            ("end", &end),
            ("batch_rows", &rows),
            ("num_partitions", "1"),
        ]),
    )
    .expect("create");
    let schema = source.schema().expect("schema").expect("a schema");
    let mut reader = source.create_reader(&schema).expect("createReader");
    let all = sparkds_jni::ipc::schema_from_ipc(&schema, "schema").expect("ipc");
    let fields: Vec<Field> = columns
        .iter()
        .map(|c| all.field_with_name(c).expect("a column").clone())
        .collect();
    let pruned = Arc::new(Schema::new(fields));
    reader.prune_columns(&ipc(&pruned)).expect("pruneColumns");
    let partitions = reader.partitions().expect("partitions");
    let state = reader.serialize().expect("serialize");
    let mut stream = ops::read(
        library,
        &ipc(&pruned),
        ops::ReadInputs {
            state: state.as_deref(),
            partition: &partitions[0],
            accepted_filters: None,
        },
        TaskIds::default(),
        None,
        checks,
    )
    .expect("read");
    let mut batches = 0;
    let started = Instant::now();
    while let Some(d) = stream.next_batch().expect("next") {
        assert_eq!(d[0] as usize, ROWS_PER_BATCH);
        batches += 1;
    }
    (batches, started.elapsed())
}

#[test]
fn next_per_batch_with_and_without_full_checks() {
    println!(
        "c_range, {ROWS_PER_BATCH} rows a batch, {BATCHES} batches a run, best of 3 runs after one to warm up, {} build",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    );
    println!(
        "{:<10} {:>14} {:>14} {:>16}",
        "columns", "cheap checks", "full checks", "full - cheap"
    );
    for columns in [&["id"][..], &["id", "label"][..]] {
        let mut figures = Vec::new();
        for full in [false, true] {
            let checks = Checks { full };
            let _ = time_next(columns, checks);
            let best = (0..3)
                .map(|_| {
                    let (batches, elapsed) = time_next(columns, checks);
                    assert_eq!(batches, BATCHES);
                    elapsed / batches as u32
                })
                .min()
                .unwrap_or_default();
            figures.push(best.as_secs_f64() * 1e6);
        }
        println!(
            "{:<10} {:>11.1} µs {:>11.1} µs {:>13.1} µs",
            columns.join(","),
            figures[0],
            figures[1],
            figures[1] - figures[0]
        );
    }
}
