//! The messages of a micro-batch as rows of the stream: which transactions it keeps, how each
//! table's relation message maps onto the table's columns in the stream, and the Arrow
//! builders of the rows.
//!
//! A micro-batch keeps the transactions whose commit record starts in `[start, end)`: offsets
//! are the ends of commit records (or other record boundaries), so a transaction is in exactly
//! one micro-batch, whole. The slot may still be behind `start` (Spark commits a micro-batch's
//! end when it plans the next one), so the transactions before it arrive and are skipped; their
//! relation messages still count, since the plugin sends a table's only once per decoding.
//!
//! The stream reads each table with the columns it had when the query started, at the LSN
//! `schema_lsn` read just before the catalog. A change committed before that LSN is read by
//! column name: a column it lacks (added since) is NULL, one it has that the stream lacks
//! (dropped since) is left out. A change committed after it must have exactly the stream's
//! columns: anything else is a schema change that the query has not seen, and fails the read
//! with what changed. A column whose type differs fails the read either way: its values are
//! in another type's format.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, Int64Builder, ListBuilder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch, StructArray, UInt32Array};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, SchemaRef};
use spark_datasource::{Error, Result};
use tokio_postgres::types::Type;

use super::super::binary::{BatchSize, Decoder};
use super::super::time::timestamp_from_postgres;
use super::super::types::{read_kind, Kind};
use super::convert::Converter;
use super::pgoutput::{self, Lsn, Message, OldRow, Relation, Tuple, Value};
use super::slot::Failure;
use super::{type_name, Table};

/// Where a value of a relation message's column goes: the index of the stream's column, or
/// nowhere (a column dropped since the query started).
type Layout = Vec<Option<usize>>;

/// The stream's table of a relation, and its layout: shared, since every change looks it up.
type Placed = (usize, Rc<Layout>);

/// The transaction being decoded.
struct Transaction {
    commit_lsn: Lsn,
    /// Microseconds since 1970, UTC.
    commit_time: i64,
    xid: u32,
    /// Whether the micro-batch holds it.
    kept: bool,
    /// Rows emitted so far.
    seq: i64,
    /// Whether it was committed before the stream's schema was read.
    before_schema: bool,
}

/// Decodes the messages of one micro-batch into rows.
pub struct Decoding<'a> {
    tables: &'a [Table],
    start: Lsn,
    end: Lsn,
    schema_lsn: Lsn,
    /// The last relation message of each relation, by OID.
    relations: HashMap<u32, Relation>,
    /// The layouts worked out from them: by OID and whether the change precedes the schema.
    layouts: HashMap<(u32, bool), Option<Placed>>,
    transaction: Option<Transaction>,
    /// The commit LSN of the last transaction kept, to check that commits come in order.
    last_commit: Option<Lsn>,
}

impl<'a> Decoding<'a> {
    /// The decoding of the transactions that commit in `[start, end)`, for a stream that read
    /// `tables` at `schema_lsn`.
    pub fn new(tables: &'a [Table], start: Lsn, end: Lsn, schema_lsn: Lsn) -> Self {
        Decoding {
            tables,
            start,
            end,
            schema_lsn,
            relations: HashMap::new(),
            layouts: HashMap::new(),
            transaction: None,
            last_commit: None,
        }
    }

