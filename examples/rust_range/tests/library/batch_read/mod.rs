//! Batch reads: `spark.read.format("rust_range").option("end", 100).load()`, as the guide
//! page shows them.

use sparkds::testing::{library, message, NO_OPTIONS};

#[test]
fn reads_the_schema_of_the_source() -> sparkds::Result<()> {
    let read = library()?.batch_read().run()?;
    insta::assert_snapshot!(sparkds::render::schema(&read.schema));
    Ok(())
}

#[test]
fn plans_two_partitions_the_halves_of_the_range() -> sparkds::Result<()> {
    let read = library()?.batch_read().option("end", "100").run()?;
    insta::assert_snapshot!(sparkds::render::partitions(&read.partition_bytes()));
    Ok(())
}

#[test]
fn reads_the_numbers_below_end_ten_by_default() -> sparkds::Result<()> {
    let read = library()?.batch_read().options(NO_OPTIONS).run()?;
    let tables: Vec<String> = read
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| format!("partition {i}:\n{}", sparkds::render::batches(&p.batches)))
        .collect();
    insta::assert_snapshot!(tables.join("\n"));
    Ok(())
}

#[test]
fn each_partition_is_one_batch() -> sparkds::Result<()> {
    let read = library()?.batch_read().option("end", "7").run()?;
    let sizes: Vec<usize> = read.batches().iter().map(|b| b.num_rows()).collect();
    assert_eq!(sizes, vec![3, 4]);
    Ok(())
}

#[test]
fn an_empty_range_reads_no_rows() -> sparkds::Result<()> {
    let read = library()?.batch_read().option("end", "0").run()?;
    assert_eq!(read.partitions.len(), 2);
    assert_eq!(read.num_rows(), 0);
    Ok(())
}

#[test]
fn a_malformed_end_names_the_option_and_the_expected_form() -> sparkds::Result<()> {
    let error = message(library()?.batch_read().option("end", "ten").run());
    assert!(
        error.contains("`create` failed: option `end` must be an integer, got `ten`"),
        "{error}"
    );
    Ok(())
}

#[test]
fn a_query_schema_other_than_id_is_refused() -> sparkds::Result<()> {
    let schema = sparkds::ddl::parse("id bigint not null, name string")?;
    let error = message(library()?.batch_read().schema(schema).run());
    assert!(
        error.contains(
            "rust_range reads one column, `id bigint not null`, but the query asked for 2 \
             column(s): drop the schema given with .schema(...)"
        ),
        "{error}"
    );
    Ok(())
}

#[test]
fn passes_every_protocol_of_the_conformance_check() -> sparkds::Result<()> {
    let library = sparkds::cdylib(concat!("spark_datasource_", env!("CARGO_PKG_NAME")))?;
    let report = sparkds::check::Check::new(library)
        .option("end", "20")
        .run();
    insta::assert_snapshot!(report.to_string());
    assert!(report.passed(), "{report}");
    Ok(())
}
