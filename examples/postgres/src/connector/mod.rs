//! A PostgreSQL data source: tables and queries read and written with COPY's binary format,
//! under the options of Spark's JDBC source where they mean the same.
//!
//! - The schema comes from the row description of the relation, as the server plans it
//!   (`catalog`): each PostgreSQL type maps to the Spark type of Spark's JDBC source (`types`:
//!   `timestamp` by `preferTimestampNTZ`, `uuid`, `jsonb`, enums... as their text), and any
//!   other is refused by name with its column.
//! - Reads plan ranges of a numeric, date or timestamp column as the JDBC source does
//!   (`partitionColumn`, `lowerBound`, `upperBound`, `numPartitions`: `read`), push the columns,
//!   the limit and the filters that PostgreSQL evaluates as Spark does (`sql`), and decode
//!   `COPY (SELECT ...) TO STDOUT (FORMAT binary)` into Arrow builders (`binary`).
//! - Writes stage each task attempt's rows in a table of their own with binary COPY; the commit
//!   publishes them all into the target in one transaction (`write`).
//! - Connections: `url`, `user`, `password`, `sslmode` and the fallbacks of libpq (`connect`),
//!   with TLS by default (`tls`) and the server's authentication held to SCRAM with channel
//!   binding and enough iterations (`guard`).
//! - Streaming reads capture the changes of tables from a logical replication slot (`cdc`),
//!   selected by the option `slot`.

mod binary;
pub mod cdc;
mod connect;
mod copy_out;
mod guard;
mod pages;
mod projection;
mod read;
mod sql;
mod time;
mod tls;
mod types;
mod write;

use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use serde::{Deserialize, Serialize};
use spark_datasource::{DataSource, Error, Options, Result};

use self::binary::BatchSize;
use self::connect::{describe, Connection, Session};
use self::sql::ColumnInfo;

pub use self::read::Reader;
pub use self::write::{DataWriter, Writer};

/// Every option, under the name of Spark's JDBC source where it has one.
const OPTIONS: &[&str] = &[
    "url",
    "user",
    "password",
    "dbtable",
    "query",
    "partitionColumn",
    "lowerBound",
    "upperBound",
    "numPartitions",
    "snapshotTimeout",
    "fetchsize",
    "batchBytes",
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "allowPasswordWithoutTls",
    "channelBinding",
    "minScramIterations",
    "passwordFromEnvironment",
    "connectTimeout",
    "pushDownPredicate",
    "pushDownLimit",
    "preferTimestampNTZ",
    // Accepted and ignored, so that the options of a JDBC read work unchanged.
    "driver",
];

/// Rows per Arrow batch when `fetchsize` is not set: as the SDK's sample batches, since each
/// batch pays fixed costs in Spark (and in a Python worker, through the bridge).
const DEFAULT_BATCH_ROWS: usize = 65_536;

/// Bytes of text, bytes and arrays at which a batch closes before `fetchsize` rows, when
/// `batchBytes` is not set. Arrow addresses a column's values with 32-bit offsets, so a batch
/// must stay below 2 GiB of them (65,536 rows of 1 MiB would not); a task holds about four
/// batches at once (the one Spark reads, two ahead, one being filled), 128 MiB at this size;
/// and at 32 MiB a batch's fixed costs are nothing next to its bytes.
const DEFAULT_BATCH_BYTES: usize = 32 << 20;

/// The largest `batchBytes`: a batch closes after the row that reaches the budget, and one
/// value of PostgreSQL is at most 1 GiB, so a batch stays below Arrow's 2 GiB.
const MAX_BATCH_BYTES: usize = 1 << 30;

/// The data source: the options of the query, checked once.
pub struct Source {
    settings: Settings,
    /// A stream of changes (the option `slot`), or `None` for batch reads and writes.
    capture: Option<cdc::Capture>,
}

/// What reads and writes need; it travels with readers and writers.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Settings {
    connection: Connection,
    relation: Relation,
    partitioning: Option<read::PartitionOptions>,
    batch_size: BatchSize,
    push_filters: bool,
    push_limit: bool,
    /// `preferTimestampNTZ`: a `timestamp` reads as `timestamp_ntz` rather than `timestamp`.
    prefer_ntz: bool,
}

/// What the query reads or writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Relation {
    /// `dbtable`: a table or view, or anything valid in a FROM clause, as SQL writes it.
    Table(String),
    /// `query`: a SELECT, read as a subquery.
    Query(String),
}

impl Relation {
    /// The relation in a FROM clause.
    fn in_from(&self) -> String {
        match self {
            Relation::Table(table) => table.clone(),
            Relation::Query(query) => format!("({query}) AS sparkds_query"),
        }
    }

    /// The relation, for messages.
    fn describe(&self) -> String {
        match self {
            Relation::Table(table) => format!("`dbtable` {table}"),
            Relation::Query(_) => "the `query`".to_string(),
        }
    }
}