    /// Decodes one message, appending its rows to `rows`.
    ///
    /// # Errors
    /// A malformed message, a change outside a transaction, a schema change since the query
    /// started, a value that Spark cannot hold.
    pub fn message(&mut self, bytes: &[u8], rows: &mut Rows) -> Result<()> {
        let message = pgoutput::parse(bytes).map_err(Error::msg)?;
        match message {
            Message::Begin {
                final_lsn,
                commit_time,
                xid,
            } => {
                let commit_time = timestamp_from_postgres(commit_time).map_err(|why| {
                    Error::msg(format!("the transaction {xid} has the commit time {why}"))
                })?;
                self.transaction = Some(Transaction {
                    commit_lsn: final_lsn,
                    commit_time,
                    xid,
                    kept: self.start <= final_lsn && final_lsn < self.end,
                    seq: 0,
                    before_schema: final_lsn < self.schema_lsn,
                });
            }
            Message::Commit { commit_lsn, .. } => {
                let transaction = self.transaction.take().ok_or_else(|| {
                    Error::msg("a commit without its transaction in the change stream")
                })?;
                if transaction.commit_lsn != commit_lsn {
                    return Err(Error::msg(format!(
                        "the change stream committed {commit_lsn} in a transaction that began \
                         for {}",
                        transaction.commit_lsn
                    )));
                }
                if transaction.kept {
                    if self.last_commit.is_some_and(|last| last >= commit_lsn) {
                        return Err(Error::msg(format!(
                            "the change stream committed {commit_lsn} after a later commit"
                        )));
                    }
                    self.last_commit = Some(commit_lsn);
                }
            }
            Message::Relation(relation) => {
                self.layouts.retain(|(oid, _), _| *oid != relation.oid);
                self.relations.insert(relation.oid, relation);
            }
            Message::Insert { relation, new } => {
                self.change(relation, "insert", Some(new), None, rows)?;
            }
            Message::Update { relation, old, new } => {
                self.change(relation, "update", Some(new), old, rows)?;
            }
            Message::Delete { relation, old } => {
                self.change(relation, "delete", None, Some(old), rows)?;
            }
            Message::Truncate { relations } => {
                for relation in relations {
                    self.change(relation, "truncate", None, None, rows)?;
                }
            }
            Message::Other(_) => {}
        }
        Ok(())
    }

    /// Whether the stream ended between transactions, as a decoding must.
    pub fn finish(&self) -> Result<()> {
        match &self.transaction {
            Some(t) => Err(Error::msg(format!(
                "the change stream ended inside the transaction {}",
                t.xid
            ))),
            None => Ok(()),
        }
    }

