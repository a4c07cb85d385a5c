//! The sample API of `src/connector/sample_api.rs`, scripted on the HTTP server of
//! `sparkds::testing::http`: the items `1..=ITEMS`, `GET /items?per_page=&page=` with the
//! filters `status=` and `since_id=`, an empty page after the last, signed in with [`TOKEN`].
//! Replace it with pages of your API (a few pages that you saved, and its errors), keeping the
//! request budget of the tests in step.

use sparkds::testing::http::{HttpServer, Request, Response};
use sparkds::Error;

/// The token the API takes.
pub const TOKEN: &str = "token-of-the-tests";

/// The items of the API: three pages of [`PER_PAGE`], the last one half full.
pub const ITEMS: u64 = 25;

/// The page size that the tests read with (the option `per_page`).
pub const PER_PAGE: u64 = 10;

/// The requests of a read of every page with the default 2 partitions: the first reads pages 1,
/// 3 and 5 (empty, the end), the second pages 2 and 4 (empty).
pub const WHOLE_READ: usize = 5;

/// The item numbered `id`: a score null in every fourth, every third item closed.
pub fn item(id: u64) -> serde_json::Value {
    let score = (!id.is_multiple_of(4)).then(|| id as f64 / 2.0);
    let status = if id.is_multiple_of(3) {
        "closed"
    } else {
        "open"
    };
    serde_json::json!({"id": id, "name": format!("item {id}"), "status": status, "score": score})
}

/// The API, on a port of its own until it is dropped.
pub fn serve() -> sparkds::Result<HttpServer> {
    HttpServer::start(answer).map_err(|e| Error::usage(format!("the API does not start: {e}")))
}

/// The options of a read of `api`.
pub fn options(api: &HttpServer) -> Vec<(String, String)> {
    let options = [
        ("url", api.url()),
        ("token", TOKEN.to_string()),
        ("per_page", PER_PAGE.to_string()),
    ];
    options.map(|(k, v)| (k.to_string(), v)).to_vec()
}

fn answer(request: &Request) -> Response {
    if request.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return Response::status(401).body(br#"{"message":"Bad credentials"}"#.to_vec());
    }
    if request.path != "/items" {
        return Response::status(404).body(br#"{"message":"Not Found"}"#.to_vec());
    }
    let number = |key: &str, default: u64| {
        let value = request.query(key).map(str::parse::<u64>);
        value.unwrap_or(Ok(default)).ok()
    };
    let (Some(per_page), Some(page), Some(since_id)) = (
        number("per_page", 30),
        number("page", 1),
        number("since_id", 0),
    ) else {
        return Response::status(400).body(br#"{"message":"Not a number"}"#.to_vec());
    };
    let status = request.query("status");
    let items: Vec<serde_json::Value> = (since_id + 1..=ITEMS)
        .map(item)
        .filter(|item| status.is_none_or(|s| item["status"] == s))
        .skip((page.max(1) - 1) as usize * per_page.min(100) as usize)
        .take(per_page.min(100) as usize)
        .collect();
    Response::json(serde_json::json!({ "items": items }))
}
