//! Reads: each partition reads every `partitions`-th page (page numbers, as GitHub's `page`),
//! with the pushed filters that the API evaluates as query parameters; a pushed limit that one
//! page holds is one request.

use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};
use spark_datasource::filters::Filter;
use spark_datasource::kit::schema::Scan;
use spark_datasource::{
    BatchRead, BatchReader, BatchSender, Batches, Producer, Result, TaskContext,
};
use spark_datasource_http::params::{Kind, Op, Params};
use spark_datasource_http::{Listing, Paging, Records};

use super::Issues;

/// The filters that the API evaluates as Spark does: `state = '...'` (the API's `state`), and
/// `updated_at >= <timestamp of whole seconds>` (its `since`: updated at or after, to the second).
fn params() -> Params {
    Params::new()
        .rule("state", Op::Eq, "state", Kind::String)
        .rule("updated_at", Op::Ge, "since", Kind::TimestampSeconds)
}

/// The reader: the source, what Spark reads of it, and the query of the pushed filters.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    issues: Issues,
    scan: Scan,
    query: Vec<(String, String)>,
}

impl BatchRead for Issues {
    type Reader = Reader;

    fn reader(&self, schema: SchemaRef) -> Result<Reader> {
        Ok(Reader {
            scan: Scan::new(super::schema(), schema)?,
            issues: self.clone(),
            query: Vec::new(),
        })
    }
}

impl BatchReader for Reader {
    /// The first page of the partition, and the step to its next.
    type Partition = (u64, u64);

    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        self.scan.limit = Some(limit);
        Ok(true)
    }

    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        let (accepted, query) = params().apply(filters);
        self.query = query;
        Ok(accepted)
    }

    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        self.scan.prune(required)
    }

    fn partitions(&self) -> Result<Vec<(u64, u64)>> {
        // A limit that a page or two hold: one partition, whose pages stop at the limit.
        let one = self
            .scan
            .limit
            .is_some_and(|l| l <= 2 * self.issues.per_page);
        let count = if one { 1 } else { self.issues.partitions };
        Ok((1..=count).map(|first| (first, count)).collect())
    }

    fn read(&self, (first, step): (u64, u64), task: &TaskContext) -> Result<Batches> {
        let per_page = match self.scan.limit {
            Some(limit) => limit.clamp(1, self.issues.per_page),
            None => self.issues.per_page,
        };
        let mut listing = Listing::new(&self.issues.resource)
            .query("per_page", per_page)
            .paging(Paging::PageNumber {
                param: "page".into(),
                first,
                step,
            });
        // The API reads open issues only unless it is told otherwise.
        if !self.query.iter().any(|(name, _)| name == "state") {
            listing = listing.query("state", "all");
        }
        for (name, value) in &self.query {
            listing = listing.query(name, value);
        }
        let (issues, scan) = (self.issues.clone(), self.scan.clone());
        let schema = scan.read.clone();
        let batches = Producer::spawn(task, move |out| run(&issues, &listing, &scan, out))?;
        Ok(self.scan.limited(Batches::new(schema, batches)))
    }
}

/// Sends the records of the listing's pages in batches, until the limit if there is one.
fn run(issues: &Issues, listing: &Listing, scan: &Scan, out: &BatchSender) -> Result<()> {
    let mut session = issues.api.session(|| out.is_cancelled());
    let mut records = Records::new(scan.read.clone(), 8192)?;
    let mut read = 0u64;
    for page in listing.pages(&mut session) {
        for batch in records.push(&page?)? {
            read += batch.num_rows() as u64;
            out.send(batch)?;
        }
        if scan
            .limit
            .is_some_and(|limit| read + records.pending() >= limit)
        {
            break;
        }
    }
    if let Some(batch) = records.flush()? {
        out.send(batch)?;
    }
    Ok(())
}