    fn change(
        &mut self,
        relation: u32,
        op: &'static str,
        new: Option<Tuple<'_>>,
        old: Option<(OldRow, Tuple<'_>)>,
        rows: &mut Rows,
    ) -> Result<()> {
        let Some(transaction) = &self.transaction else {
            return Err(Error::msg(format!(
                "a change ({op}) outside a transaction in the change stream"
            )));
        };
        if !transaction.kept {
            return Ok(());
        }
        let (commit_lsn, before_schema) = (transaction.commit_lsn, transaction.before_schema);
        let Some((table, layout)) = self.layout(relation, before_schema, commit_lsn)? else {
            // A table that left the publication (or was dropped) before the query started.
            return Ok(());
        };
        let transaction = self
            .transaction
            .as_mut()
            .ok_or_else(|| Error::msg("a change outside a transaction"))?;
        let seq = transaction.seq;
        transaction.seq += 1;
        let meta = Meta {
            op,
            table: &self.tables[table],
            lsn: commit_lsn,
            seq,
            commit_time: Some(transaction.commit_time),
            xid: Some(transaction.xid),
        };
        rows.change(table, &meta, &layout, new, old)
    }

    /// The stream's table of `relation`, and where the values of its relation message go;
    /// `None` for a table that the stream does not read and need not.
    fn layout(
        &mut self,
        relation: u32,
        before_schema: bool,
        commit_lsn: Lsn,
    ) -> Result<Option<Placed>> {
        if let Some(found) = self.layouts.get(&(relation, before_schema)) {
            return Ok(found.clone());
        }
        let message = self.relations.get(&relation).ok_or_else(|| {
            Error::msg(format!(
                "a change of the relation {relation} before its relation message in the change \
                 stream"
            ))
        })?;
        let found = match self
            .tables
            .iter()
            .position(|t| t.namespace == message.namespace && t.name == message.name)
        {
            None if before_schema => None,
            None => {
                return Err(Error::msg(format!(
                    "the table `{}.{}` has changes at {commit_lsn}, but the stream does not \
                     read it: it joined the publication after the query started. Restart the \
                     query to read its changes (its columns then join the stream's schema)",
                    message.namespace, message.name
                )))
            }
            Some(index) => Some((
                index,
                Rc::new(layout(
                    &self.tables[index],
                    message,
                    before_schema,
                    commit_lsn,
                )?),
            )),
        };
        self.layouts
            .insert((relation, before_schema), found.clone());
        Ok(found)
    }
}

/// Where the columns of `message` go in the stream's `table`.
fn layout(table: &Table, message: &Relation, lenient: bool, at: Lsn) -> Result<Layout> {
    let mut changes = Vec::new();
    let mut layout = Vec::with_capacity(message.columns.len());
    for column in &message.columns {
        match table.columns.iter().position(|c| c.name == column.name) {
            None => {
                if !lenient {
                    changes.push(format!(
                        "column `{}` ({}) was added",
                        column.name,
                        type_name(column.type_oid)
                    ));
                }
                layout.push(None);
            }
            Some(index) => {
                let ours = &table.columns[index];
                // Whether `timestamp` is an instant does not depend on the modifier.
                let same_kind = || {
                    Type::from_oid(column.type_oid).is_some_and(|ty| {
                        read_kind(&column.name, &ty, column.type_modifier, true).is_ok_and(|kind| {
                            read_kind(&ours.name, &ty, ours.type_modifier, true).ok() == Some(kind)
                        })
                    })
                };
                if ours.type_oid != column.type_oid
                    || ours.type_modifier != column.type_modifier && !same_kind()
                {
                    changes.push(format!(
                        "column `{}` changed type from {} to {}",
                        column.name,
                        modified_type_name(ours.type_oid, ours.type_modifier),
                        modified_type_name(column.type_oid, column.type_modifier),
                    ));
                }
                layout.push(Some(index));
            }
        }
    }
    if !lenient {
        for column in &table.columns {
            if !message.columns.iter().any(|c| c.name == column.name) {
                changes.push(format!("column `{}` was dropped", column.name));
            }
        }
        // Same columns in another order would map by name; only a set that differs is a
        // change the stream cannot read.
    }
    if changes.is_empty() {
        return Ok(layout);
    }
    Err(Error::msg(format!(
        "the table `{}` changed at {at}, after the query started: {}. The stream reads the \
         columns the table had then; restart the query to read the new ones (changes made \
         before the restart read a column added since as NULL). A column whose type changed \
         cannot be read across the change: let the stream pass every change made before it \
         (its lag at 0), stop the query, change the type, start the query again",
        table.qualified(),
        changes.join(", ")
    )))
}

fn modified_type_name(oid: u32, modifier: i32) -> String {
    match Type::from_oid(oid) {
        Some(Type::NUMERIC) if modifier >= 4 => {
            let packed = modifier - 4;
            format!("numeric({},{})", (packed >> 16) & 0xffff, packed & 0x7ff)
        }
        _ => type_name(oid),
    }
}

/// The metadata of a row.
pub struct Meta<'a> {
    pub op: &'static str,
    pub table: &'a Table,
    pub lsn: Lsn,
    pub seq: i64,
    pub commit_time: Option<i64>,
    pub xid: Option<u32>,
}

/// The rows of the batch being built.
pub struct Rows {
    schema: SchemaRef,
    size: BatchSize,
    op: StringBuilder,
    table: StringBuilder,
    lsn: Int64Builder,
    seq: Int64Builder,
    commit_time: TimestampMicrosecondBuilder,
    xid: Int64Builder,
    unchanged: ListBuilder<StringBuilder>,
    tables: Vec<TableRows>,
    /// The tables, as the stream reads them.
    described: Vec<Table>,
    rows: usize,
    /// Bytes of values appended since the batch began.
    bytes: usize,
}

/// The rows of one table in the batch, compact: only the rows that are its own.
struct TableRows {
    /// `schema.table`, the rows' `_table`.
    qualified: String,
    after: Side,
    before: Side,
    /// The position in the batch of each of its rows.
    positions: Vec<u32>,
}

/// One struct column of a table (the row after the change, or before it).
struct Side {
    builders: Vec<Builder>,
    valid: Vec<bool>,
}

