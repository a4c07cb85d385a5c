//! A SQLite data source. The options: `path` (the database file), `table` or `query` (a
//! `SELECT`), and `numPartitions` (ranges of `rowid` of a table, planned as Spark's JDBC source
//! plans `partitionColumn`; 1 by default).
//!
//! The schema comes from the declared types, by SQLite's rules of type affinity
//! (`kit::sql::sqlite_affinity`). A column of a query that is an expression has no declared
//! type: the storage class of its first row decides it (`string` when there is no row or it is
//! NULL). A value of another storage class than its column's type fails the read with its
//! column and the fix.

mod read;
mod write;

use std::path::PathBuf;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};
use spark_datasource::kit::sql::{sqlite_affinity, Dialect};
use spark_datasource::{DataSource, Error, Options, Result};

pub use read::Reader;
pub use write::Staging;

/// Every option.
const OPTIONS: &[&str] = &["path", "table", "query", "numPartitions"];

/// How long a connection waits for another's write lock: tasks of a write stage at once.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// The data source: its options, checked.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Source {
    path: PathBuf,
    /// The option `table`, when it is given instead of `query`.
    table: Option<String>,
    /// What a `FROM` names: the table, or the query as a subquery.
    from: String,
    partitions: i64,
}

impl DataSource for Source {
    fn create(_name: &str, options: Options) -> Result<Self> {
        options.expect_only(OPTIONS)?;
        let (table, from) =
            match (options.get("table"), options.get("query")) {
                (Some(table), None) => (Some(table.to_string()), Dialect::Sqlite.ident(table)),
                (None, Some(query)) => (None, format!("({query}) AS \"query\"")),
                _ => return Err(Error::Option(
                    "give exactly one of the options `table` (the name of a table) and `query` \
                     (a SELECT statement)"
                        .into(),
                )),
            };
        let partitions = options.get_or("numPartitions", 1_i64)?;
        if partitions < 1 {
            return Err(Error::Option(format!(
                "option `numPartitions` must be at least 1, got {partitions}"
            )));
        }
        Ok(Source {
            path: options.required("path")?,
            table,
            from,
            partitions,
        })
    }

    // ANCHOR: schema
    fn schema(&self) -> Result<SchemaRef> {
        let connection = self.open(false)?;
        let sql = format!("SELECT * FROM {} LIMIT 1", self.from);
        let mut statement = connection.prepare(&sql).map_err(|e| self.failed(&sql, e))?;
        let declared: Vec<(String, Option<String>)> = statement
            .columns()
            .map(|c| (c.name().to_string(), c.decl_type().map(str::to_string)))
            .collect();
        let not_null = self.not_null_columns(&connection)?;
        let mut rows = statement.query([]).map_err(|e| self.failed(&sql, e))?;
        let first = rows.next().map_err(|e| self.failed(&sql, e))?;
        let mut fields = Vec::with_capacity(declared.len());
        for (i, (name, declared)) in declared.iter().enumerate() {
            let data_type = match declared {
                Some(declared) => sqlite_affinity(declared),
                None => match first.map(|row| row.get_ref(i)).transpose() {
                    Ok(Some(ValueRef::Integer(_))) => DataType::Int64,
                    Ok(Some(ValueRef::Real(_))) => DataType::Float64,
                    Ok(Some(ValueRef::Blob(_))) => DataType::Binary,
                    _ => DataType::Utf8,
                },
            };
            fields.push(Field::new(name, data_type, !not_null.contains(name)));
        }
        Ok(Arc::new(Schema::new(fields)))
    }
    // ANCHOR_END: schema
}

impl Source {
    /// A connection to the database: read-only for reads, so that a read never creates a file.
    fn open(&self, write: bool) -> Result<Connection> {
        let flags = match write {
            true => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
            false => OpenFlags::SQLITE_OPEN_READ_ONLY,
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let path = &self.path;
        let connection = Connection::open_with_flags(path, flags).map_err(|e| {
            Error::msg(format!(
                "cannot open the SQLite database {} (option `path`): {e}",
                path.display()
            ))
        })?;
        connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| self.failed("busy_timeout", e))?;
        Ok(connection)
    }

    /// The columns declared `NOT NULL` in a table (none in a query).
    fn not_null_columns(&self, connection: &Connection) -> Result<Vec<String>> {
        let Some(table) = &self.table else {
            return Ok(Vec::new());
        };
        let sql = "SELECT name FROM pragma_table_info(?1) WHERE \"notnull\"";
        let mut statement = connection.prepare(sql).map_err(|e| self.failed(sql, e))?;
        let names = statement
            .query_map([table], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
        names.map_err(|e| self.failed(sql, e))
    }

    /// Runs a statement that returns no rows.
    fn execute(&self, connection: &Connection, sql: &str) -> Result<()> {
        let done = connection.execute(sql, []);
        done.map(|_| ()).map_err(|e| self.failed(sql, e))
    }

    /// An error of SQLite, with the statement and the database.
    fn failed(&self, sql: &str, error: rusqlite::Error) -> Error {
        let path = self.path.display();
        Error::msg(format!("SQLite failed on {path} ({sql}): {error}"))
    }
}
