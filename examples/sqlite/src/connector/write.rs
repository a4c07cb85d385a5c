//! Atomic writes, on the kit's two-phase skeleton: each task attempt stages its rows in a table
//! of its own in the database (`"spark stage <query id> <partition> <attempt>"`), and the commit
//! moves them all into the target in one transaction, after deleting its rows when the write
//! overwrites. SQLite has one writer at a time: tasks wait for each other's batches
//! (`BUSY_TIMEOUT`), and readers see the table before the commit or after it, never between.

use arrow_array::{Array, RecordBatch};
use rusqlite::types::Value;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use spark_datasource::kit::rows::Scalar;
use spark_datasource::kit::schema::check_write;
use spark_datasource::kit::sql::{sqlite_column_type, Dialect};
use spark_datasource::kit::write::{Staged, TwoPhase};
use spark_datasource::{DataSource, Error, Result, TaskContext, Write, WriteInfo, WriteMode};

use super::read::bind;
use super::Source;

/// The connector's steps of a write: the source, the target table, the columns, the mode.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Staging {
    source: Source,
    table: String,
    /// The written columns.
    columns: Vec<String>,
    mode: WriteMode,
    /// What the names of this write's stage tables start with: `spark stage <query id> `.
    prefix: String,
}

impl Write for Source {
    type Writer = Staged<Staging>;

    /// Creates the table from the rows' schema if it is missing, and checks the rows' schema
    /// against it.
    fn writer(&self, info: WriteInfo) -> Result<Staged<Staging>> {
        let Some(table) = &self.table else {
            return Err(Error::Option(
                "a write needs the option `table`, not `query`".into(),
            ));
        };
        let sql = Dialect::Sqlite.create_table(table, info.schema.fields(), sqlite_column_type)?;
        self.execute(&self.open(true)?, &sql)?;
        check_write(self.schema()?.as_ref(), &info.schema)?;
        let columns = info.schema.fields().iter().map(|f| f.name().clone());
        Ok(Staged::new(Staging {
            source: self.clone(),
            table: table.clone(),
            columns: columns.collect(),
            mode: info.mode,
            prefix: format!("spark stage {} ", info.query_id),
        }))
    }
}

impl Staging {
    /// Drops the stage tables named, and those of this write's attempts that never reported
    /// (killed tasks), in the transaction that `connection` may be in.
    fn drop_stages(&self, connection: &Connection) -> Result<()> {
        let sql = "SELECT name FROM sqlite_schema WHERE type = 'table' AND substr(name, 1, length(?1)) = ?1";
        let names = connection.prepare(sql).and_then(|mut statement| {
            let rows = statement.query_map([&self.prefix], |row| row.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        });
        for name in names.map_err(|e| self.source.failed(sql, e))? {
            let drop = format!("DROP TABLE IF EXISTS {}", Dialect::Sqlite.ident(&name));
            self.source.execute(connection, &drop)?;
        }
        Ok(())
    }
}

/// A task attempt's open stage: its connection and its table.
pub struct Stage {
    connection: Connection,
    table: String,
}

impl TwoPhase for Staging {
    type Stage = Stage;
    type Message = String;

    fn begin(&self, task: &TaskContext, epoch: Option<u64>) -> Result<Stage> {
        let table = format!(
            "{}{} {} {}",
            self.prefix,
            epoch.unwrap_or(0),
            task.partition_id(),
            task.attempt_number()
        );
        let connection = self.source.open(true)?;
        let sql = format!(
            "CREATE TABLE {} AS SELECT {} FROM {} WHERE 0",
            Dialect::Sqlite.ident(&table),
            Dialect::Sqlite.idents(&self.columns),
            Dialect::Sqlite.ident(&self.table)
        );
        self.source.execute(&connection, &sql)?;
        Ok(Stage { connection, table })
    }

    fn write(&self, stage: &mut Stage, batch: RecordBatch) -> Result<()> {
        let sql = Dialect::Sqlite.insert(&stage.table, &self.columns);
        let transaction = stage
            .connection
            .transaction()
            .map_err(|e| self.source.failed("BEGIN", e))?;
        {
            let mut insert = transaction
                .prepare(&sql)
                .map_err(|e| self.source.failed(&sql, e))?;
            for row in 0..batch.num_rows() {
                let values = batch.columns().iter().map(|c| value(c.as_ref(), row));
                let values = values.collect::<Result<Vec<_>>>()?;
                insert
                    .execute(rusqlite::params_from_iter(values))
                    .map_err(|e| self.source.failed(&sql, e))?;
            }
        }
        transaction
            .commit()
            .map_err(|e| self.source.failed("COMMIT", e))
    }

    fn finish(&self, stage: Stage) -> Result<String> {
        Ok(stage.table)
    }

    fn discard_stage(&self, stage: Stage) {
        let sql = format!(
            "DROP TABLE IF EXISTS {}",
            Dialect::Sqlite.ident(&stage.table)
        );
        // What cannot be dropped now, the commit or abort of the write drops (`drop_stages`).
        let _ = stage.connection.execute(&sql, []);
    }

    fn publish(&mut self, _epoch: Option<u64>, staged: Vec<String>) -> Result<()> {
        let mut connection = self.source.open(true)?;
        let transaction = connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| self.source.failed("BEGIN IMMEDIATE", e))?;
        let target = Dialect::Sqlite.ident(&self.table);
        if self.mode == WriteMode::Truncate {
            self.source
                .execute(&transaction, &format!("DELETE FROM {target}"))?;
        }
        let columns = Dialect::Sqlite.idents(&self.columns);
        for stage in &staged {
            let sql = format!(
                "INSERT INTO {target} ({columns}) SELECT {columns} FROM {}",
                Dialect::Sqlite.ident(stage)
            );
            self.source.execute(&transaction, &sql)?;
        }
        self.drop_stages(&transaction)?;
        transaction
            .commit()
            .map_err(|e| self.source.failed("COMMIT", e))
    }

    fn discard(&mut self, _epoch: Option<u64>, _staged: Vec<String>) -> Result<()> {
        // Every stage of this write goes, named by a message or left by a killed attempt.
        self.drop_stages(&self.source.open(true)?)
    }
}

/// The value of `row` in `array`, as SQLite binds it.
fn value(array: &dyn Array, row: usize) -> Result<Value> {
    match Scalar::of(array, row)? {
        // SQLite would store it as NULL: the row would come back changed.
        Scalar::Real(v) if v.is_nan() => Err(Error::msg(
            "a row holds NaN, which SQLite stores as NULL: replace it (`nanvl`) or write the \
             column as a string",
        )),
        scalar => Ok(bind(scalar)),
    }
}
