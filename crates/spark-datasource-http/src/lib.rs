//! The HTTP API part of the connector kit of `spark-datasource`: what a connector of a paged,
//! token-signed JSON API would otherwise write by hand.
//!
//! - [`Api`] and [`Session`]: the API's URL, sign-in ([`Auth`]: a bearer token, basic, or a
//!   header of its own, each a [`Secret`](spark_datasource::Secret)), retries of 429 and 5xx
//!   answers with `Retry-After` and exponential backoff with jitter ([`Retries`]), waits that
//!   end when the task is cancelled, and a budget of requests a task. `Api` is settings that
//!   cross to the executors with the reader; a `Session` holds a task's connections.
//! - [`Listing`]: a listing page by page, by the `Link` header, a page number, an offset or a
//!   cursor ([`Paging`]), its records at a JSON pointer of each page; a page is asked for only
//!   when the one before is used up, so a `LIMIT` stops the requests.
//! - [`Records`]: JSON records as Arrow batches of the scan's schema (its table of types).
//! - [`params`]: the pushed filters that the API evaluates as Spark does, as query parameters.
//!
//! Credentials are options like any other: they reach the executors in the reader's state,
//! which Spark sends them (the book's chapter on secrets).
//!
//! ```no_run
//! use spark_datasource::{Result, Secret};
//! use spark_datasource_http::{Api, Auth, Listing, Paging, Records};
//! # fn read(schema: spark_datasource::arrow_schema::SchemaRef) -> Result<()> {
//! let api = Api::new("https://api.example.com", "url")?
//!     .auth(Auth::Bearer(Secret::new("...")))
//!     .budget(1_000);
//! let issues = Listing::new("/issues")
//!     .query("per_page", 100)
//!     .paging(Paging::Link);
//! let mut session = api.session(|| false);
//! let mut records = Records::new(schema, 8192)?;
//! for page in issues.pages(&mut session) {
//!     for batch in records.push(&page?)? {
//!         # let _ = batch;
//!     }
//! }
//! # Ok(()) }
//! ```

mod client;
mod paging;
pub mod params;
mod records;
mod retry;

pub use client::{Api, Auth, Reply, Session};
pub use paging::{Listing, Next, Page, Pages, Paging};
pub use records::Records;
pub use retry::Retries;
