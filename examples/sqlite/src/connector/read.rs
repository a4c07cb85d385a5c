//! Batch reads: one `SELECT` per partition, with the columns, the filters that SQLite evaluates
//! as Spark does, the partition's range of `rowid` and the limit, run on a thread of its own.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Schema, SchemaRef};
use rusqlite::types::{Value, ValueRef};
use serde::{Deserialize, Serialize};
use spark_datasource::filters::{Filter, Literal};
use spark_datasource::kit::partitions::{self, RangePartition};
use spark_datasource::kit::schema::{type_name, Scan};
use spark_datasource::kit::sql::{accept, Dialect, Op, Query, Term};
use spark_datasource::{
    BatchRead, BatchReader, BatchSender, Batches, DataSource, Error, Producer, Result,
    TaskContext,
};

use super::{Relation, Source};

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
        let everything = vec![RangePartition {
            lower: None,
            upper: None,
            nulls: true,
        }];
        let Relation::Table(_) = self.source.relation else {
            return Ok(everything);
        };
        if self.source.partitions == 1 {
            return Ok(everything);
        }
        let sql = format!(
            "SELECT min(rowid), max(rowid) FROM {}",
            self.source.relation.from()
        );
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
    /// The statement of one partition.
    fn query(&self, partition: &RangePartition) -> Query {
        let d = Dialect::Sqlite;
        let columns: Vec<String> = self.scan.names().iter().map(|c| d.ident(c)).collect();
        let mut query = Query::new(d);
        // `count(*)` reads no column: one constant per row keeps the count.
        let list = match columns.is_empty() {
            true => "1".to_string(),
            false => columns.join(", "),
        };
        query.push_sql(&format!("SELECT {list} FROM {}", self.source.relation.from()));
        let schema = self.scan.source.clone();
        query.and_filters(&self.filters, &self.accepted, &|t| exact(&schema, t));
        query.and_range("rowid", partition, |v| Literal::Int64(Some(v)));
        if let Some(limit) = self.scan.limit {
            let limit = query.bind(Literal::Int64(Some(i64::try_from(limit).unwrap_or(i64::MAX))));
            query.push_sql(&format!(" LIMIT {limit}"));
        }
        query
    }
}

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

/// A literal as SQLite binds it.
fn value(literal: &Literal) -> Value {
    match literal {
        Literal::Float64(Some(v)) => Value::Real(*v),
        Literal::Float32(Some(v)) => Value::Real(f64::from(*v)),
        Literal::Utf8(Some(v)) => Value::Text(v.clone()),
        Literal::Binary(Some(v)) => Value::Blob(v.clone()),
        Literal::Boolean(Some(v)) => Value::Integer(i64::from(*v)),
        other => other.as_i64().map_or(Value::Null, Value::Integer),
    }
}

/// Runs `query` and sends its rows in batches of `schema`.
fn run(source: &Source, query: &Query, schema: &SchemaRef, out: &BatchSender) -> Result<()> {
    let connection = source.open(false)?;
    let mut statement = connection
        .prepare(&query.sql)
        .map_err(|e| source.failed(&query.sql, e))?;
    let params = rusqlite::params_from_iter(query.params.iter().map(value));
    let mut rows = statement
        .query(params)
        .map_err(|e| source.failed(&query.sql, e))?;
    let mut columns = Columns::new(schema);
    while let Some(row) = rows.next().map_err(|e| source.failed(&query.sql, e))? {
        for (i, column) in columns.builders.iter_mut().enumerate() {
            let value = row.get_ref(i).map_err(|e| source.failed(&query.sql, e))?;
            column.append(value).map_err(|class| {
                let field = schema.field(i);
                Error::msg(format!(
                    "column `{}` is {} but a row holds {class}: read it with the option `query` \
                     and CAST it",
                    field.name(),
                    type_name(field.data_type())
                ))
            })?;
        }
        columns.rows += 1;
        if columns.rows == BATCH_ROWS {
            out.send(columns.finish(schema)?)?;
        }
    }
    if columns.rows > 0 {
        out.send(columns.finish(schema)?)?;
    }
    Ok(())
}

/// The builders of a batch, and its row count (also without columns).
struct Columns {
    builders: Vec<Builder>,
    rows: usize,
}

impl Columns {
    fn new(schema: &Schema) -> Columns {
        let builders = schema.fields().iter().map(|f| Builder::new(f.data_type()));
        Columns {
            builders: builders.collect(),
            rows: 0,
        }
    }

    fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch> {
        let arrays: Vec<ArrayRef> = self.builders.iter_mut().map(Builder::finish).collect();
        let options = RecordBatchOptions::new().with_row_count(Some(self.rows));
        self.rows = 0;
        Ok(RecordBatch::try_new_with_options(schema.clone(), arrays, &options)?)
    }
}

/// A column being built, of one of the four types of the schema.
enum Builder {
    Int(Int64Builder),
    Real(Float64Builder),
    Text(StringBuilder),
    Blob(BinaryBuilder),
}

impl Builder {
    fn new(data_type: &DataType) -> Builder {
        match data_type {
            DataType::Int64 => Builder::Int(Int64Builder::new()),
            DataType::Float64 => Builder::Real(Float64Builder::new()),
            DataType::Utf8 => Builder::Text(StringBuilder::new()),
            _ => Builder::Blob(BinaryBuilder::new()),
        }
    }

    /// Appends a value; the storage class, when the column's type cannot hold it.
    fn append(&mut self, value: ValueRef<'_>) -> std::result::Result<(), &'static str> {
        match (self, value) {
            (Builder::Int(b), ValueRef::Null) => b.append_null(),
            (Builder::Real(b), ValueRef::Null) => b.append_null(),
            (Builder::Text(b), ValueRef::Null) => b.append_null(),
            (Builder::Blob(b), ValueRef::Null) => b.append_null(),
            (Builder::Int(b), ValueRef::Integer(v)) => b.append_value(v),
            (Builder::Real(b), ValueRef::Real(v)) => b.append_value(v),
            // NUMERIC affinity keeps whole numbers as integers.
            (Builder::Real(b), ValueRef::Integer(v)) => b.append_value(v as f64),
            (Builder::Text(b), ValueRef::Text(v)) => {
                b.append_value(std::str::from_utf8(v).map_err(|_| "text that is not UTF-8")?)
            }
            (Builder::Blob(b), ValueRef::Blob(v)) => b.append_value(v),
            (_, ValueRef::Integer(_)) => return Err("an integer"),
            (_, ValueRef::Real(_)) => return Err("a real"),
            (_, ValueRef::Text(_)) => return Err("text"),
            (_, ValueRef::Blob(_)) => return Err("a blob"),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Real(b) => Arc::new(b.finish()),
            Builder::Text(b) => Arc::new(b.finish()),
            Builder::Blob(b) => Arc::new(b.finish()),
        }
    }
}
