//! Filter pushdown (`push_filters`, the extension of `spark_datasource_filters.h`): the
//! conditions of `WHERE` that Spark offers a batch reader, right after it is created.

use sparkds::arrow_array::{cast::AsArray, types::Int64Type};
use sparkds::filters::{col, filter_batch, Filter};
use sparkds::testing::exports;
use sparkds::BatchReadOutcome;

use crate::library;

/// `WHERE id >= 3 AND id IN (1, 4, 8, 20) AND label IS NOT NULL`.
fn conditions() -> Vec<Filter> {
    let list = [1i64, 4, 8, 20].map(Into::into).to_vec();
    let (ge, within) = (
        Filter::Ge(col("id"), 3i64.into()),
        Filter::In(col("id"), list),
    );
    vec![ge, within, Filter::IsNotNull(col("label"))]
}

/// The ids of the rows that `read` returned, each filter applied after the scan, as Spark
/// applies those the reader did not accept.
fn ids(read: &BatchReadOutcome, filters: &[Filter]) -> sparkds::Result<Vec<i64>> {
    let mut ids = Vec::new();
    for batch in read.batches() {
        let batch =
            filter_batch(filters, &batch).map_err(|e| sparkds::Error::usage(e.to_string()))?;
        ids.extend(batch.column(0).as_primitive::<Int64Type>().values());
    }
    Ok(ids)
}

#[test]
fn pushed_filters_on_id_plan_and_read_only_the_ids_that_match() -> sparkds::Result<()> {
    let read = library()?
        .batch_read()
        .option("end", "10")
        .filters(conditions())
        .run()?;
    // `filters_accepted` is `None` without `push_filters` on the export line: Spark then
    // filters every row.
    let pushed = exports("push_filters");
    assert_eq!(
        read.filters_accepted,
        pushed.then(|| vec![true, true, false])
    );
    let returned = if pushed {
        vec![4, 8]
    } else {
        (0..10).collect()
    };
    assert_eq!(ids(&read, &[])?, returned);
    // The rows Spark gets are those of filtering every row afterwards: 8's label is null.
    assert_eq!(ids(&read, &conditions())?, [4]);
    if pushed {
        // The two partitions span the ids that can match, 4 to 8, and no more.
        insta::assert_snapshot!(sparkds::render::partitions(&read.partition_bytes()));
    }
    Ok(())
}

#[test]
fn a_limit_after_accepted_filters_counts_the_matching_rows() -> sparkds::Result<()> {
    let read = library()?
        .batch_read()
        .option("end", "100")
        .filters(vec![Filter::Gt(col("id"), 50i64.into())])
        .limit(3)
        .run()?;
    // A limit is pushed only when every filter was accepted.
    let (filtered, limited) = (exports("push_filters"), exports("push_limit"));
    assert_eq!(read.limit_accepted, (limited && filtered).then_some(true));
    let rows = ids(&read, &[Filter::Gt(col("id"), 50i64.into())])?;
    assert_eq!(&rows[..3], [51, 52, 53]);
    assert!(rows.len() == 3 || read.limit_accepted.is_none(), "{rows:?}");
    Ok(())
}
