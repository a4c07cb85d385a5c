//! Batch reads: partitions planned as Spark's JDBC source plans them (or by the table's pages,
//! in one snapshot: `pages`), each read by one `COPY (SELECT <columns> FROM <relation> WHERE
//! <partition and filters> LIMIT <n>) TO STDOUT (FORMAT binary)` decoded into Arrow batches.
//!
//! A task reads on a thread of its own, the SDK's `Producer`, which holds the connection and
//! sends batches two ahead of Spark: the server streams and the decoder decodes while Spark
//! consumes the previous batch. The read ends only when the thread has read the COPY to its
//! trailer; its error or panic fails the task. When Spark stops reading (a limit reached, a
//! killed task), the thread's next send fails or its next check of `is_cancelled` says so, it
//! returns, and closing its connection ends the COPY on the server.
//!
//! A batch closes at `fetchsize` rows or at `batchBytes` bytes of text, bytes and arrays,
//! whichever comes first: Arrow's arrays of strings address their bytes with 32-bit offsets,
//! so a batch of 65,536 rows of 1 MiB each would not fit one.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{Schema, SchemaRef};
use serde::{Deserialize, Serialize};
use spark_datasource::filters::{Filter, Literal};
use spark_datasource::kit::partitions::RangePartition;
use spark_datasource::kit::sql::{accept_at_most, Dialect, Term};
use spark_datasource::{
    BatchRead, BatchReader, BatchSender, Batches, Error, Options, Producer, Result, TaskContext,
};
use tokio::io::{AsyncRead, AsyncWrite};

use super::binary::{CopyDecoder, Decoder, ReadError};
use super::connect::describe;
use super::copy_out::{CopyError, CopyOut, Detach, Duplex};
use super::pages::{self, PageRange};
use super::projection::Projection;
use super::sql::{self, quote, Bindings, ColumnInfo, MAX_PARAMS};
use super::time::{local_zone, parse_date, parse_timestamp};
use super::types::{self, Kind};
use super::{Settings, Source};

/// How often a thread that waits on the server checks whether Spark still reads.
pub const CANCEL_CHECK: Duration = Duration::from_millis(100);

/// The options of a partitioned read, as the query gave them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum PartitionOptions {
    /// Ranges of a column, as Spark's JDBC source reads them.
    Range {
        column: String,
        lower: String,
        upper: String,
        partitions: i64,
    },
    /// Ranges of the table's pages, in a snapshot that the driver holds for at most
    /// `timeout` seconds (`pages`).
    Pages { partitions: i64, timeout: u64 },
}

impl PartitionOptions {
    /// `partitionColumn`, `lowerBound`, `upperBound` and `numPartitions`: all or none of the
    /// first three, as in Spark's JDBC source (`numPartitions` alone only caps writes there);
    /// or `partitionColumn` `ctid` and `numPartitions` alone, with `snapshotTimeout`.
    ///
    /// # Errors
    /// Some of them only, or a `numPartitions` below 1.
    pub fn from_options(options: &Options) -> Result<Option<PartitionOptions>> {
        let names = ["partitionColumn", "lowerBound", "upperBound"];
        let given: Vec<Option<&str>> = names.iter().map(|n| options.get(n)).collect();
        let partitions: Option<i64> = options.optional("numPartitions")?;
        if partitions.is_some_and(|n| n < 1) {
            return Err(Error::Option(
                "option `numPartitions` must be at least 1".to_string(),
            ));
        }
        let timeout: Option<u64> = options.optional("snapshotTimeout")?;
        let pages = given[0].is_some_and(|c| c.trim().eq_ignore_ascii_case("ctid"));
        if timeout.is_some() && !pages {
            return Err(Error::Option(
                "option `snapshotTimeout` is for a read partitioned by pages: set \
                `partitionColumn` to `ctid`, or leave it out"
                    .to_string(),
            ));
        }
        match (given.as_slice(), partitions) {
            ([None, None, None], _) => Ok(None),
            ([Some(_), None, None], Some(partitions)) if pages => {
                Ok(Some(PartitionOptions::Pages {
                    partitions,
                    timeout: timeout.unwrap_or(pages::DEFAULT_TIMEOUT_SECONDS),
                }))
            }
            ([Some(_), _, _], _) if pages => Err(Error::Option(
                "option `partitionColumn` `ctid` partitions a table by its pages: give \
                `numPartitions`, and no `lowerBound` or `upperBound`"
                    .to_string(),
            )),
            ([Some(column), Some(lower), Some(upper)], Some(partitions)) => {
                Ok(Some(PartitionOptions::Range {
                    column: column.to_string(),
                    lower: lower.trim().to_string(),
                    upper: upper.trim().to_string(),
                    partitions,
                }))
            }
            _ => Err(Error::Option(
                "options `partitionColumn`, `lowerBound`, `upperBound` and `numPartitions` go \
                 together: give all four to read in ranges of a column, or none of the first \
                 three"
                    .to_string(),
            )),
        }
    }
}

