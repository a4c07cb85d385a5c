//! The tutorial's filter pushdown: the conditions on `id` that the reader accepts, and the rows
//! Spark ends with, read through the same host as Spark.

use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::Int64Type;
use sparkds::filters::{col, filter_batch, Filter};
use sparkds::Library;

fn library() -> sparkds::Result<Library> {
    let name = concat!("spark_datasource_", env!("CARGO_PKG_NAME"));
    Library::load(sparkds::cdylib(name)?)
}

// ANCHOR: test
#[test]
fn conditions_on_id_are_accepted_and_the_others_left_to_spark() -> sparkds::Result<()> {
    // WHERE id >= 10 AND id IN (3, 11, 12, 14) AND even
    let filters = vec![
        Filter::Ge(col("id"), 10i64.into()),
        Filter::In(
            col("id"),
            vec![3i64.into(), 11i64.into(), 12i64.into(), 14i64.into()],
        ),
        Filter::Eq(col("even"), true.into()),
    ];
    let read = library()?
        .batch_read()
        .option("end", "1000")
        .columns(["id", "even"])
        .filters(filters.clone())
        .run()?;
    assert_eq!(read.filters_accepted, Some(vec![true, true, false]));
    let mut returned: Vec<i64> = Vec::new();
    let mut spark_gets: Vec<i64> = Vec::new();
    for batch in read.batches() {
        returned.extend(batch.column(0).as_primitive::<Int64Type>().values());
        // Spark applies the filter the reader left to it, on the rows the reader returned.
        let kept =
            filter_batch(&filters, &batch).map_err(|e| sparkds::Error::usage(e.to_string()))?;
        spark_gets.extend(kept.column(0).as_primitive::<Int64Type>().values());
    }
    assert_eq!(returned, [11, 12, 14]);
    assert_eq!(spark_gets, [12, 14]);
    Ok(())
}
// ANCHOR_END: test