/// The values of one column: decoded as they come, or kept in their binary form for the
/// server to convert (`Kind::expression`) when the batch is finished.
enum Builder {
    Decoded(Decoder),
    Deferred(BinaryBuilder),
}

impl Builder {
    fn append_null(&mut self) {
        match self {
            Builder::Decoded(decoder) => decoder.append_null(),
            Builder::Deferred(raw) => raw.append_null(),
        }
    }

    fn append(&mut self, value: &[u8]) -> std::result::Result<(), String> {
        match self {
            Builder::Decoded(decoder) => decoder.append(value),
            Builder::Deferred(raw) => {
                raw.append_value(value);
                Ok(())
            }
        }
    }
}

impl Side {
    /// The builders of `table`'s columns. In UTC (`utc`), a `timestamp` that reads as an
    /// instant is its wall clock as it is, in the same binary form as the `timestamptz` that the
    /// server would convert it to: it is decoded as it comes, as a batch read selects it
    /// without the conversion there.
    fn new(table: &Table, utc: bool) -> Side {
        Side {
            builders: table
                .columns
                .iter()
                .map(|c| match c.kind.expression("x") {
                    Some(_) if !(utc && matches!(c.kind, Kind::LocalTimestamp)) => {
                        Builder::Deferred(BinaryBuilder::new())
                    }
                    _ => Builder::Decoded(Decoder::new(&c.kind)),
                })
                .collect(),
            valid: Vec::new(),
        }
    }

    fn null(&mut self) {
        self.builders.iter_mut().for_each(Builder::append_null);
        self.valid.push(false);
    }

    async fn finish(
        &mut self,
        data_type: &DataType,
        table: &Table,
        converter: &mut Converter<'_>,
    ) -> std::result::Result<ArrayRef, Failure> {
        let DataType::Struct(fields) = data_type else {
            return Err(Error::msg("a table's column of the stream is not a struct").into());
        };
        let mut children = Vec::with_capacity(self.builders.len());
        for (builder, column) in self.builders.iter_mut().zip(&table.columns) {
            children.push(match builder {
                Builder::Decoded(decoder) => decoder.finish(),
                Builder::Deferred(raw) => {
                    let raw = raw.finish();
                    if raw.null_count() == raw.len() {
                        Decoder::new(&column.kind).finish_nulls(raw.len())
                    } else {
                        converter.convert(table, column, &raw).await?
                    }
                }
            });
        }
        let valid = std::mem::take(&mut self.valid);
        let nulls = valid.iter().any(|v| !v).then(|| NullBuffer::from(valid));
        Ok(Arc::new(
            StructArray::try_new(fields.clone(), children, nulls).map_err(Error::from)?,
        ))
    }
}

impl Rows {
    /// The builders of batches of `schema` (see `super::schema`), for `tables`; `utc` when a
    /// `timestamp` that reads as an instant reads in UTC (see [`Side::new`]).
    pub fn new(schema: SchemaRef, tables: &[Table], size: BatchSize, utc: bool) -> Self {
        Rows {
            schema,
            size,
            op: StringBuilder::new(),
            table: StringBuilder::new(),
            lsn: Int64Builder::new(),
            seq: Int64Builder::new(),
            commit_time: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            xid: Int64Builder::new(),
            unchanged: ListBuilder::new(StringBuilder::new()).with_field(Field::new(
                "element",
                DataType::Utf8,
                true,
            )),
            tables: tables
                .iter()
                .map(|t| TableRows {
                    qualified: t.qualified(),
                    after: Side::new(t, utc),
                    before: Side::new(t, utc),
                    positions: Vec::new(),
                })
                .collect(),
            described: tables.to_vec(),
            rows: 0,
            bytes: 0,
        }
    }

    /// Whether the batch reached its size: `fetchsize` rows or `batchBytes` bytes.
    pub fn full(&self) -> bool {
        self.rows >= self.size.rows || self.bytes >= self.size.bytes
    }