/// A partitioned read, resolved against the catalog: bounds in the column's unit (its value,
/// days, or microseconds).
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Partitioning {
    Range {
        column: ColumnInfo,
        lower: i64,
        upper: i64,
        partitions: i64,
    },
    /// The table's pages (the relation is a table: `partitioning` checked it).
    Pages {
        table: String,
        partitions: usize,
        timeout: u64,
    },
}

/// What a task reads: a range of the partition column (all rows when unpartitioned), or a
/// range of the table's pages in the read's snapshot.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Partition {
    Range(RangePartition),
    Pages(PageRange),
}

/// What the statement binds besides the filters: a partition's two bounds, and the session's
/// time zone.
const RESERVED_PARAMS: usize = 3;

/// The reader, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    settings: Settings,
    /// The columns of the read's schema.
    columns: Vec<ColumnInfo>,
    /// The columns to return, as indices into `columns`, in Spark's order.
    projection: Vec<usize>,
    partitioning: Option<Partitioning>,
    /// The filters that Spark pushed, and which of them every task applies.
    filters: Vec<Filter>,
    accepted: Vec<bool>,
    limit: Option<u64>,
    utf8: bool,
    /// The session's time zone, when a `timestamp` reads as an instant.
    zone: Option<String>,
}

impl BatchRead for Source {
    type Reader = Reader;

