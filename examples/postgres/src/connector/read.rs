//! Batch reads: partitions planned as Spark's JDBC source plans them, each read by one
//! `COPY (SELECT <columns> FROM <relation> WHERE <partition and filters> LIMIT <n>) TO STDOUT
//! (FORMAT binary)` decoded into Arrow batches.
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
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use spark_datasource::filters::{decode, encode, Filter};
use spark_datasource::kit::partitions::RangePartition;
use spark_datasource::{
    BatchRead, BatchReader, BatchSender, Batches, Error, Options, Producer, Result, TaskContext,
};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_postgres::types::ToSql;

use super::binary::{CopyDecoder, Decoder, ReadError};
use super::connect::describe;
use super::sql::{bind_statement, quote, ColumnInfo, Condition, Param, MAX_PARAMS};
use super::time::{parse_date, parse_timestamp};
use super::types::{self, Kind};
use super::{Settings, Source};

/// How often a thread that waits on the server checks whether Spark still reads.
const CANCEL_CHECK: Duration = Duration::from_millis(100);

/// The options of a partitioned read, as the query gave them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartitionOptions {
    column: String,
    lower: String,
    upper: String,
    partitions: i64,
}

impl PartitionOptions {
    /// `partitionColumn`, `lowerBound`, `upperBound` and `numPartitions`: all or none of the
    /// first three, as in Spark's JDBC source (`numPartitions` alone only caps writes there).
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
        match (given.as_slice(), partitions) {
            ([None, None, None], _) => Ok(None),
            ([Some(column), Some(lower), Some(upper)], Some(partitions)) => {
                Ok(Some(PartitionOptions {
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
struct Partitioning {
    column: ColumnInfo,
    lower: i64,
    upper: i64,
    partitions: i64,
}

/// What a task reads: a range of the partition column (open where `None`), the first one
/// with its NULLs; or everything.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Partition {
    range: Option<(Option<i64>, Option<i64>)>,
}

/// The reader, sent to the executors as bytes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    settings: Settings,
    /// The columns of the read's schema.
    columns: Vec<ColumnInfo>,
    /// The columns to return, as indices into `columns`, in Spark's order.
    projection: Vec<usize>,
    partitioning: Option<Partitioning>,
    /// The filters accepted by `push_filters`, applied by every task, in the encoding of
    /// `spark_datasource_filters.h`: JSON, which carries the reader, has no NaN or infinity,
    /// and would turn such a literal into a NULL.
    filters: Vec<u8>,
    limit: Option<u64>,
    utf8: bool,
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
                Ok(column.clone())
            })
            .collect::<Result<Vec<_>>>()?;
        let partitioning = match &self.settings.partitioning {
            None => None,
            Some(options) => Some(partitioning(options, &catalog.columns)?),
        };
        Ok(Reader {
            settings: self.settings.clone(),
            projection: (0..columns.len()).collect(),
            columns,
            partitioning,
            filters: encode(&[])?,
            limit: None,
            utf8: catalog.utf8,
        })
    }
}

fn names(columns: &[ColumnInfo]) -> String {
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    names.join(", ")
}

/// The partition column, found in the catalog, with its bounds in its unit.
fn partitioning(options: &PartitionOptions, columns: &[ColumnInfo]) -> Result<Partitioning> {
    // As SQL resolves an unquoted name: exactly, else in any case.
    let column = columns
        .iter()
        .find(|c| c.name == options.column)
        .or_else(|| {
            columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(&options.column))
        })
        .ok_or_else(|| {
            Error::Option(format!(
                "option `partitionColumn` names `{}`, which is not a column of the read; the \
                 columns are: {}",
                options.column,
                names(columns)
            ))
        })?;
    let bound = |key: &str, text: &str| -> Result<i64> {
        let parsed = match column.kind {
            Kind::Int16 | Kind::Int32 | Kind::Int64 | Kind::Decimal { .. } => text.parse().ok(),
            Kind::Date => parse_date(text).map(i64::from),
            Kind::Timestamp | Kind::TimestampTz => parse_timestamp(text),
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
                Kind::Timestamp | Kind::TimestampTz => "a timestamp such as 2024-01-31 12:00:00",
                _ => "an integer",
            };
            Error::Option(format!("option `{key}` must be {expected}, got `{text}`"))
        })
    };
    let lower = bound("lowerBound", &options.lower)?;
    let upper = bound("upperBound", &options.upper)?;
    for (key, value) in [("lowerBound", lower), ("upperBound", upper)] {
        if !bound_param(&column.kind, value).is_some_and(|p| p.is_bindable()) {
            return Err(Error::Option(format!(
                "option `{key}` is outside the range of PostgreSQL's {}",
                column.kind.sql_type()
            )));
        }
    }
    if lower > upper {
        return Err(Error::Option(format!(
            "option `lowerBound` ({}) must not be above `upperBound` ({})",
            options.lower, options.upper
        )));
    }
    Ok(Partitioning {
        column: column.clone(),
        lower,
        upper,
        partitions: options.partitions,
    })
}

