//! Batch reads: `spark.read.format(name).load()`.

use sparkds::testing::{exports, message};

use crate::library;

#[test]
fn reads_the_schema_of_the_source() -> sparkds::Result<()> {
    let read = library()?.batch_read().run()?;
    insta::assert_snapshot!(sparkds::render::schema(&read.schema));
    Ok(())
}

#[test]
fn plans_one_partition_per_task() -> sparkds::Result<()> {
    let read = library()?
        .batch_read()
        .option("end", "10")
        .option("num_partitions", "3")
        .run()?;
    insta::assert_snapshot!(sparkds::render::partitions(&read.partition_bytes()));
    Ok(())
}

#[test]
fn reads_the_rows_of_each_partition_with_nulls() -> sparkds::Result<()> {
    let read = library()?
        .batch_read()
        .options([("end", "7"), ("num_partitions", "2"), ("batch_rows", "2")])
        .run()?;
    let tables: Vec<String> = read
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| format!("partition {i}:\n{}", sparkds::render::batches(&p.batches)))
        .collect();
    insta::assert_snapshot!(tables.join("\n"));
    // Batches are bounded by `batch_rows`: 3 rows in 2 batches, then 4 rows in 2 batches.
    let sizes: Vec<usize> = read.batches().iter().map(|b| b.num_rows()).collect();
    assert_eq!(sizes, vec![2, 1, 2, 2]);
    Ok(())
}

#[test]
fn reads_only_the_requested_columns() -> sparkds::Result<()> {
    let read = library()?
        .batch_read()
        .option("end", "4")
        .columns(["label", "id"])
        .run()?;
    assert_eq!(read.pruned, exports("prune_columns"));
    insta::assert_snapshot!(sparkds::render::batches(&read.batches()));
    Ok(())
}

#[test]
fn a_pushed_limit_plans_only_the_rows_it_needs() -> sparkds::Result<()> {
    if !exports("push_limit") {
        return Ok(());
    }
    let read = library()?
        .batch_read()
        .option("end", "100")
        .limit(3)
        .run()?;
    assert_eq!(read.limit_accepted, Some(true));
    assert_eq!(read.num_rows(), 3);
    Ok(())
}

#[test]
fn a_malformed_option_names_the_option_and_the_expected_form() -> sparkds::Result<()> {
    let error = message(library()?.batch_read().option("end", "ten").run());
    assert!(
        error.contains(
            "`create_reader` failed: option `end` must be a non-negative integer, got `ten`"
        ),
        "{error}"
    );
    Ok(())
}

#[test]
fn reads_an_empty_range_as_no_partitions() -> sparkds::Result<()> {
    let read = library()?.batch_read().option("end", "0").run()?;
    assert!(read.partitions.is_empty());
    Ok(())
}
