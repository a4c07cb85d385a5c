//! The kind `http_api`: a batch reader of a paged JSON API on spark-datasource-http. Its project
//! builds, lints and passes its tests (the conformance kit within a budget of requests, against
//! the scripted API of its tests), and `cargo sparkds check` against such an API, served here,
//! stays within a budget of requests.

use sparkds::testing::http::{HttpServer, Request, Response};

use super::{check, Generate};

/// The token of the API served here.
const TOKEN: &str = "token-of-the-suite";

/// The items of the API, and the page size the check reads with: three pages.
const ITEMS: u64 = 25;
const PER_PAGE: u64 = 10;

/// The requests of a read of every page with the generated reader's 2 partitions: pages 1, 3
/// and 5 (empty, the end), and pages 2 and 4 (empty).
const WHOLE_READ: usize = 5;

/// The reads of `cargo sparkds check`'s batch read protocol: every column, one column, every
/// column again (another reader), the one column's partitions again, no column, a limit of one
/// row (one request of one record), a killed task. Its other protocols read nothing.
const CHECK_READS: usize = 7;

/// The budget of requests of `cargo sparkds check`.
const CHECK_REQUESTS: usize = CHECK_READS * WHOLE_READ;

/// The sample API of the generated project (`src/connector/sample_api.rs`), as its tests script
/// it: `GET /items?per_page=&page=&status=&since_id=`, `{"items": [...]}`, a bearer token.
fn answer(request: &Request) -> Response {
    if request.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return Response::status(401).body(br#"{"message":"Bad credentials"}"#.to_vec());
    }
    if request.path != "/items" {
        return Response::status(404);
    }
    let number = |key: &str, default: u64| {
        request
            .query(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (per_page, page) = (number("per_page", 30).min(100), number("page", 1).max(1));
    let status = request.query("status");
    let items: Vec<serde_json::Value> = (number("since_id", 0) + 1..=ITEMS)
        .map(|id| {
            let status = if id.is_multiple_of(3) { "closed" } else { "open" };
            let score = (!id.is_multiple_of(4)).then(|| id as f64 / 2.0);
            serde_json::json!({"id": id, "name": format!("item {id}"), "status": status, "score": score})
        })
        .filter(|item| status.is_none_or(|s| item["status"] == s))
        .skip(((page - 1) * per_page) as usize)
        .take(per_page as usize)
        .collect();
    Response::json(serde_json::json!({ "items": items }))
}

#[test]
fn an_http_api_reader_passes_its_tests_and_check_within_a_budget_of_requests() {
    let project = Generate::named("http_api")
        .define("kind", "http_api")
        .project();
    check(&project);

    // The project is small, and the sample the user replaces smaller.
    let files: Vec<String> = project
        .tree()
        .lines()
        .filter(|f| !f.starts_with(".github/"))
        .map(str::to_string)
        .collect();
    let lines: usize = files.iter().map(|f| project.read(f).lines().count()).sum();
    assert!(
        files.len() <= 15,
        "{} files:\n{}",
        files.len(),
        files.join("\n")
    );
    assert!(lines <= 900, "{lines} lines in {} files", files.len());
    let sample = project.read("src/connector/sample_api.rs").lines().count();
    assert!(
        sample <= 60,
        "src/connector/sample_api.rs has {sample} lines"
    );

    // `cargo sparkds check` against the API, served by this test: every protocol passes, within
    // the budget, every request signed in, and the token in no line it prints.
    let api = HttpServer::start(answer).expect("the API starts");
    let url = format!("url={}", api.url());
    let token = format!("token={TOKEN}");
    let per_page = format!("per_page={PER_PAGE}");
    let (printed, said) = project.cargo_printed(&["sparkds", "check", &url, &token, &per_page]);
    assert!(
        printed.contains("batch-read") && printed.contains("25 rows"),
        "{printed}"
    );
    let asked = api.request_count();
    println!("cargo sparkds check asked the API {asked} times:\n{printed}");
    assert!(
        (WHOLE_READ..=CHECK_REQUESTS).contains(&asked),
        "cargo sparkds check asked the API {asked} times, over its budget of {CHECK_REQUESTS}:\n{printed}"
    );
    let signed = format!("Bearer {TOKEN}");
    assert!(api
        .requests()
        .iter()
        .all(|r| r.header("authorization") == Some(signed.as_str())));
    assert!(
        !printed.contains(TOKEN) && !said.contains(TOKEN),
        "{printed}{said}"
    );
}

/// The kit's crate comes from where the answer `sdk` says, as spark-datasource does.
#[test]
fn the_http_kit_comes_from_where_the_sdk_does() {
    let dependency = |sdk: &str| -> String {
        let project = Generate::named("api_from")
            .define("kind", "http_api")
            .define("sdk", sdk)
            .project();
        let manifest = project.read("Cargo.toml");
        let line = manifest
            .lines()
            .find(|line| line.starts_with("spark-datasource-http = "))
            .expect("a dependency on spark-datasource-http");
        line.to_string()
    };
    assert_eq!(
        dependency("version:0.1.0"),
        "spark-datasource-http = \"0.1.0\""
    );
    assert_eq!(
        dependency("git:https://example.org/spark-datasource-template.git#v0.1.0"),
        "spark-datasource-http = { git = \"https://example.org/spark-datasource-template.git\", tag = \"v0.1.0\" }"
    );
    assert_eq!(
        dependency("path:/opt/checkouts/spark-datasource-template/"),
        "spark-datasource-http = { path = \"/opt/checkouts/spark-datasource-template/crates/spark-datasource-http\" }"
    );
}