impl Reader {
    /// The schema of what a task returns.
    fn output(&self) -> SchemaRef {
        let fields: Vec<_> = self
            .projection
            .iter()
            .map(|&i| types::field(&self.columns[i].name, &self.columns[i].kind))
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// The statement of a task, and the values it binds.
    fn statement(&self, partition: &Partition) -> Result<(String, Vec<Param>)> {
        let mut condition = Condition::new(&self.columns, self.utf8);
        let mut clauses = Vec::new();
        if let (Some(p), Some((lower, upper))) = (&self.partitioning, partition.range) {
            let name = quote(&p.column.name);
            let mut bound = |value: i64| {
                // Strides lie between the bounds, which `partitioning` checked.
                bound_param(&p.column.kind, value)
                    .map(|param| condition.bind(param))
                    .ok_or_else(|| Error::msg(format!("a partition bound {value} out of range")))
            };
            clauses.push(match (lower, upper) {
                (None, Some(upper)) => format!("({name} < {} OR {name} IS NULL)", bound(upper)?),
                (Some(lower), None) => format!("{name} >= {}", bound(lower)?),
                (Some(lower), Some(upper)) => {
                    format!("{name} >= {} AND {name} < {}", bound(lower)?, bound(upper)?)
                }
                (None, None) => "TRUE".to_string(),
            });
        }
        for filter in &decode(&self.filters)? {
            clauses.push(condition.filter(filter).ok_or_else(|| {
                Error::msg(format!("cannot apply the accepted filter {filter:?}"))
            })?);
        }
        let select: Vec<String> = self
            .projection
            .iter()
            .map(|&i| quote(&self.columns[i].name))
            .collect();
        let mut query = format!(
            "SELECT {} FROM {}",
            select.join(", "),
            self.settings.relation.in_from()
        );
        if !clauses.is_empty() {
            query.push_str(&format!(" WHERE {}", clauses.join(" AND ")));
        }
        if let Some(limit) = self.limit {
            query.push_str(&format!(" LIMIT {limit}"));
        }
        Ok((
            format!("COPY ({query}) TO STDOUT (FORMAT binary)"),
            condition.params,
        ))
    }
}

impl BatchReader for Reader {
    type Partition = Partition;

    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        if !self.settings.push_filters {
            return Ok(vec![false; filters.len()]);
        }
        let mut accepted = decode(&self.filters)?;
        // What the accepted filters bind, and the two bounds of a partition.
        let mut bound = 2;
        for filter in &accepted {
            let mut condition = Condition::new(&self.columns, self.utf8);
            condition.filter(filter);
            bound += condition.params.len();
        }
        let mut answers = Vec::with_capacity(filters.len());
        for filter in filters {
            let mut condition = Condition::new(&self.columns, self.utf8);
            let answer =
                condition.filter(filter).is_some() && bound + condition.params.len() <= MAX_PARAMS;
            if answer {
                bound += condition.params.len();
                accepted.push(filter.clone());
            }
            answers.push(answer);
        }
        self.filters = encode(&accepted)?;
        Ok(answers)
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

    fn partitions(&self) -> Result<Vec<Partition>> {
        let Some(p) = &self.partitioning else {
            return Ok(vec![Partition { range: None }]);
        };
        Ok(ranges(p.lower, p.upper, p.partitions)?
            .into_iter()
            .map(|range| Partition { range })
            .collect())
    }

