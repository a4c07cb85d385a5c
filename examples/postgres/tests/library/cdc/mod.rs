//! Change data capture, on servers with `wal_level = logical`: the whole micro-batch protocol
//! through the host (`sparkds`), and the connector's stream reader driven step by step as
//! Spark's driver drives it (`Query`), where a test stops a query between or inside its steps
//! and starts another from its checkpoint.

mod agreement;
mod failures;
mod snapshot;
mod stream;

use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::Int64Type;
use std::sync::Arc;

use spark_datasource::{DataSource as _, Options, StreamRead as _, StreamReader as _, TaskContext};
use spark_datasource_postgres::connector::cdc::{Offset, Reader};
use spark_datasource_postgres::connector::Source;
use sparkds::arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use sparkds::arrow_schema::{DataType, Field};

use crate::helpers::table;
use crate::server::{self, Server};

/// The options of a stream of `tables` through `slot` on `server`, and `more`.
pub fn options(
    server: &Server,
    slot: &str,
    tables: &str,
    more: &[(&str, &str)],
) -> Vec<(String, String)> {
    let mut options = server.options("");
    options.retain(|(k, _)| k != "dbtable");
    options.push(("slot".into(), slot.into()));
    options.push(("tables".into(), tables.into()));
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    options
}

/// A table name and a slot name that no other test uses.
pub fn names(what: &str) -> (String, String) {
    let name = table(what);
    (name.clone(), format!("slot_{name}"))
}

/// What the tests return: any error fails them.
pub type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The message of a failed call.
pub fn error<T>(result: spark_datasource::Result<T>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// Runs `statements` on `server` as the test role.
pub fn run(server: &Server, statements: &str) {
    server
        .client()
        .batch_execute(statements)
        .unwrap_or_else(|e| panic!("{statements}: {e:?}"));
}

/// The server of these tests.
pub fn logical() -> &'static Server {
    server::logical()
}

/// A streaming query as Spark's driver runs it: one stream reader, the offsets of its
/// checkpoint (the offset log: the micro-batch planned last; the commit log: the last one
/// read whole), and each micro-batch's end committed to the source when the next is planned.
pub struct Query {
    pub reader: Reader,
    /// The end of the last micro-batch read whole (Spark's commit log).
    pub done: Offset,
    /// The micro-batch planned and not yet read whole (Spark's offset log).
    pub planned: Option<(Offset, Offset)>,
    /// The end that Spark commits to the source when it plans the next micro-batch.
    uncommitted: Option<Offset>,
}

/// What a stopped query leaves in its checkpoint.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub done: Offset,
    pub planned: Option<(Offset, Offset)>,
}

impl Query {
    /// A new query: the source's initial offset.
    pub fn start(options: &[(String, String)]) -> spark_datasource::Result<Query> {
        let reader = reader(options)?;
        let initial = reader.initial_offset()?;
        Ok(Query {
            reader,
            done: initial,
            planned: None,
            uncommitted: None,
        })
    }

    /// A query restarted from `checkpoint`: a micro-batch planned and not read whole is read
    /// again first, with its offsets.
    pub fn resume(
        options: &[(String, String)],
        checkpoint: &Checkpoint,
    ) -> spark_datasource::Result<Query> {
        Ok(Query {
            reader: reader(options)?,
            done: checkpoint.done.clone(),
            planned: checkpoint.planned.clone(),
            // As Spark, which commits the end of the micro-batch before the planned one.
            uncommitted: Some(checkpoint.done.clone()),
        })
    }

