//! The kit against the scripted server of `sparkds::testing::http`: each way of paging, the
//! waits of 429 and 5xx answers, the budget, a refused token, a cancelled task, and a reader
//! that stops early asking for no more pages.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use spark_datasource::{Error, Result, Secret};
use spark_datasource_http::{Api, Auth, Listing, Next, Page, Paging, Retries};
use sparkds::testing::http::{HttpServer, Request, Response};

/// 25 items, `per_page` (10 by default) a page, page `page` (from 1).
fn items(request: &Request) -> (Vec<Value>, u64, u64) {
    let per_page: u64 = request
        .query("per_page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(10);
    let page: u64 = request
        .query("page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1);
    let first = (page - 1) * per_page;
    let ids = (first..(first + per_page).min(25)).map(|id| json!({"id": id}));
    (ids.collect(), page, per_page)
}

fn fast() -> Retries {
    Retries {
        attempts: 4,
        base_ms: 1,
        cap_ms: 20,
    }
}

fn ids(pages: Vec<Page>) -> Vec<u64> {
    let values = pages.iter().map(Page::values).collect::<Result<Vec<_>>>();
    let values = values.unwrap_or_default().concat();
    values.iter().filter_map(|r| r["id"].as_u64()).collect()
}

#[test]
fn link_pages_are_followed_through_429s_and_500s() -> Result<()> {
    let server = HttpServer::start(|request| {
        assert_eq!(request.header("authorization"), Some("Bearer t0ken"));
        let (records, page, per_page) = items(request);
        let mut response = Response::json(json!(records));
        if page * per_page < 25 {
            let next = format!(
                "<{}?page={}&per_page={per_page}>; rel=\"next\"",
                request.path,
                page + 1
            );
            response = response.header("Link", &next);
        }
        response
    })
    .map_err(|e| Error::io("start the server", e))?;
    server.fail_every(2, Response::status(429).header("Retry-After", "0"));
    server.fail_next(1, Response::status(503));
    let api = Api::new(&server.url(), "url")?
        .auth(Auth::Bearer(Secret::new("t0ken")))
        .retries(fast());
    let mut session = api.session(|| false);
    let listing = Listing::new("/items")
        .query("per_page", 10)
        .paging(Paging::Link);
    let pages: Vec<Page> = listing.pages(&mut session).collect::<Result<_>>()?;
    assert_eq!(ids(pages), (0..25).collect::<Vec<_>>());
    // Three pages, one 503 and every second answer a 429.
    assert!(session.requests() > 3, "{}", session.requests());
    assert_eq!(session.requests() as usize, server.request_count());
    Ok(())
}

#[test]
fn page_numbers_offsets_and_cursors_each_read_every_record_once() -> Result<()> {
    let server = HttpServer::start(|request| match request.path.as_str() {
        "/pages" => Response::json(json!({"data": items(request).0})),
        "/offsets" => {
            let offset: u64 = request
                .query("offset")
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let limit: u64 = request
                .query("limit")
                .and_then(|p| p.parse().ok())
                .unwrap_or(10);
            let records: Vec<Value> = (offset..(offset + limit).min(25))
                .map(|id| json!({"id": id}))
                .collect();
            Response::json(json!(records))
        }
        _ => {
            let after: u64 = request
                .query("after")
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let records: Vec<Value> = (after..(after + 10).min(25))
                .map(|id| json!({"id": id}))
                .collect();
            let next = (after + 10 < 25).then(|| (after + 10).to_string());
            Response::json(json!({"items": records, "meta": {"next": next}}))
        }
    })
    .map_err(|e| Error::io("start the server", e))?;
    let api = Api::new(&server.url(), "url")?.retries(fast());
    let listings = [
        Listing::new("/pages")
            .records("/data")
            .paging(Paging::PageNumber {
                param: "page".into(),
                first: 1,
                step: 1,
            }),
        Listing::new("/offsets").paging(Paging::Offset {
            offset: "offset".into(),
            limit: "limit".into(),
            size: 10,
        }),
        Listing::new("/cursor")
            .records("/items")
            .paging(Paging::Cursor {
                param: "after".into(),
                next: Next::Body("/meta/next".into()),
            }),
    ];
    for listing in listings {
        let mut session = api.session(|| false);
        let pages: Vec<Page> = listing.pages(&mut session).collect::<Result<_>>()?;
        assert_eq!(ids(pages), (0..25).collect::<Vec<_>>(), "{}", listing.path);
    }
    Ok(())
}

#[test]
fn a_reader_that_stops_asks_for_no_more_pages_and_the_budget_holds() -> Result<()> {
    let server = HttpServer::start(|request| Response::json(json!(items(request).0)))
        .map_err(|e| Error::io("start the server", e))?;
    let paging = Paging::PageNumber {
        param: "page".into(),
        first: 1,
        step: 1,
    };
    let api = Api::new(&server.url(), "url")?.retries(fast()).budget(2);
    let listing = Listing::new("/items").paging(paging);
    let mut session = api.session(|| false);
    // A LIMIT of 10: the first page is enough.
    let first = listing.pages(&mut session).next();
    let first = first.map(|p| p.and_then(|p| p.records().map(|r| r.len())).ok());
    assert_eq!(first, Some(Some(10)));
    assert_eq!(server.request_count(), 1);
    let mut session = api.session(|| false);
    let error = listing
        .pages(&mut session)
        .collect::<Result<Vec<_>>>()
        .err();
    assert_eq!(
        error.map(|e| e.to_string()).as_deref(),
        Some("the task made its budget of 2 requests before GET /items: raise the budget, or read less (a filter, a limit)")
            .map(|m| m.replace("/items", &format!("{}/items", server.url())))
            .as_deref()
    );
    Ok(())
}

#[test]
fn a_refused_token_is_said_without_its_value_and_not_tried_again() -> Result<()> {
    let server = HttpServer::start(|_| Response::status(401).body(b"bad credentials".to_vec()))
        .map_err(|e| Error::io("start the server", e))?;
    let api = Api::new(&server.url(), "url")?
        .auth(Auth::Bearer(Secret::new("s3cret")))
        .retries(fast());
    let mut session = api.session(|| false);
    let error = session
        .get("/items", &[])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        error.contains("answered 401: check the credentials"),
        "{error}"
    );
    assert!(
        error.contains("bad credentials") && !error.contains("s3cret"),
        "{error}"
    );
    assert_eq!(server.request_count(), 1);
    Ok(())
}

#[test]
fn a_cancelled_task_stops_waiting_for_a_long_retry_after() -> Result<()> {
    let server = HttpServer::start(|_| Response::status(429).header("Retry-After", "3600"))
        .map_err(|e| Error::io("start the server", e))?;
    let api = Api::new(&server.url(), "url")?.retries(Retries {
        attempts: 3,
        base_ms: 1,
        cap_ms: 600_000,
    });
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancelled);
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        flag.store(true, Ordering::SeqCst);
    });
    let started = std::time::Instant::now();
    let mut session = api.session(|| cancelled.load(Ordering::SeqCst));
    let result = session.get("/items", &[]);
    let _ = canceller.join();
    assert!(matches!(result, Err(Error::Cancelled)));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    Ok(())
}

#[test]
fn a_next_link_to_another_host_is_not_followed() -> Result<()> {
    let server = HttpServer::start(|_| {
        Response::json(json!([{"id": 1}]))
            .header("Link", "<https://elsewhere.example/x>; rel=\"next\"")
    })
    .map_err(|e| Error::io("start the server", e))?;
    let api = Api::new(&server.url(), "url")?.auth(Auth::Bearer(Secret::new("t")));
    let mut session = api.session(|| false);
    let listing = Listing::new("/items").paging(Paging::Link);
    let error = listing
        .pages(&mut session)
        .collect::<Result<Vec<_>>>()
        .err();
    let error = error.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        error.contains("the API gave the URL https://elsewhere.example/x for the next page"),
        "{error}"
    );
    Ok(())
}
