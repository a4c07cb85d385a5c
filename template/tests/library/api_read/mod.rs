//! Batch reads of the sample API (`spark.read.format(name).option("url", ...).load()`), each
//! against a server of its own, which counts the requests.

use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::Int64Type;
use sparkds::filters::{col, Filter};
use sparkds::testing::http::Response;
use sparkds::testing::{exports, message};
use sparkds::BatchReadOutcome;

use crate::library;
use crate::sample_api::{self, ITEMS, TOKEN, WHOLE_READ};

/// The ids of the rows that `read` returned, sorted.
fn ids(read: &BatchReadOutcome) -> Vec<i64> {
    let batches = read.batches();
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn reads_every_item_once_in_one_request_a_page() -> sparkds::Result<()> {
    let api = sample_api::serve()?;
    let read = library()?
        .batch_read()
        .options(sample_api::options(&api))
        .run()?;
    insta::assert_snapshot!("schema", sparkds::render::schema(&read.schema));
    assert_eq!(ids(&read), (1..=ITEMS as i64).collect::<Vec<_>>());
    assert_eq!(api.request_count(), WHOLE_READ);
    let signed = format!("Bearer {TOKEN}");
    assert!(api
        .requests()
        .iter()
        .all(|r| r.header("authorization") == Some(&signed)));
    Ok(())
}

#[test]
fn a_429_and_a_500_are_tried_again() -> sparkds::Result<()> {
    let api = sample_api::serve()?;
    api.fail_next(1, Response::status(429).header("Retry-After", "0"));
    api.fail_next(1, Response::status(500));
    let read = library()?
        .batch_read()
        .options(sample_api::options(&api))
        .run()?;
    assert_eq!(ids(&read).len(), ITEMS as usize);
    assert_eq!(api.request_count(), WHOLE_READ + 2);
    Ok(())
}

#[test]
fn reads_only_the_requested_columns_with_nulls() -> sparkds::Result<()> {
    let api = sample_api::serve()?;
    let read = library()?
        .batch_read()
        .options(sample_api::options(&api))
        .option("num_partitions", "1")
        .columns(["id", "score"])
        .run()?;
    assert_eq!(read.pruned, exports("prune_columns"));
    insta::assert_snapshot!("id_and_score", sparkds::render::batches(&read.batches()));
    Ok(())
}

#[test]
fn a_pushed_limit_of_a_page_is_one_request() -> sparkds::Result<()> {
    if !exports("push_limit") {
        return Ok(());
    }
    let api = sample_api::serve()?;
    let read = library()?
        .batch_read()
        .options(sample_api::options(&api))
        .limit(3)
        .run()?;
    assert_eq!(read.limit_accepted, Some(true));
    assert_eq!(read.num_rows(), 3);
    assert_eq!(api.request_count(), 1);
    assert_eq!(api.requests()[0].query("per_page"), Some("3"));
    Ok(())
}

/// `WHERE status = 'open' AND id > 20 AND score IS NOT NULL`: the API evaluates the first two.
#[test]
fn filters_that_the_api_evaluates_go_to_it_as_query_parameters() -> sparkds::Result<()> {
    let api = sample_api::serve()?;
    let filters = vec![
        Filter::Eq(col("status"), "open".into()),
        Filter::Gt(col("id"), 20i64.into()),
        Filter::IsNotNull(col("score")),
    ];
    let read = library()?
        .batch_read()
        .options(sample_api::options(&api))
        .filters(filters)
        .run()?;
    // `filters_accepted` is `None` without `push_filters` on the export line: Spark then
    // filters every row.
    let pushed = exports("push_filters");
    assert_eq!(
        read.filters_accepted,
        pushed.then(|| vec![true, true, false])
    );
    let returned = if pushed {
        vec![22, 23, 25]
    } else {
        (1..=25).collect()
    };
    assert_eq!(ids(&read), returned);
    if pushed {
        let asked = api.requests();
        assert!(asked
            .iter()
            .all(|r| r.query("status") == Some("open") && r.query("since_id") == Some("20")));
    }
    Ok(())
}

#[test]
fn a_refused_token_a_spent_budget_and_a_bad_option_say_what_to_do() -> sparkds::Result<()> {
    let api = sample_api::serve()?;
    let read = |more: &[(&str, &str)]| {
        let mut options = sample_api::options(&api);
        options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        library()?.batch_read().options(options).run()
    };
    let error = message(read(&[("token", "not-the-token")]));
    assert!(
        error.contains("answered 401: check the credentials"),
        "{error}"
    );
    assert!(!error.contains("not-the-token"), "{error}");
    let error = message(read(&[("max_requests", "1"), ("num_partitions", "1")]));
    assert!(
        error.contains("the task made its budget of 1 requests"),
        "{error}"
    );
    let error = message(read(&[("per_page", "0")]));
    assert!(error.contains("`per_page` 1 to 100 (got 0)"), "{error}");
    Ok(())
}