    /// What the query leaves if it stops now.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            done: self.done.clone(),
            planned: self.planned.clone(),
        }
    }

    /// Plans the next micro-batch: `latest_offset`, then (as Spark, once it logged the new
    /// offsets) the commit of the previous end. `false` when there is nothing new.
    pub fn plan(&mut self) -> spark_datasource::Result<bool> {
        if self.planned.is_some() {
            return Ok(true);
        }
        let start = self.done.clone();
        let end = self.reader.latest_offset(start.clone())?;
        if end == start {
            return Ok(false);
        }
        self.planned = Some((start, end));
        if let Some(previous) = self.uncommitted.take() {
            self.reader.commit(previous)?;
        }
        Ok(true)
    }

    /// Reads the planned micro-batch: its rows, rendered.
    pub fn read(&mut self) -> spark_datasource::Result<Vec<String>> {
        Ok(self.read_batches()?.iter().flat_map(render).collect())
    }

    /// Reads the planned micro-batch: its batches.
    pub fn read_batches(&mut self) -> spark_datasource::Result<Vec<RecordBatch>> {
        let (start, end) = self.planned.clone().expect("a planned micro-batch");
        let mut batches = Vec::new();
        for partition in self.reader.partitions(start, end.clone())? {
            for batch in self.reader.read(partition, &TaskContext::for_tests(0, 0))? {
                batches.push(batch?);
            }
        }
        self.planned = None;
        self.uncommitted = Some(end.clone());
        self.done = end;
        Ok(batches)
    }

    /// Plans and reads micro-batches until none is new: their rows, one list per micro-batch.
    pub fn drain(&mut self) -> spark_datasource::Result<Vec<Vec<String>>> {
        let mut batches = Vec::new();
        while self.plan()? {
            batches.push(self.read()?);
        }
        Ok(batches)
    }
}

/// The stream reader of a query with `options`, as Spark creates it.
pub fn reader(options: &[(String, String)]) -> spark_datasource::Result<Reader> {
    let source = Source::create("postgres", Options::new(options.iter().cloned()))?;
    let schema = source.schema()?;
    source.stream_reader(schema)
}

/// Each row of `batch` as `<op> <table> <row after> <row before>`, the two rows as the
/// struct columns of the row's table (`-` when NULL), and `unchanged [...]` when the server
/// left values out.
pub fn render(batch: &RecordBatch) -> Vec<String> {
    use arrow_cast::display::{ArrayFormatter, FormatOptions};
    let options = FormatOptions::default().with_null("-");
    let ops = batch.column(0).as_string::<i32>();
    let tables = batch.column(1).as_string::<i32>();
    let unchanged = batch.column(6).as_list::<i32>();
    (0..batch.num_rows())
        .map(|row| {
            let table = tables.value(row);
            let name = table.split_once('.').map_or(table, |(_, n)| n);
            let side = |column: &str| {
                let array = batch.column_by_name(column).expect("the table's column");
                let array = without_time_zones(array);
                let formatter =
                    ArrayFormatter::try_new(array.as_ref(), &options).expect("a formatter");
                formatter.value(row).to_string()
            };
            let mut text = format!(
                "{} {table} {} {}",
                ops.value(row),
                side(name),
                side(&format!("{name}_before"))
            );
            if unchanged.is_valid(row) {
                let names = unchanged.value(row);
                let names: Vec<&str> = names.as_string::<i32>().iter().flatten().collect();
                text.push_str(&format!(" unchanged {names:?}"));
            }
            text
        })
        .collect()
}

/// `array` with its timestamps in UTC shown without their zone (arrow-cast names no zone
/// without its `chrono-tz` feature).
fn without_time_zones(array: &ArrayRef) -> ArrayRef {
    match array.data_type() {
        DataType::Timestamp(unit, Some(_)) => {
            arrow_cast::cast(array, &DataType::Timestamp(*unit, None)).expect("a cast")
        }
        DataType::Struct(_) => {
            let array = array.as_struct();
            let children: Vec<ArrayRef> = array.columns().iter().map(without_time_zones).collect();
            let fields: Vec<Field> = array
                .fields()
                .iter()
                .zip(&children)
                .map(|(f, c)| Field::new(f.name(), c.data_type().clone(), true))
                .collect();
            Arc::new(
                StructArray::try_new(fields.into(), children, array.nulls().cloned())
                    .expect("a struct"),
            )
        }
        _ => array.clone(),
    }
}

/// The `(_lsn, _seq)` of each row of `batches`.
pub fn positions(batches: &[RecordBatch]) -> Vec<(i64, i64)> {
    batches
        .iter()
        .flat_map(|b| {
            let lsn = b.column(2).as_primitive::<Int64Type>().clone();
            let seq = b.column(3).as_primitive::<Int64Type>().clone();
            (0..b.num_rows()).map(move |i| (lsn.value(i), seq.value(i)))
        })
        .collect()
}