    fn reader(&self, schema: SchemaRef) -> Result<Reader> {
        let catalog = self.catalog()?;
        let columns = schema
            .fields()
            .iter()
            .map(|field| {
                let column = catalog
                    .columns
                    .iter()
                    .find(|c| c.name == *field.name())
                    .ok_or_else(|| {
                        Error::msg(format!(
                            "the query's schema has the column `{}`, which {} does not have; \
                             its columns are: {}",
                            field.name(),
                            self.settings.relation.describe(),
                            names(&catalog.columns)
                        ))
                    })?;
                if column.kind.data_type() != *field.data_type() {
                    return Err(Error::msg(format!(
                        "the query's schema reads the column `{}` as {}, but it is {} in \
                         PostgreSQL, which reads as {}: leave the schema out, or cast the column \
                         in the option `query`",
                        field.name(),
                        field.data_type(),
                        column.kind.sql_type(),
                        column.kind.data_type()
                    )));
                }
                // As Spark asks: the batches must have its schema.
                Ok(ColumnInfo {
                    nullable: field.is_nullable(),
                    ..column.clone()
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let partitioning = match &self.settings.partitioning {
            None => None,
            Some(options) => Some(partitioning(
                options,
                &self.settings.relation,
                &catalog.columns,
            )?),
        };
        let local = columns.iter().any(|c| c.kind.is_local());
        Ok(Reader {
            settings: self.settings.clone(),
            projection: (0..columns.len()).collect(),
            columns,
            partitioning,
            filters: Vec::new(),
            accepted: Vec::new(),
            limit: None,
            utf8: catalog.utf8,
            zone: local.then(local_zone),
        })
    }
}

fn names(columns: &[ColumnInfo]) -> String {
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    names.join(", ")
}

/// The partition column, found in the catalog, with its bounds in its unit; or the pages of
/// the table that `dbtable` names.
fn partitioning(
    options: &PartitionOptions,
    relation: &super::Relation,
    columns: &[ColumnInfo],
) -> Result<Partitioning> {
    let (column_name, lower_text, upper_text, partitions) = match options {
        PartitionOptions::Range {
            column,
            lower,
            upper,
            partitions,
        } => (column, lower, upper, *partitions),
        PartitionOptions::Pages {
            partitions,
            timeout,
        } => {
            let super::Relation::Table(table) = relation else {
                return Err(Error::Option(
                    "option `partitionColumn` `ctid` partitions a table by its pages: name the \
                    table in `dbtable`, not in `query`"
                        .to_string(),
                ));
            };
            return Ok(Partitioning::Pages {
                table: table.clone(),
                partitions: usize::try_from(*partitions).unwrap_or(usize::MAX),
                timeout: *timeout,
            });
        }
    };
    // As SQL resolves an unquoted name: exactly, else in any case.
    let column = columns
        .iter()
        .find(|c| c.name == *column_name)
        .or_else(|| {
            columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(column_name))
        })
        .ok_or_else(|| {
            Error::Option(format!(
                "option `partitionColumn` names `{}`, which is not a column of the read; the \
                 columns are: {}",
                column_name,
                names(columns)
            ))
        })?;
    let bound = |key: &str, text: &str| -> Result<i64> {
        let parsed = match column.kind {
            Kind::Int16 | Kind::Int32 | Kind::Int64 | Kind::Decimal { .. } => text.parse().ok(),
            Kind::Date => parse_date(text).map(i64::from),
            Kind::Timestamp | Kind::LocalTimestamp | Kind::TimestampTz => parse_timestamp(text),
            _ => {
                return Err(Error::Option(format!(
                    "option `partitionColumn` names `{}`, which is {}: partition on a numeric, \
                     date or timestamp column",
                    column.name,
                    column.kind.sql_type()
                )))
            }
        };
        parsed.ok_or_else(|| {
            let expected = match column.kind {
                Kind::Date => "a date such as 2024-01-31",
                Kind::Timestamp | Kind::LocalTimestamp | Kind::TimestampTz => {
                    "a timestamp such as 2024-01-31 12:00:00"
                }
                _ => "an integer",
            };
            Error::Option(format!("option `{key}` must be {expected}, got `{text}`"))
        })
    };
    let lower = bound("lowerBound", lower_text)?;
    let upper = bound("upperBound", upper_text)?;
    for (key, value) in [("lowerBound", lower), ("upperBound", upper)] {
        if !bound_literal(&column.kind, value).is_some_and(|l| sql::is_bindable(&l)) {
            return Err(Error::Option(format!(
                "option `{key}` is outside the range of PostgreSQL's {}",
                column.kind.sql_type()
            )));
        }
    }
    if lower > upper {
        return Err(Error::Option(format!(
            "option `lowerBound` ({}) must not be above `upperBound` ({})",
            lower_text, upper_text
        )));
    }
    Ok(Partitioning::Range {
        column: column.clone(),
        lower,
        upper,
        partitions,
    })
}

impl Reader {
    /// The schema of what a task returns.
    fn output(&self) -> SchemaRef {
        let fields: Vec<_> = self
            .projection
            .iter()
            .map(|&i| {
                let column = &self.columns[i];
                types::field(&column.name, &column.kind, column.nullable)
            })
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// The fields that select the projected columns (see `projection`).
    fn fields(&self) -> Projection {
        let columns = self.projection.iter().map(|&i| {
            let column = &self.columns[i];
            (column.name.as_str(), &column.kind)
        });
        Projection::new(columns, self.zone.as_deref())
    }

    /// The statement of a task that selects `fields`, and the values it binds.
    fn statement(&self, partition: &Partition, fields: &Projection) -> (String, Bindings) {
        let mut query = sql::query();
        query.push_sql(&format!(
            "SELECT {} FROM {}",
            fields.select_list(),
            self.settings.relation.in_from()
        ));
        match (&self.partitioning, partition) {
            (Some(Partitioning::Range { column, .. }), Partition::Range(range)) => {
                // Strides lie between the bounds, which `partitioning` checked.
                let bound = |v| bound_literal(&column.kind, v).unwrap_or(Literal::Int64(Some(v)));
                query.and_range(&column.name, range, bound);
            }
            (_, Partition::Pages(pages)) => {
                if let Some(condition) = pages.condition() {
                    query.and_where(&condition);
                }
            }
            _ => {}
        }
        let exact = |t: &Term| sql::exact(&self.columns, self.utf8, t);
        query.and_filters(&self.filters, &self.accepted, &exact);
        if let Some(limit) = self.limit {
            query.push_sql(&format!(" LIMIT {limit}"));
        }
        let statement = if self.projection.is_empty() {
            // No column, as for Spark's `count(*)`: the server counts the rows rather than
            // sending each of them, empty.
            format!("SELECT count(*) FROM ({}) AS sparkds_rows", query.sql)
        } else if let Partition::Pages(pages) = partition {
            pages.in_snapshot(&format!("COPY ({}) TO STDOUT (FORMAT binary)", query.sql))
        } else {
            format!("COPY ({}) TO STDOUT (FORMAT binary)", query.sql)
        };
        (statement, Bindings::new(&query.params, self.zone.clone()))
    }
}

impl BatchReader for Reader {
    type Partition = Partition;

    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        self.accepted = match self.settings.push_filters {
            false => vec![false; filters.len()],
            true => {
                let exact = |t: &Term| sql::exact(&self.columns, self.utf8, t);
                let budget = MAX_PARAMS - RESERVED_PARAMS;
                accept_at_most(filters, Dialect::PostgreSql, &exact, budget)
            }
        };
        self.filters = filters.to_vec();
        Ok(self.accepted.clone())
    }

    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        if self.settings.push_limit {
            self.limit = Some(limit);
        }
        Ok(self.settings.push_limit)
    }

    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        self.projection = required
            .fields()
            .iter()
            .map(|field| {
                self.columns
                    .iter()
                    .position(|c| c.name == *field.name())
                    .ok_or_else(|| {
                        Error::msg(format!(
                            "cannot prune to the column `{}`: the read's schema has no such \
                             column",
                            field.name()
                        ))
                    })
            })
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// The ranges of Spark's JDBC source (`JDBCRelation.columnPartition`), from the SDK's kit:
    /// the first open below (with the NULLs), the last open above; fewer partitions when the
    /// range has fewer values; one without bounds for one partition or equal bounds. A read of
    /// no column (`count(*)`) is one partition whatever the options: the server counts the
    /// rows in one statement, which scans the table once (and in parallel where the server
    /// chooses to) where a statement per range would each scan it, unless the column has an
    /// index. Pages are planned in a snapshot that the driver exports (`pages`).
    fn partitions(&self) -> Result<Vec<Partition>> {
        let everything = RangePartition {
            lower: None,
            upper: None,
            nulls: true,
        };
        if self.projection.is_empty() {
            return Ok(vec![Partition::Range(everything)]);
        }
        match &self.partitioning {
            Some(Partitioning::Range {
                lower,
                upper,
                partitions,
                ..
            }) => Ok(
                spark_datasource::kit::partitions::plan(*lower, *upper, *partitions)?
                    .into_iter()
                    .map(Partition::Range)
                    .collect(),
            ),
            Some(Partitioning::Pages {
                table,
                partitions,
                timeout,
            }) => {
                let timeout = Duration::from_secs(*timeout);
                let planned = pages::plan(&self.settings.connection, table, *partitions, timeout)?;
                Ok(planned.into_iter().map(Partition::Pages).collect())
            }
            None => Ok(vec![Partition::Range(everything)]),
        }
    }

    // ANCHOR: read
    fn read(&self, partition: Partition, task: &TaskContext) -> Result<Batches> {
        let fields = self.fields();
        let (statement, bindings) = self.statement(&partition, &fields);
        let schema = self.output();
        let columns: Vec<ColumnInfo> = self
            .projection
            .iter()
            .map(|&i| self.columns[i].clone())
            .collect();
        let read = Task {
            settings: self.settings.clone(),
            count: columns.is_empty(),
            statement,
            bindings,
            schema: schema.clone(),
            columns,
            fields,
            pages: match (partition, &self.partitioning) {
                (Partition::Pages(pages), Some(Partitioning::Pages { timeout, .. })) => {
                    Some((pages, *timeout))
                }
                _ => None,
            },
        };
        let batches = Producer::spawn(task, move |out| read.run(out))?;
        Ok(Batches::new(schema, batches))
    }
    // ANCHOR_END: read
}

/// The bound `value` of a partition column of `kind`, as a literal of its type (a `timestamp`
/// compared by its wall clock, as JDBC's bounds are); `None` past the type.
fn bound_literal(kind: &Kind, value: i64) -> Option<Literal> {
    Some(match kind {
        Kind::Date => Literal::Date32(Some(i32::try_from(value).ok()?)),
        Kind::Timestamp | Kind::LocalTimestamp => Literal::TimestampNtz(Some(value)),
        Kind::TimestampTz => Literal::Timestamp(Some(value)),
        _ => Literal::Int64(Some(value)),
    })
}

/// How [`drive`] ended, when not with the work's result.
pub enum Driven<E = Error> {
    /// The work's own error, or `Error::Cancelled` when Spark stopped reading.
    Failed(E),
    /// The connection's error: the server went away, or sent an error outside a query.
    Connection(tokio_postgres::Error),
    /// The server closed the connection before the work was done.
    Closed,
}

/// Runs `work` (which uses the client of `connection`) on the task's thread, polling the
/// connection and the work together, so that a wake-up handles every message that arrived;
/// and stops when Spark stops reading (`out`), even while the server sends nothing.
pub async fn drive<T, E: From<Error>, S, U>(
    connection: &mut tokio_postgres::Connection<S, U>,
    work: impl Future<Output = Result<T, E>>,
    out: &BatchSender,
) -> std::result::Result<T, Driven<E>>
where
    S: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let mut work = pin!(work);
    let mut closed = false;
    // A server that sends nothing for long (a slow query) wakes nobody: the timer does, to see
    // whether Spark stopped reading.
    let mut check = tokio::time::interval(CANCEL_CHECK);
    poll_fn(|cx| {
        while check.poll_tick(cx).is_ready() {
            if out.is_cancelled() {
                return Poll::Ready(Err(Driven::Failed(Error::Cancelled.into())));
            }
        }
        // The connection first: it reads the socket and hands the messages to the work; its
        // own error (a server that goes away) is the task's.
        while !closed {
            match connection.poll_message(cx) {
                // Notices and notifications: the work waits for neither.
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(Driven::Connection(e))),
                Poll::Ready(None) => closed = true,
                Poll::Pending => break,
            }
        }
        match work.as_mut().poll(cx) {
            Poll::Pending if closed => Poll::Ready(Err(Driven::Closed)),
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => Poll::Ready(result.map_err(Driven::Failed)),
        }
    })
    .await
}

