//! The sample API, and only it: the one module to replace with your API's own (the book's "Read
//! an HTTP API"). `api_read.rs` asks this module for the schema of a record, the listing of a
//! partition's pages and the filters the API evaluates, and keeps to whatever they are; the
//! tests of `tests/library/` run the conformance kit on an API scripted like this one
//! (`tests/library/sample_api`), which you replace with pages of yours.
//!
//! The sample API lists items, `GET <url>/items?per_page=<n>&page=<p>` signed in with a bearer
//! token, each page `{"items": [{"id": 1, "name": "item 1", "status": "open", "score": 0.5},
//! ...]}`, an empty page after the last; `status=<value>` keeps the items of that status,
//! `since_id=<n>` those whose id is above n.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use spark_datasource::{Options, Result};
use spark_datasource_http::params::{Kind, Op, Params};
use spark_datasource_http::{Listing, Paging};

/// The path of the records when the option `resource` does not say.
pub const RESOURCE: &str = "/items";

/// The most records a page holds (the option `per_page`, which the API caps).
pub const MAX_PER_PAGE: u64 = 100;

/// The columns of a record; a field that the schema lacks is left out, one that a record lacks
/// is null (`spark_datasource_http::Records` has the table of JSON types). A source whose schema
/// comes from its options (a resource's) reads it here from `options`.
pub fn schema(_options: &Options) -> Result<SchemaRef> {
    Ok(Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("status", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
    ])))
}

/// The pages of one partition: page `first`, then every `step`-th page after it, until an empty
/// one (partition k of n reads pages k, k + n, ...); the records are the array `items`.
pub fn listing(resource: &str, per_page: u64, first: u64, step: u64) -> Listing {
    Listing::new(resource)
        .query("per_page", per_page)
        .paging(Paging::PageNumber {
            param: "page".into(),
            first,
            step,
        })
        .records("/items")
}

/// The filters that the API evaluates exactly as Spark does, each as a query parameter:
/// `status = '<text>'` as `status=`, `id > <integer>` as `since_id=`. Spark evaluates the others.
pub fn params() -> Params {
    Params::new()
        .rule("status", Op::Eq, "status", Kind::String)
        .rule("id", Op::Gt, "since_id", Kind::Integer)
}
