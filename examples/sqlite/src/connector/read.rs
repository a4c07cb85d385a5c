//! Batch reads: one `SELECT` per partition, with the columns, the filters that SQLite evaluates
//! as Spark does, the partition's range of `rowid` and the limit, run on a thread of its own.

use arrow_schema::{DataType, Schema, SchemaRef};
use rusqlite::types::{Value, ValueRef};
use serde::{Deserialize, Serialize};
use spark_datasource::filters::{Filter, Literal};
use spark_datasource::kit::partitions::{self, RangePartition};
use spark_datasource::kit::rows::{RowBatcher, Scalar};
use spark_datasource::kit::schema::Scan;
use spark_datasource::kit::sql::{accept, Dialect, Op, Query, Term};
use spark_datasource::{
    BatchRead, BatchReader, BatchSender, Batches, DataSource, Error, Producer, Result, TaskContext,
};

use super::Source;

/// The most rows in a batch.
const BATCH_ROWS: usize = 65536;

/// The reader: the source, what Spark reads of it, and the filters it pushed.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reader {
    source: Source,
    scan: Scan,
    filters: Vec<Filter>,
    accepted: Vec<bool>,
}

impl BatchRead for Source {
    type Reader = Reader;

    fn reader(&self, schema: SchemaRef) -> Result<Reader> {
        Ok(Reader {
            scan: Scan::new(self.schema()?, schema)?,
            source: self.clone(),
            filters: Vec::new(),
            accepted: Vec::new(),
        })
    }
}

impl BatchReader for Reader {
    type Partition = RangePartition;

    fn push_limit(&mut self, limit: u64) -> Result<bool> {
        self.scan.limit = Some(limit);
        Ok(true)
    }

    fn push_filters(&mut self, filters: &[Filter]) -> Result<Vec<bool>> {
        let schema = self.scan.source.clone();
        self.accepted = accept(filters, Dialect::Sqlite, &|t| exact(&schema, t));
        self.filters = filters.to_vec();
        Ok(self.accepted.clone())
    }

    fn prune_columns(&mut self, required: SchemaRef) -> Result<()> {
        self.scan.prune(required)
    }

    fn partitions(&self) -> Result<Vec<RangePartition>> {
        let everything = vec![RangePartition::all()];
        if self.source.table.is_none() || self.source.partitions == 1 {
            return Ok(everything);
        }
        let sql = format!("SELECT min(rowid), max(rowid) FROM {}", self.source.from);
        let connection = self.source.open(false)?;
        let bounds = connection.query_row(&sql, [], |row| {
            Ok((row.get::<_, Option<i64>>(0)?, row.get::<_, Option<i64>>(1)?))
        });
        match bounds.map_err(|e| self.source.failed(&sql, e))? {
            (Some(lower), Some(upper)) => partitions::plan(lower, upper, self.source.partitions),
            _ => Ok(everything),
        }
    }

    fn read(&self, partition: RangePartition, task: &TaskContext) -> Result<Batches> {
        let (source, schema) = (self.source.clone(), self.scan.read.clone());
        let query = self.query(&partition);
        let produced = schema.clone();
        let batches = Producer::spawn(task, move |out| run(&source, &query, &produced, out))?;
        Ok(Batches::new(schema, batches))
    }
}

impl Reader {
    // ANCHOR: query
    /// The statement of one partition.
    fn query(&self, partition: &RangePartition) -> Query {
        let mut query = Query::select(Dialect::Sqlite, &self.scan.names(), &self.source.from);
        let schema = self.scan.source.clone();
        query.and_filters(&self.filters, &self.accepted, &|t| exact(&schema, t));
        query.and_range("rowid", partition, |v| Literal::Int64(Some(v)));
        query.limit(self.scan.limit);
        query
    }
    // ANCHOR_END: query
}

// ANCHOR: exact
/// Whether SQLite evaluates a comparison of this column with this literal as Spark does: with
/// a literal of the column's type (text compared byte by byte, as the dialect writes it), and
/// `IS NULL` on any column. The dialect already refuses NaN, which SQLite stores as NULL.
fn exact(schema: &Schema, term: &Term) -> bool {
    let Ok(field) = schema.field_with_name(term.column) else {
        return false;
    };
    let pattern = matches!(term.op, Op::StartsWith | Op::EndsWith | Op::Contains);
    match (field.data_type(), term.literal) {
        (_, None) => true,
        (DataType::Int64, Some(literal)) => literal.as_i64().is_some() || literal.is_null(),
        (DataType::Float64, Some(Literal::Float64(_))) => true,
        (DataType::Utf8, Some(Literal::Utf8(_))) => true,
        (DataType::Binary, Some(Literal::Binary(_))) => !pattern,
        _ => false,
    }
}
// ANCHOR_END: exact

/// A value as SQLite binds it.
pub(super) fn bind(value: Scalar<'_>) -> Value {
    match value {
        Scalar::Null => Value::Null,
        Scalar::Int(v) => Value::Integer(v),
        Scalar::Real(v) => Value::Real(v),
        Scalar::Text(v) => Value::Text(v.to_string()),
        Scalar::Bytes(v) => Value::Blob(v.to_vec()),
    }
}

/// Runs `query` and sends its rows in batches of `schema`.
fn run(source: &Source, query: &Query, schema: &SchemaRef, out: &BatchSender) -> Result<()> {
    let connection = source.open(false)?;
    let failed = |e| source.failed(&query.sql, e);
    let mut statement = connection.prepare(&query.sql).map_err(failed)?;
    let params = query
        .params
        .iter()
        .map(|l| Scalar::literal(l).map_or(Value::Null, bind));
    let mut rows = statement
        .query(rusqlite::params_from_iter(params))
        .map_err(failed)?;
    let mut batcher = RowBatcher::new(schema.clone(), BATCH_ROWS)?;
    while let Some(row) = rows.next().map_err(failed)? {
        for i in 0..schema.fields().len() {
            let value = match row.get_ref(i).map_err(failed)? {
                ValueRef::Null => Scalar::Null,
                ValueRef::Integer(v) => Scalar::Int(v),
                ValueRef::Real(v) => Scalar::Real(v),
                ValueRef::Text(v) => Scalar::Text(
                    std::str::from_utf8(v)
                        .map_err(|_| Error::msg("a row holds text that is not UTF-8"))?,
                ),
                ValueRef::Blob(v) => Scalar::Bytes(v),
            };
            batcher.push(i, value)?;
        }
        if let Some(batch) = batcher.end_row()? {
            out.send(batch)?;
        }
    }
    if let Some(batch) = batcher.finish()? {
        out.send(batch)?;
    }
    Ok(())
}