/// What the thread of a task needs.
struct Task {
    settings: Settings,
    /// Whether the read selects no column: its statement counts the rows.
    count: bool,
    statement: String,
    bindings: Bindings,
    schema: SchemaRef,
    columns: Vec<ColumnInfo>,
    fields: Projection,
    /// The task's pages, and the read's `snapshotTimeout`, for a read partitioned by pages.
    pages: Option<(PageRange, u64)>,
}

impl Task {
    /// Reads on a runtime of this thread. The client opens the connection, binds the values
    /// and, for a read of no column, counts the rows, with the connection driven beside the
    /// work; then the COPY reads straight off the connection's stream (`copy_out`).
    fn run(self, out: &BatchSender) -> Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("cannot start the runtime of a read", e))?;
        runtime.block_on(async {
            let detach = Detach::default();
            let (client, mut connection) = self
                .settings
                .connection
                .try_connect_detachable("sparkds-read", &detach)
                .await
                .map_err(|failed| failed.error)?;
            let prepare = async {
                self.bind(&client).await?;
                if self.count {
                    self.count(&client, out).await?;
                }
                Ok::<_, Error>(())
            };
            drive(&mut connection, prepare, out)
                .await
                .map_err(|failure| match failure {
                    Driven::Failed(error) => error,
                    Driven::Connection(e) => self.failed(&describe(&e)),
                    Driven::Closed => self.failed("the server closed the connection"),
                })?;
            if self.count {
                return Ok(());
            }
            // The client waits for nothing now (see `bind`): the stream is the COPY's.
            drop((client, connection));
            let stream = detach
                .take()
                .ok_or_else(|| self.failed("the connection's stream cannot be taken"))?;
            self.copy(stream, out).await
        })
    }

    /// Binds the values of the filters and the time zone, if any, and waits until the server
    /// is ready for the COPY: an empty query's answer comes after every message of the
    /// bindings, so the client has read them all and the server sends nothing more.
    async fn bind(&self, client: &tokio_postgres::Client) -> Result<()> {
        if self.bindings.is_empty() {
            return Ok(());
        }
        client
            .query(&self.bindings.statement, &self.bindings.values())
            .await
            .map_err(|e| {
                let zone = match &self.bindings.zone {
                    Some(zone) => format!(
                        " and the time zone `{zone}` (this machine's: TZ, /etc/timezone \
                         or /etc/localtime), in which a timestamp reads as an instant"
                    ),
                    None => String::new(),
                };
                Error::msg(format!(
                    "cannot bind the values of the filters{zone}: {}",
                    describe(&e)
                ))
            })?;
        client
            .batch_execute("")
            .await
            .map_err(|e| self.failed(&describe(&e)))
    }

    /// Runs the COPY on `stream` and decodes its rows into batches of `fetchsize` rows or
    /// `batchBytes` bytes.
    async fn copy(&self, stream: Box<dyn Duplex>, out: &BatchSender) -> Result<()> {
        let relation = self.settings.relation.describe();
        let mut copy = CopyOut::start(stream, &self.statement, || out.is_cancelled(), CANCEL_CHECK)
            .await
            .map_err(|e| self.copy_failed(e))?;
        // ANCHOR: budget
        let mut decoder = CopyDecoder::new(self.settings.batch_size);
        let mut decoders = self.fields.decoders(self.columns.iter().map(|c| &c.kind));
        let send = |decoders: &mut [Decoder], rows: usize| {
            let arrays = self.fields.finish(decoders);
            let batch = RecordBatch::try_new_with_options(
                self.schema.clone(),
                arrays,
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )?;
            // An error once Spark stopped reading: the read returns it, and nobody reads it.
            out.send(batch)
        };
        let mut started = false;
        loop {
            let chunk = match copy.next().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                // The statement's own error, before any row: it could not run.
                Err(CopyError::Server { text, .. }) if !started => {
                    let gone = self
                        .pages
                        .as_ref()
                        .and_then(|(pages, timeout)| pages.gone(&text, &relation, *timeout));
                    return Err(gone
                        .unwrap_or_else(|| Error::msg(format!("cannot read {relation}: {text}"))));
                }
                Err(e) => return Err(self.copy_failed(e)),
            };
            started = true;
            let mut input: &[u8] = chunk;
            loop {
                match decoder.decode(input, &mut decoders) {
                    Ok(true) => send(&mut decoders, decoder.take_batch())?,
                    Ok(false) => break,
                    Err(error) => return Err(self.read_error(error).await),
                }
                input = &[];
            }
        }
        copy.close().await;
        if let Err(error) = decoder.finish() {
            return Err(self.read_error(error).await);
        }
        let rows = decoder.take_batch();
        if rows > 0 {
            send(&mut decoders, rows)?;
        }
        Ok(())
        // ANCHOR_END: budget
    }

    /// The rows of a read of no column, counted by the server, in batches of `fetchsize` rows.
    async fn count(&self, client: &tokio_postgres::Client, out: &BatchSender) -> Result<()> {
        let relation = self.settings.relation.describe();
        let rows: i64 = client
            .query_one(&self.statement, &[])
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|e| Error::msg(format!("cannot read {relation}: {}", describe(&e))))?;
        let mut left = usize::try_from(rows).unwrap_or(0);
        while left > 0 {
            let rows = left.min(self.settings.batch_size.rows);
            let batch = RecordBatch::try_new_with_options(
                self.schema.clone(),
                Vec::new(),
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )?;
            out.send(batch)?;
            left -= rows;
        }
        Ok(())
    }

    /// The error of a value that does not convert names its column, why, and the key of its
    /// row where the relation is a table with a primary key.
    async fn read_error(&self, error: ReadError) -> Error {
        let relation = self.settings.relation.describe();
        match error {
            ReadError::Value { column, why, value } => {
                let column = &self.columns[self.fields.column(column)];
                let key = match self.row_key(column, &value).await {
                    Some(key) => format!(", in the row {key}"),
                    None => String::new(),
                };
                Error::msg(format!(
                    "column `{}` of {relation} holds {why}{key}",
                    column.name
                ))
            }
            ReadError::Format(why) => Error::msg(format!("reading {relation} failed: {why}")),
        }
    }

    /// `(k1, k2) = (v1, v2)` of the rows (at most three) of the read's table where `column`
    /// holds `value` (its binary form, as the read selects it), on a connection of its own:
    /// the read's is busy with its COPY. `None` for a query, a table without a primary key, or
    /// when the server cannot say.
    async fn row_key(&self, column: &ColumnInfo, value: &[u8]) -> Option<String> {
        let super::Relation::Table(table) = &self.settings.relation else {
            return None;
        };
        let (client, connection) = self
            .settings
            .connection
            .connect_async("sparkds-read-key")
            .await
            .ok()?;
        let driver = tokio::spawn(async move {
            let _ = connection.await;
        });
        let key = row_key(&client, table, column, value, self.bindings.zone.as_deref()).await;
        driver.abort();
        key
    }

    /// The error of a read that the client or the server stopped: the server's message.
    fn failed(&self, why: &str) -> Error {
        Error::msg(format!(
            "reading {} failed: {why}",
            self.settings.relation.describe()
        ))
    }

    /// [`Task::failed`] for the COPY's own errors.
    fn copy_failed(&self, error: CopyError) -> Error {
        match error {
            CopyError::Cancelled => Error::Cancelled,
            CopyError::Server { text, .. } => self.failed(&text),
            error => self.failed(&error.to_string()),
        }
    }
}

