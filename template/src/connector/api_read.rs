//! Batch reads of the API, on the HTTP part of the connector kit (`spark_datasource_http`):
//! partitions that read the pages in turn, sign-in with a bearer token, retries of 429 and 5xx
//! answers, a budget of requests, a pushed limit that stops the requests, the pushed filters
//! that the API evaluates as query parameters, and the records of each page decoded into the
//! columns Spark reads. What is the API's own comes from `sample_api`.

use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};
use spark_datasource::filters::Filter;
use spark_datasource::kit::schema::Scan;
use spark_datasource::{
    BatchRead, BatchReader, BatchSender, Batches, DataSource, Error, Producer, Result, TaskContext,
};
use spark_datasource_http::{Api, Auth, Listing, Records};

use super::sample_api;
use super::Source;

/// The options of a batch read.
const OPTIONS: &[&str] = &[
    "url",
    "token",
    "resource",
    "num_partitions",
    "per_page",
    "max_requests",
];

/// The most rows in a batch: the records of several pages go into one.
const BATCH_ROWS: usize = 8192;

/// The reader: everything a task needs, sent to the executors as bytes (the token too, as every
/// option is: the book's chapter on secrets).
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    api: Api,
    resource: String,
    num_partitions: u64,
    per_page: u64,
    /// The source's columns, those Spark reads, and the limit that `push_limit` accepted.
    scan: Scan,
    /// The query parameters of the filters that `push_filters` accepted.
    query: Vec<(String, String)>,
}

impl BatchRead for Source {
    type Reader = Reader;

    fn reader(&self, schema: SchemaRef) -> Result<Reader> {
        let options = &self.options;
        options.expect_only(OPTIONS)?;
        let mut api = Api::new(&options.required::<String>("url")?, "url")?;
        if let Some(token) = options.secret("token") {
            api = api.auth(Auth::Bearer(token));
        }
        if let Some(requests) = options.optional::<u64>("max_requests")? {
            api = api.budget(requests);
        }
        let num_partitions = options.get_or("num_partitions", 2_u64)?;
        let per_page = options.get_or("per_page", sample_api::MAX_PER_PAGE)?;
        if num_partitions == 0 || !(1..=sample_api::MAX_PER_PAGE).contains(&per_page) {
            return Err(Error::Option(format!(
                "option `num_partitions` must be at least 1 (got {num_partitions}) and \
                 `per_page` 1 to {} (got {per_page})",
                sample_api::MAX_PER_PAGE
            )));
        }
        Ok(Reader {
            api,
            resource: options.get_or("resource", sample_api::RESOURCE.to_string())?,
            num_partitions,
            per_page,
            scan: Scan::new(self.schema()?, schema)?,
            query: Vec::new(),
        })
    }
}

impl BatchReader for Reader {
    /// The first page of the partition, and the step to its next.
    type Partition = (u64, u64);

    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        let (accepted, query) = sample_api::params().apply(filters);
        self.query = query;
        Ok(accepted)
    }

    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        self.scan.limit = Some(limit);
        Ok(true)
    }

    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        self.scan.prune(required)
    }

    fn partitions(&self) -> Result<Vec<(u64, u64)>> {
        // A limit that a page or two hold: one partition, whose pages stop at the limit.
        let small = self.scan.limit.is_some_and(|l| l <= 2 * self.per_page);
        let count = if small { 1 } else { self.num_partitions };
        Ok((1..=count).map(|first| (first, count)).collect())
    }

    fn read(&self, (first, step): (u64, u64), task: &TaskContext) -> Result<Batches> {
        // Under a limit, pages of no more records than it.
        let per_page = self
            .scan
            .limit
            .map_or(self.per_page, |l| l.clamp(1, self.per_page));
        let mut listing = sample_api::listing(&self.resource, per_page, first, step);
        for (name, value) in &self.query {
            listing = listing.query(name, value);
        }
        let (api, scan) = (self.api.clone(), self.scan.clone());
        let batches = Producer::spawn(task, move |out| send_pages(&api, &listing, &scan, out))?;
        Ok(self
            .scan
            .limited(Batches::new(self.scan.read.clone(), batches)))
    }
}

/// Sends the records of the listing's pages in batches, asking for no page past the limit.
fn send_pages(api: &Api, listing: &Listing, scan: &Scan, out: &BatchSender) -> Result<()> {
    let mut session = api.session(|| out.is_cancelled());
    let mut records = Records::new(scan.read.clone(), BATCH_ROWS)?;
    let mut sent = 0;
    for page in listing.pages(&mut session) {
        for batch in records.push(&page?)? {
            sent += batch.num_rows() as u64;
            out.send(batch)?;
        }
        if scan.limit.is_some_and(|l| sent + records.pending() >= l) {
            break;
        }
    }
    if let Some(batch) = records.flush()? {
        out.send(batch)?;
    }
    Ok(())
}