    // ANCHOR: read
    fn read(&self, partition: Partition, task: &TaskContext) -> Result<Batches> {
        let (statement, params) = self.statement(&partition)?;
        let schema = self.output();
        let columns: Vec<ColumnInfo> = self
            .projection
            .iter()
            .map(|&i| self.columns[i].clone())
            .collect();
        let read = Task {
            settings: self.settings.clone(),
            statement,
            params,
            schema: schema.clone(),
            columns,
        };
        let batches = Producer::spawn(task, move |out| read.run(out))?;
        Ok(Batches::new(schema, batches))
    }
    // ANCHOR_END: read
}

/// The bound `value` of a partition column of `kind`, as a parameter; `None` past its type.
fn bound_param(kind: &Kind, value: i64) -> Option<Param> {
    Some(match kind {
        Kind::Date => Param::Date(i32::try_from(value).ok()?),
        Kind::Timestamp => Param::Timestamp(value),
        Kind::TimestampTz => Param::TimestampTz(value),
        _ => Param::Int64(value),
    })
}

/// A partition's range of the partition column, open where `None`; `None` for everything.
type Bounds = Option<(Option<i64>, Option<i64>)>;

/// The ranges of Spark's JDBC source (`JDBCRelation.columnPartition`), from the SDK's kit: the
/// first open below (with the NULLs), the last open above; fewer partitions when the range has
/// fewer values; one without bounds (`None`) for one partition or equal bounds.
fn ranges(lower: i64, upper: i64, partitions: i64) -> Result<Vec<Bounds>> {
    let planned = spark_datasource::kit::partitions::plan(lower, upper, partitions)?;
    let range =
        |p: RangePartition| (p.lower.is_some() || p.upper.is_some()).then_some((p.lower, p.upper));
    Ok(planned.into_iter().map(range).collect())
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
    statement: String,
    params: Vec<Param>,
    schema: SchemaRef,
    columns: Vec<ColumnInfo>,
}

impl Task {
    /// Reads on a runtime of this thread that drives the connection and the COPY together:
    /// a wake-up decodes every message that arrived, rather than entering a runtime per row.
    fn run(self, out: &BatchSender) -> Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("cannot start the runtime of a read", e))?;
        runtime.block_on(async {
            let (client, mut connection) = self
                .settings
                .connection
                .connect_async("sparkds-read")
                .await?;
            drive(&mut connection, self.copy(&client, out), out)
                .await
                .map_err(|failure| match failure {
                    Driven::Failed(error) => error,
                    Driven::Connection(e) => self.failed(&e),
                    Driven::Closed => Error::msg(format!(
                        "reading {} failed: the server closed the connection",
                        self.settings.relation.describe()
                    )),
                })
        })
    }

    /// Binds the values, runs the COPY and decodes its rows into batches of `fetchsize` rows
    /// or `batchBytes` bytes.
    async fn copy(&self, client: &tokio_postgres::Client, out: &BatchSender) -> Result<()> {
        let relation = self.settings.relation.describe();
        if !self.params.is_empty() {
            let params: Vec<&(dyn ToSql + Sync)> = self
                .params
                .iter()
                .map(|p| p as &(dyn ToSql + Sync))
                .collect();
            client
                .query(&bind_statement(&self.params), &params)
                .await
                .map_err(|e| {
                    Error::msg(format!(
                        "cannot bind the values of the filters: {}",
                        describe(&e)
                    ))
                })?;
        }
        let stream = client
            .copy_out(&self.statement)
            .await
            .map_err(|e| Error::msg(format!("cannot read {relation}: {}", describe(&e))))?;
        let mut stream = pin!(stream);
        let failed = |error: ReadError| match error {
            ReadError::Value { column, why } => Error::msg(format!(
                "column `{}` of {relation} holds {why}",
                self.columns[column].name
            )),
            ReadError::Format(why) => Error::msg(format!("reading {relation} failed: {why}")),
        };
        // ANCHOR: budget
        let mut decoder = CopyDecoder::new(self.settings.batch_size);
        let mut decoders: Vec<Decoder> =
            self.columns.iter().map(|c| Decoder::new(&c.kind)).collect();
        let send = |decoders: &mut [Decoder], rows: usize| {
            let arrays = decoders.iter_mut().map(Decoder::finish).collect();
            let batch = RecordBatch::try_new_with_options(
                self.schema.clone(),
                arrays,
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )?;
            // An error once Spark stopped reading: the read returns it, and nobody reads it.
            out.send(batch)
        };
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.failed(&e))?;
            let mut input: &[u8] = &chunk;
            while decoder.decode(input, &mut decoders).map_err(failed)? {
                send(&mut decoders, decoder.take_batch())?;
                input = &[];
            }
        }
        decoder.finish().map_err(failed)?;
        let rows = decoder.take_batch();
        if rows > 0 {
            send(&mut decoders, rows)?;
        }
        Ok(())
        // ANCHOR_END: budget
    }

    /// The error of a read that the client or the server stopped: the server's message.
    fn failed(&self, error: &tokio_postgres::Error) -> Error {
        Error::msg(format!(
            "reading {} failed: {}",
            self.settings.relation.describe(),
            describe(error)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_those_of_sparks_jdbc_source() -> Result<()> {
        assert_eq!(ranges(0, 100, 1)?, vec![None]);
        assert_eq!(
            ranges(0, 100, 4)?,
            vec![
                Some((None, Some(25))),
                Some((Some(25), Some(50))),
                Some((Some(50), Some(75))),
                Some((Some(75), None)),
            ]
        );
        // Spark 4.3's boundaries, which shift the start by half of what the stride's rounding
        // loses: strides of `(upper - lower) / n` from `lower` split at 142, 284...
        let spark = [145, 287, 429, 571, 713, 855];
        let planned = ranges(0, 1000, 7)?;
        let uppers: Vec<Option<i64>> = planned.iter().map(|r| r.and_then(|(_, u)| u)).collect();
        assert_eq!(uppers[..6], spark.map(Some));
        // Fewer values than partitions: one partition per value.
        assert_eq!(ranges(0, 2, 10)?.len(), 2);
        assert_eq!(ranges(5, 5, 3)?, vec![None]);
        Ok(())
    }
}