/// See [`Task::row_key`].
async fn row_key(
    client: &tokio_postgres::Client,
    table: &str,
    column: &ColumnInfo,
    value: &[u8],
    zone: Option<&str>,
) -> Option<String> {
    if let Some(zone) = zone {
        client
            .execute("SELECT set_config('TimeZone', $1, false)", &[&zone])
            .await
            .ok()?;
    }
    let keys: Vec<String> = client
        .query(
            "SELECT quote_ident(a.attname) FROM pg_index i JOIN pg_attribute a \
             ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey::int2[]) \
             WHERE i.indrelid = to_regclass($1) AND i.indisprimary \
             ORDER BY array_position(i.indkey::int2[], a.attnum)",
            &[&table],
        )
        .await
        .ok()?
        .iter()
        .map(|row| row.get(0))
        .collect();
    if keys.is_empty() {
        return None;
    }
    let name = quote(&column.name);
    let selected = column.kind.expression(&name).unwrap_or(name);
    let texts: Vec<String> = keys.iter().map(|k| format!("{k}::text")).collect();
    let sql = format!(
        "SELECT {} FROM {table} WHERE {selected} = $1 LIMIT 3",
        texts.join(", ")
    );
    let rows = client.query(&sql, &[&RawValue(value)]).await.ok()?;
    let shown = |row: &tokio_postgres::Row| -> Vec<String> {
        (0..keys.len())
            .map(|i| {
                row.get::<_, Option<String>>(i)
                    .unwrap_or_else(|| "NULL".into())
            })
            .collect()
    };
    let rows: Vec<String> = rows
        .iter()
        .map(|row| match keys.len() {
            1 => format!("{} = {}", keys[0], shown(row)[0]),
            _ => format!("({}) = ({})", keys.join(", "), shown(row).join(", ")),
        })
        .collect();
    (!rows.is_empty()).then(|| rows.join(" and the row "))
}

/// A value in its binary form, bound as the type the SQL compares it with.
#[derive(Debug)]
struct RawValue<'a>(&'a [u8]);

impl tokio_postgres::types::ToSql for RawValue<'_> {
    fn to_sql(
        &self,
        _ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        out.extend_from_slice(self.0);
        Ok(tokio_postgres::types::IsNull::No)
    }

    // The value is the column's own, as the COPY sent it.
    fn accepts(_ty: &tokio_postgres::types::Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}