    /// Whether the batch has rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    fn meta(&mut self, table: usize, meta: &Meta<'_>) -> Result<()> {
        let position = u32::try_from(self.rows)
            .map_err(|_| Error::msg("more rows in a batch than Arrow's indices hold"))?;
        let lsn = i64::try_from(meta.lsn.0)
            .map_err(|_| Error::msg(format!("the LSN {} does not fit a bigint", meta.lsn)))?;
        self.op.append_value(meta.op);
        self.table.append_value(&self.tables[table].qualified);
        self.lsn.append_value(lsn);
        self.seq.append_value(meta.seq);
        self.commit_time.append_option(meta.commit_time);
        self.xid.append_option(meta.xid.map(i64::from));
        self.tables[table].positions.push(position);
        self.rows += 1;
        Ok(())
    }

    /// Appends the row of a change of `table`: its new values (insert, update) and its old
    /// ones (the key or the whole row; update, delete), by `layout`.
    fn change(
        &mut self,
        table: usize,
        meta: &Meta<'_>,
        layout: &Layout,
        new: Option<Tuple<'_>>,
        old: Option<(OldRow, Tuple<'_>)>,
    ) -> Result<()> {
        self.meta(table, meta)?;
        let described = meta.table;
        let mut unchanged = Vec::new();
        let old_values = match &old {
            Some((_, tuple)) => Some(values(tuple, layout, described)?),
            None => None,
        };
        let full_old = matches!(old, Some((OldRow::Full, _)));
        let TableRows { after, before, .. } = &mut self.tables[table];
        match new {
            None => after.null(),
            Some(tuple) => {
                let mut values = values(&tuple, layout, described)?;
                // A TOASTed value that the change left alone is not sent: the old row has it
                // when the table's replica identity is FULL.
                for (index, value) in values.iter_mut().enumerate() {
                    if *value == Some(Value::Unchanged) {
                        match old_values.as_ref().filter(|_| full_old) {
                            Some(old) => *value = old[index],
                            None => {
                                unchanged.push(described.columns[index].name.as_str());
                                *value = Some(Value::Null);
                            }
                        }
                    }
                }
                self.bytes += append(after, &values, described)?;
            }
        }
        match &old_values {
            None => before.null(),
            Some(values) => {
                let mut values = values.clone();
                for value in values.iter_mut() {
                    if *value == Some(Value::Unchanged) {
                        *value = Some(Value::Null);
                    }
                }
                self.bytes += append(before, &values, described)?;
            }
        }
        if unchanged.is_empty() {
            self.unchanged.append_null();
        } else {
            for name in unchanged {
                self.unchanged.values().append_value(name);
            }
            self.unchanged.append(true);
        }
        Ok(())
    }

    /// Appends `columns` (the values of one table's rows, from a snapshot of it) as rows of
    /// `table` with `meta`, `_seq` counting up from `meta.seq`.
    pub fn snapshot(
        &mut self,
        table: usize,
        meta: &Meta<'_>,
        columns: Vec<ArrayRef>,
    ) -> Result<RecordBatch> {
        let rows = columns.first().map_or(0, |c| c.len());
        let lsn = i64::try_from(meta.lsn.0)
            .map_err(|_| Error::msg(format!("the LSN {} does not fit a bigint", meta.lsn)))?;
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(arrow_array::StringArray::from(vec![meta.op; rows])),
            Arc::new(arrow_array::StringArray::from(vec![
                meta.table.qualified();
                rows
            ])),
            Arc::new(arrow_array::Int64Array::from(vec![lsn; rows])),
            Arc::new(arrow_array::Int64Array::from_iter_values(
                (0..rows as i64).map(|i| meta.seq + i),
            )),
        ];
        for field in &self.schema.fields()[4..7] {
            arrays.push(new_null_array(field.data_type(), rows));
        }
        for (index, _) in self.tables.iter().enumerate() {
            let after = &self.schema.fields()[7 + 2 * index];
            let before = &self.schema.fields()[8 + 2 * index];
            if index == table {
                let DataType::Struct(fields) = after.data_type() else {
                    return Err(Error::msg("a table's column of the stream is not a struct"));
                };
                arrays.push(Arc::new(StructArray::try_new(
                    fields.clone(),
                    columns.clone(),
                    None,
                )?));
            } else {
                arrays.push(new_null_array(after.data_type(), rows));
            }
            arrays.push(new_null_array(before.data_type(), rows));
        }
        Ok(RecordBatch::try_new(self.schema.clone(), arrays)?)
    }

    /// The batch of the rows appended since the last one, the values that the server converts
    /// converted by `converter`; the builders start over.
    ///
    /// # Errors
    /// The server's, a value that Spark cannot hold, arrays that do not make a batch of the
    /// schema (a bug), or a batch too large for Arrow's indices.
    pub async fn finish(
        &mut self,
        converter: &mut Converter<'_>,
    ) -> std::result::Result<RecordBatch, Failure> {
        let rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        let mut arrays: Vec<ArrayRef> = vec![
            Arc::new(self.op.finish()),
            Arc::new(self.table.finish()),
            Arc::new(self.lsn.finish()),
            Arc::new(self.seq.finish()),
            Arc::new(self.commit_time.finish()),
            Arc::new(self.xid.finish()),
            Arc::new(self.unchanged.finish()),
        ];
        let fields = self.schema.fields().clone();
        for (index, table) in self.tables.iter_mut().enumerate() {
            let positions = std::mem::take(&mut table.positions);
            let described = &self.described[index];
            for (side, field) in [
                (&mut table.after, &fields[7 + 2 * index]),
                (&mut table.before, &fields[8 + 2 * index]),
            ] {
                let compact = side.finish(field.data_type(), described, converter).await?;
                arrays.push(spread(compact, &positions, rows)?);
            }
        }
        Ok(RecordBatch::try_new(self.schema.clone(), arrays).map_err(Error::from)?)
    }
}

