//! The tutorial's option `prefix` and column `even`, read through the same host as Spark.

use sparkds::Library;

fn library() -> sparkds::Result<Library> {
    let name = concat!("spark_datasource_", env!("CARGO_PKG_NAME"));
    Library::load(sparkds::cdylib(name)?)
}

#[test]
fn labels_start_with_the_option_prefix() -> sparkds::Result<()> {
    let read = library()?
        .batch_read()
        .options([("end", "4"), ("prefix", "item")])
        .columns(["id", "label", "even"])
        .run()?;
    insta::assert_snapshot!(sparkds::render::batches(&read.batches()));
    Ok(())
}

#[test]
fn an_empty_prefix_is_refused_with_the_option_named() -> sparkds::Result<()> {
    let error = library()?
        .batch_read()
        .option("prefix", "")
        .run()
        .expect_err("an empty prefix is refused");
    assert!(
        error
            .to_string()
            .contains("option `prefix` must have 1 to 64 bytes, got 0"),
        "{error}"
    );
    Ok(())
}
