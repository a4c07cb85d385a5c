//! An issues API shaped like GitHub's (`GET <resource>?state=&since=&per_page=&page=`, a `Link`
//! header to the next page, a bearer token), of `count` issues made from their numbers, on the
//! scripted server of `sparkds::testing::http`. The library's tests, the Spark tests and the
//! benchmark read it (the last two through `examples/issues_api.rs`).

use serde_json::{json, Value};
use sparkds::testing::http::{HttpServer, Request, Response};

/// The token the API takes.
pub const TOKEN: &str = "t0ken-of-the-tests";
/// The path of its issues.
pub const RESOURCE: &str = "/repos/sparkds/demo/issues";

/// Seconds since 1970 of 2024-01-01T00:00:00Z, when issue 0 would have been opened.
const START: i64 = 1_704_067_200;

/// The issue numbered `n` (from 1).
pub fn issue(n: u64) -> Value {
    let created = START + n as i64 * 7 * 60;
    let updated = created + (n % 97) as i64 * 3600;
    let mut labels = Vec::new();
    if n.is_multiple_of(5) {
        labels.push(json!({"name": "bug", "color": "d73a4a"}));
    }
    if n.is_multiple_of(7) {
        labels.push(json!({"name": "good first issue", "color": "7057ff"}));
    }
    json!({
        "id": 1_000_000 + n,
        "number": n,
        "title": if n.is_multiple_of(11) { format!("Ünïcode №{n} ☃") } else { format!("Issue {n}") },
        "state": if n % 10 < 3 { "open" } else { "closed" },
        "created_at": rfc3339(created),
        "updated_at": rfc3339(updated),
        "comments": n % 13,
        "user": {"login": format!("user{}", n % 50), "id": n % 50},
        "labels": labels,
        "body": "A body the schema does not read, as an API's pages have.",
    })
}

/// Whether issue `n` answers the request's `state` (GitHub's default: open) and `since`.
fn kept(n: u64, state: &str, since: Option<&str>) -> bool {
    let issue_state = if n % 10 < 3 { "open" } else { "closed" };
    let updated = START + n as i64 * 7 * 60 + (n % 97) as i64 * 3600;
    (state == "all" || state == issue_state) && since.is_none_or(|s| rfc3339(updated).as_str() >= s)
}

/// The server of `count` issues, which takes only [`TOKEN`]; `GET /_requests` answers how many
/// requests of the issues it has had (for a test in another process).
pub fn serve(count: u64) -> std::io::Result<HttpServer> {
    let asked = std::sync::atomic::AtomicU64::new(0);
    // The pages already made, by request: after the first time an answer costs the server a
    // lookup, so that what a benchmark measures is the readers, not the making of pages.
    let made = std::sync::Mutex::new(std::collections::HashMap::new());
    HttpServer::start(move |request| {
        if request.path == "/_requests" {
            return Response::json(
                json!({"requests": asked.load(std::sync::atomic::Ordering::SeqCst)}),
            );
        }
        asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let key = format!(
            "{} {:?} {:?}",
            request.path,
            request.query,
            request.header("authorization")
        );
        let cached = made.lock().ok().and_then(|m| m.get(&key).cloned());
        cached.unwrap_or_else(|| {
            let response = answer(request, count);
            if let Ok(mut made) = made.lock() {
                made.insert(key, response.clone());
            }
            response
        })
    })
}

fn answer(request: &Request, count: u64) -> Response {
    if request.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return Response::status(401).body(br#"{"message":"Bad credentials"}"#.to_vec());
    }
    if request.path != RESOURCE {
        return Response::status(404).body(br#"{"message":"Not Found"}"#.to_vec());
    }
    let number = |key: &str, default: u64| {
        request
            .query(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (per_page, page) = (number("per_page", 30).min(100), number("page", 1).max(1));
    let state = request.query("state").unwrap_or("open");
    let since = request.query("since").map(str::to_string);
    let matching = (1..=count).filter(|&n| kept(n, state, since.as_deref()));
    let issues: Vec<Value> = matching
        .skip(((page - 1) * per_page) as usize)
        .take(per_page as usize + 1)
        .map(issue)
        .collect();
    let more = issues.len() as u64 > per_page;
    let issues: Vec<Value> = issues.into_iter().take(per_page as usize).collect();
    let mut response = Response::json(Value::Array(issues));
    if more {
        let mut query: Vec<String> = request
            .query
            .iter()
            .filter(|(k, _)| k != "page")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        query.push(format!("page={}", page + 1));
        response = response.header(
            "Link",
            &format!("<{RESOURCE}?{}>; rel=\"next\"", query.join("&")),
        );
    }
    response
}

/// `yyyy-mm-ddThh:mm:ssZ` of seconds since 1970.
pub fn rfc3339(seconds: i64) -> String {
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}