impl DataSource for Source {
    fn create(_name: &str, options: Options) -> Result<Self> {
        let known: Vec<&str> = OPTIONS.iter().chain(cdc::OPTIONS).copied().collect();
        options.expect_only(&known)?;
        let capture = cdc::Capture::from_options(&options)?;
        let relation = match (options.get("dbtable"), options.get("query")) {
            (Some(_), Some(_)) => {
                return Err(Error::Option(
                    "options `dbtable` and `query` cannot both be set: give a table with \
                     `dbtable`, or a SELECT with `query`"
                        .to_string(),
                ))
            }
            (Some(table), None) => Relation::Table(table.trim().to_string()),
            (None, Some(query)) => Relation::Query(query.trim().trim_end_matches(';').to_string()),
            (None, None) => Relation::Table(String::new()),
        };
        let batch_rows = options.get_or("fetchsize", DEFAULT_BATCH_ROWS)?;
        let batch_bytes = options.get_or("batchBytes", DEFAULT_BATCH_BYTES)?;
        if !(1..=MAX_BATCH_BYTES).contains(&batch_bytes) {
            return Err(Error::Option(format!(
                "option `batchBytes` must be from 1 to {MAX_BATCH_BYTES} (1 GiB), got \
                 {batch_bytes}"
            )));
        }
        // Spark creates a source without options to ask for its capabilities: only a source
        // that names what it reads or writes needs a `url`.
        let probe = options.iter().next().is_none();
        let connection = if probe {
            Options::new([("url", "postgresql://localhost")])
        } else {
            options.clone()
        };
        let settings = Settings {
            connection: Connection::from_options(&connection)?,
            relation,
            partitioning: read::PartitionOptions::from_options(&options)?,
            batch_size: BatchSize {
                // As Spark's JDBC source: 0 is the driver's default.
                rows: if batch_rows == 0 {
                    DEFAULT_BATCH_ROWS
                } else {
                    batch_rows
                },
                bytes: batch_bytes,
            },
            push_filters: options.get_or("pushDownPredicate", true)?,
            push_limit: options.get_or("pushDownLimit", true)?,
            prefer_ntz: options.get_or("preferTimestampNTZ", false)?,
        };
        let source = Source { settings, capture };
        if !probe && source.capture.is_none() {
            source.check()?;
        }
        Ok(source)
    }

    fn schema(&self) -> Result<SchemaRef> {
        if let Some(capture) = &self.capture {
            let client = self.settings.connection.connect("sparkds-schema")?;
            return Ok(cdc::schema(&cdc::catalog(
                &client,
                capture,
                self.settings.prefer_ntz,
            )?));
        }
        let catalog = self.catalog()?;
        let fields: Vec<_> = catalog
            .columns
            .iter()
            .map(|c| types::field(&c.name, &c.kind, c.nullable))
            .collect();
        Ok(Arc::new(Schema::new(fields)))
    }
}

/// What the server says about the relation.
struct Catalog {
    columns: Vec<ColumnInfo>,
    /// Whether the database is UTF-8, so that `COLLATE "C"` is Spark's order of strings.
    utf8: bool,
}

impl Source {
    /// The options that every read and write needs.
    fn check(&self) -> Result<()> {
        if self.capture.is_some() {
            return Err(Error::Option(
                "option `slot` captures changes, which only a streaming read \
                (spark.readStream) reads: leave `slot` out to read or write a table with \
                `dbtable`"
                    .to_string(),
            ));
        }
        match &self.settings.relation {
            Relation::Table(table) if table.is_empty() => Err(Error::Option(
                "missing option `dbtable` or `query`: set .option(\"dbtable\", \"schema.table\") \
                 or .option(\"query\", \"SELECT ...\")"
                    .to_string(),
            )),
            _ => Ok(()),
        }
    }

    /// The columns of the relation, from the row description of `SELECT * FROM relation`.
    fn catalog(&self) -> Result<Catalog> {
        self.check()?;
        let client = self.settings.connection.connect("sparkds-schema")?;
        catalog(&client, &self.settings.relation, self.settings.prefer_ntz)
    }
}

/// The columns of a `dbtable` that are `NOT NULL`, which Spark's JDBC source reads as not
/// nullable. None of a view's (PostgreSQL marks none), nor of a `query`'s: the JDBC driver
/// calls a column of a query not nullable when it comes straight from a `NOT NULL` column,
/// which an outer join can still make NULL; this reads such a column as nullable.
fn not_null_columns(client: &Session, relation: &Relation) -> Vec<String> {
    let Relation::Table(table) = relation else {
        return Vec::new();
    };
    // A `dbtable` that is not a name (`(SELECT ...) AS t`) has no such columns.
    client
        .query(
            "SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass($1) \
             AND attnum > 0 AND NOT attisdropped AND attnotnull",
            &[table],
        )
        .map(|rows| rows.iter().map(|row| row.get(0)).collect())
        .unwrap_or_default()
}

fn catalog(client: &Session, relation: &Relation, prefer_ntz: bool) -> Result<Catalog> {
    let statement = client
        .prepare(&format!("SELECT * FROM {}", relation.in_from()))
        .map_err(|e| {
            Error::msg(format!(
                "cannot read the columns of {}: {}",
                relation.describe(),
                describe(&e)
            ))
        })?;
    let not_null = not_null_columns(client, relation);
    let columns = statement
        .columns()
        .iter()
        .map(|c| {
            Ok(ColumnInfo {
                name: c.name().to_string(),
                kind: types::read_kind(c.name(), c.type_(), c.type_modifier(), prefer_ntz)?,
                nullable: !not_null.iter().any(|name| name == c.name()),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let encoding: String = client
        .query_one("SELECT current_setting('server_encoding')", &[])
        .and_then(|row| row.try_get(0))
        .map_err(|e| {
            Error::msg(format!(
                "cannot read the server's encoding: {}",
                describe(&e)
            ))
        })?;
    Ok(Catalog {
        columns,
        utf8: encoding.eq_ignore_ascii_case("UTF8"),
    })
}
