//! The library as Spark loads it (through `sparkds`), against the issues API of
//! `tests/common/issues.rs` on the kit's scripted server: the conformance kit, every issue once
//! with the API's values through 429s and 500s, the filters it pushes as parameters and those it
//! leaves to Spark, a limit in one request, the budget, and a token that the API refuses.

#[path = "../common/issues.rs"]
mod issues;

use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::{Int32Type, Int64Type};
use sparkds::arrow_array::{Array, RecordBatch};
use sparkds::filters::{Column, Filter, Literal, Value};
use sparkds::testing::http::{HttpServer, Response};
use sparkds::testing::{library, message, Conformance};

/// Issues of the tests: 12 pages of 100 at the default page size, and a last one of 37.
const COUNT: u64 = 1237;

fn server() -> HttpServer {
    issues::serve(COUNT).expect("the issues server starts")
}

fn options(server: &HttpServer, more: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut options = vec![
        ("url".to_string(), server.url()),
        ("resource".to_string(), issues::RESOURCE.to_string()),
        ("token".to_string(), issues::TOKEN.to_string()),
    ];
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    options
}

/// The numbers of the issues read, sorted.
fn numbers(batches: &[RecordBatch]) -> Vec<u64> {
    let mut numbers: Vec<u64> = batches
        .iter()
        .flat_map(|b| {
            let column = b.column_by_name("number").expect("number");
            column.as_primitive::<Int32Type>().values().to_vec()
        })
        .map(|n| n as u64)
        .collect();
    numbers.sort_unstable();
    numbers
}

fn timestamp(seconds: i64) -> Value {
    Value::Literal(Literal::Timestamp(Some(seconds * 1_000_000)))
}

/// The kit's reads of the source: it plans a filter before it reads with it, and reads only
/// with those the reader accepts.
const KIT_READS: u32 = 12;

#[test]
fn passes_the_conformance_kit_within_a_budget_of_requests() -> sparkds::Result<()> {
    let server = server();
    Conformance::new(library()?)
        .options(options(&server, &[("partitions", "3")]))
        .max_reads(KIT_READS)
        .assert_passes();
    // A read of every page: 13 pages of issues and an empty one for each of the 3 partitions.
    let whole_read = 16;
    let asked = server.request_count();
    println!("the conformance kit asked the API {asked} times");
    assert!(asked <= KIT_READS as usize * whole_read, "{asked} requests");
    Ok(())
}

#[test]
fn every_issue_reads_once_with_the_api_s_values_through_429s_and_500s() -> sparkds::Result<()> {
    let server = server();
    server.fail_every(4, Response::status(429).header("Retry-After", "0"));
    server.fail_next(2, Response::status(500));
    let read = library()?
        .batch_read()
        .options(options(&server, &[]))
        .run()?;
    let batches = read.batches();
    assert_eq!(numbers(&batches), (1..=COUNT).collect::<Vec<_>>());
    for batch in &batches {
        let ids = batch
            .column_by_name("id")
            .expect("id")
            .as_primitive::<Int64Type>();
        let titles = batch
            .column_by_name("title")
            .expect("title")
            .as_string::<i32>();
        let users = batch.column_by_name("user").expect("user").as_struct();
        let logins = users.column(0).as_string::<i32>();
        let labels = batch
            .column_by_name("labels")
            .expect("labels")
            .as_list::<i32>();
        for row in 0..batch.num_rows() {
            let n = (ids.value(row) - 1_000_000) as u64;
            let api = issues::issue(n);
            assert_eq!(titles.value(row), api["title"].as_str().unwrap_or_default());
            assert_eq!(
                logins.value(row),
                api["user"]["login"].as_str().unwrap_or_default()
            );
            let count = api["labels"].as_array().map_or(0, Vec::len);
            assert_eq!(labels.value(row).len(), count, "the labels of issue {n}");
        }
    }
    Ok(())
}

#[test]
fn state_and_whole_second_since_go_to_the_api_and_the_rest_stays_with_spark() -> sparkds::Result<()>
{
    let server = server();
    let col = |name: &str| Value::Column(Column::new(name));
    let open = Value::Literal(Literal::Utf8(Some("open".into())));
    let since = 1_704_067_200 + 3 * 86_400; // 2024-01-04T00:00:00Z
    let read = library()?
        .batch_read()
        .options(options(&server, &[]))
        .filters(vec![
            Filter::Eq(open.clone(), col("state")),
            Filter::Ge(col("updated_at"), timestamp(since)),
            Filter::Ge(
                col("updated_at"),
                Value::Literal(Literal::Timestamp(Some(since * 1_000_000 + 1))),
            ),
            Filter::Gt(col("number"), Value::Literal(Literal::Int32(Some(5)))),
        ])
        .run()?;
    assert_eq!(read.filters_accepted, Some(vec![true, true, false, false]));
    let expected: Vec<u64> = (1..=COUNT)
        .filter(|&n| {
            let api = issues::issue(n);
            api["state"] == "open" && api["updated_at"].as_str() >= Some("2024-01-04T00:00:00Z")
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(numbers(&read.batches()), expected);
    let asked = server.requests();
    assert!(asked
        .iter()
        .all(|r| r.query("state") == Some("open")
            && r.query("since") == Some("2024-01-04T00:00:00Z")));
    Ok(())
}

#[test]
fn a_limit_of_a_page_is_one_request() -> sparkds::Result<()> {
    let server = server();
    let read = library()?
        .batch_read()
        .options(options(&server, &[]))
        .limit(10)
        .run()?;
    assert_eq!(read.limit_accepted, Some(true));
    assert_eq!(read.num_rows(), 10);
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.requests()[0].query("per_page"), Some("10"));
    Ok(())
}

#[test]
fn the_budget_and_a_refused_token_fail_the_read_with_what_to_do() -> sparkds::Result<()> {
    let server = server();
    let spent = library()?
        .batch_read()
        .options(options(
            &server,
            &[("maxRequests", "2"), ("partitions", "1")],
        ))
        .run();
    let error = message(spent);
    assert!(
        error.contains("the task made its budget of 2 requests"),
        "{error}"
    );
    let mut wrong = options(&server, &[]);
    wrong.retain(|(k, _)| k != "token");
    wrong.push(("token".into(), "not-the-token".into()));
    let error = message(library()?.batch_read().options(wrong).run());
    assert!(
        error.contains("answered 401: check the credentials"),
        "{error}"
    );
    assert!(!error.contains("not-the-token"), "{error}");
    Ok(())
}

#[test]
fn an_option_that_is_not_a_url_is_named() -> sparkds::Result<()> {
    let server = server();
    let mut bad = options(&server, &[]);
    bad.retain(|(k, _)| k != "url");
    bad.push(("url".into(), "api.example.com".into()));
    let error = message(library()?.batch_read().options(bad).run());
    assert!(
        error.contains("option `url` must be the API's URL"),
        "{error}"
    );
    Ok(())
}