/// A table's compact column (one value per row of the table) as a column of the batch, NULL
/// in the rows of other tables.
fn spread(compact: ArrayRef, positions: &[u32], rows: usize) -> Result<ArrayRef> {
    if positions.len() == rows {
        // Every row is the table's: the usual stream of one table.
        return Ok(compact);
    }
    if positions.is_empty() {
        return Ok(new_null_array(compact.data_type(), rows));
    }
    let mut indices: Vec<Option<u32>> = vec![None; rows];
    for (at, &position) in positions.iter().enumerate() {
        indices[position as usize] = Some(at as u32);
    }
    Ok(arrow_select::take::take(
        &compact,
        &UInt32Array::from(indices),
        None,
    )?)
}

/// The values of `tuple` in the order of the stream's table: `None` for a column that the
/// change's relation lacks (read as NULL).
fn values<'t>(tuple: &Tuple<'t>, layout: &Layout, table: &Table) -> Result<Vec<Option<Value<'t>>>> {
    if tuple.len() != layout.len() {
        return Err(Error::msg(format!(
            "a row of the table `{}` has {} values where its relation message has {} columns",
            table.qualified(),
            tuple.len(),
            layout.len()
        )));
    }
    let mut values = vec![None; table.columns.len()];
    for (value, target) in tuple.values().zip(layout) {
        let value = value.map_err(Error::msg)?;
        if let Some(index) = target {
            values[*index] = Some(value);
        }
    }
    Ok(values)
}

/// Appends one row to `side`; the bytes of its values.
fn append(side: &mut Side, values: &[Option<Value<'_>>], table: &Table) -> Result<usize> {
    let mut bytes = 0;
    for ((decoder, value), column) in side.builders.iter_mut().zip(values).zip(&table.columns) {
        match value {
            None | Some(Value::Null) | Some(Value::Unchanged) => decoder.append_null(),
            Some(Value::Binary(value)) => {
                bytes += value.len();
                decoder.append(value).map_err(|why| {
                    Error::msg(format!(
                        "column `{}` of the table `{}` holds {why}",
                        column.name,
                        table.qualified()
                    ))
                })?
            }
            Some(Value::Text(_)) => {
                return Err(Error::msg(format!(
                    "column `{}` of the table `{}` arrived as text, not in its binary format",
                    column.name,
                    table.qualified()
                )))
            }
        }
    }
    side.valid.push(true);
    Ok(bytes)
}
