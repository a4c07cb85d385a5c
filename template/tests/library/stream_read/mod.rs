//! Micro-batch reads: `spark.readStream.format(name).load()`.

use std::collections::BTreeSet;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;

use sparkds::testing::message;

use crate::library;

#[test]
fn offsets_advance_and_a_restart_reads_every_row_exactly_once() -> sparkds::Result<()> {
    let stream = library()?
        .stream_read()
        .option("rows_per_micro_batch", "5")
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

    let ids: Vec<i64> = stream
        .batches()
        .iter()
        .flat_map(|b| {
            b.column_by_name("id")
                .expect("id")
                .as_primitive::<Int64Type>()
                .values()
                .to_vec()
        })
        .collect();
    let distinct: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(ids.len(), distinct.len(), "a row was read twice: {ids:?}");
    assert_eq!(distinct, (0..20).collect::<BTreeSet<i64>>());
    Ok(())
}

#[test]
fn the_rows_of_a_micro_batch_are_the_rows_of_its_offset_range() -> sparkds::Result<()> {
    let stream = library()?
        .stream_read()
        .option("rows_per_micro_batch", "3")
        .micro_batches(2)
        .run()?;
    insta::assert_snapshot!(sparkds::render::batches(&stream.micro_batches[1].batches));
    Ok(())
}

#[test]
fn a_malformed_option_names_the_option_and_the_expected_form() -> sparkds::Result<()> {
    let error = message(
        library()?
            .stream_read()
            .option("rows_per_micro_batch", "many")
            .run(),
    );
    assert!(
        error.contains(
            "`create_stream_reader` failed: option `rows_per_micro_batch` must be a non-negative integer, \
             got `many`"
        ),
        "{error}"
    );
    Ok(())
}
