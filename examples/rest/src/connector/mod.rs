//! The source: the API, the listing of issues, and their schema.

mod read;

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use serde::{Deserialize, Serialize};
use spark_datasource::{DataSource, Options, Result};
use spark_datasource_http::{Api, Auth};

pub use read::Reader;

/// The options this source reads (and `path`, which Spark adds for `load(path)`).
const OPTIONS: &[&str] = &[
    "url",
    "resource",
    "token",
    "partitions",
    "perPage",
    "maxRequests",
];

/// The issues at `resource` of the API at `url`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Issues {
    api: Api,
    resource: String,
    partitions: u64,
    per_page: u64,
}

impl DataSource for Issues {
    fn create(_name: &str, options: Options) -> Result<Self> {
        options.expect_only(OPTIONS)?;
        let mut api = Api::new(&options.required::<String>("url")?, "url")?
            .header("Accept", "application/vnd.github+json");
        if let Some(token) = options.secret("token") {
            api = api.auth(Auth::Bearer(token));
        }
        if let Some(budget) = options.optional::<u64>("maxRequests")? {
            api = api.budget(budget);
        }
        let per_page = options.get_or("perPage", 100u64)?;
        let partitions = options.get_or("partitions", 4u64)?;
        if !(1..=100).contains(&per_page) || partitions == 0 {
            return Err(spark_datasource::Error::Option(format!(
                "option `perPage` must be 1 to 100 (got {per_page}) and `partitions` 1 or more \
                 (got {partitions})"
            )));
        }
        Ok(Issues {
            api,
            resource: options.required("resource")?,
            partitions,
            per_page,
        })
    }

    fn schema(&self) -> Result<SchemaRef> {
        Ok(schema())
    }
}

/// An issue, as the API writes it; a label is an object whose `name` is read.
pub fn schema() -> SchemaRef {
    let at = || DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let struct_of =
        |name: &str| DataType::Struct(Fields::from(vec![Field::new(name, DataType::Utf8, true)]));
    let label = Field::new("element", struct_of("name"), true);
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("number", DataType::Int32, false),
        Field::new("title", DataType::Utf8, true),
        Field::new("state", DataType::Utf8, true),
        Field::new("created_at", at(), true),
        Field::new("updated_at", at(), true),
        Field::new("comments", DataType::Int32, true),
        Field::new("user", struct_of("login"), true),
        Field::new("labels", DataType::List(Arc::new(label)), true),
    ]))
}
