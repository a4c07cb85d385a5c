//! Writes in two phases. Each task attempt creates an unlogged staging table of its own,
//! `sparkds_<query id>_<partition>_<attempt>`, and fills it with `COPY ... FROM STDIN (FORMAT
//! binary)`; its commit message names that table. The driver's commit then, in one
//! transaction, creates the target if it is missing, truncates it for an overwrite, inserts
//! the rows of the staging tables that the messages name (one per partition: a retried task's
//! earlier attempt is not named), and drops every staging table of the write.
//!
//! So the target changes only when that transaction commits: a failed, killed or aborted
//! write leaves it as it was, and an abort drops what was staged.
//!
//! A task attempt that Spark has given up on may still run after the driver's abort, and a
//! staging table it created then would stay forever. So the write has an anchor,
//! `sparkds_<query id>_live`, an empty table that the driver creates when it plans the write:
//! a task creates its staging table in a transaction that first locks the anchor (shared), and
//! the commit and the abort drop the anchor (exclusive: after the creations under way) before
//! they list the staging tables to drop. A task that starts later finds no anchor and creates
//! nothing; one whose table the abort dropped fails at its next COPY.
//!
//! The staging columns have the PostgreSQL types of the DataFrame's (`types::kind_of_arrow`);
//! the INSERT converts them to the target's with PostgreSQL's assignment casts, as an INSERT
//! of Spark's JDBC source does.

use arrow_array::RecordBatch;
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result, TaskContext, Write, WriteInfo, WriteMode};

use super::binary::{Encoder, HEADER, TRAILER};
use super::connect::{describe, Session};
use super::sql::quote;
use super::types::{kind_of_arrow, Kind};
use super::{Relation, Settings, Source};

/// Encoded rows that a task buffers before it sends them in one COPY.
const FLUSH_BYTES: usize = 8 << 20;

/// A column written: its name in the DataFrame and in the table, its staging type, and
/// whether the DataFrame's column may be NULL.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct WriteColumn {
    source: String,
    target: String,
    kind: Kind,
    nullable: bool,
}

/// The driver side of a write.
#[derive(Debug, Serialize, Deserialize)]
pub struct Writer {
    settings: Settings,
    /// `dbtable` as the user wrote it, for messages.
    table: String,
    /// The table, resolved once when the write is planned: schema-qualified and quoted, the
    /// only form that any statement of the write uses.
    target: String,
    columns: Vec<WriteColumn>,
    exists: bool,
    mode: WriteMode,
    /// What the staging tables of this write are named after.
    prefix: String,
}

/// What a task staged.
#[derive(Debug, Serialize, Deserialize)]
pub struct Staged {
    table: String,
    rows: u64,
}

impl Write for Source {
    type Writer = Writer;

    fn writer(&self, info: WriteInfo) -> Result<Writer> {
        self.check()?;
        let Relation::Table(table) = &self.settings.relation else {
            return Err(Error::Option(
                "a write needs the option `dbtable`, the table to write to, not `query`"
                    .to_string(),
            ));
        };
        let mut columns = info
            .schema
            .fields()
            .iter()
            .map(|f| {
                Ok(WriteColumn {
                    source: f.name().clone(),
                    target: f.name().clone(),
                    kind: kind_of_arrow(f.name(), f.data_type())?,
                    nullable: f.is_nullable(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let client = self.settings.connection.connect("sparkds-write")?;
        let (target, existing) = resolve(&client, table)?;
        if let Some(existing) = &existing {
            for column in &mut columns {
                // As Spark's JDBC source matches them: exactly, else in any case.
                let found = existing
                    .iter()
                    .find(|c| **c == column.source)
                    .or_else(|| {
                        existing
                            .iter()
                            .find(|c| c.eq_ignore_ascii_case(&column.source))
                    })
                    .ok_or_else(|| {
                        Error::msg(format!(
                            "the DataFrame's column `{}` is not a column of the table {table}; \
                             its columns are: {}",
                            column.source,
                            existing.join(", ")
                        ))
                    })?;
                column.target = found.clone();
            }
        }
        let id: String = info
            .query_id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(32)
            .collect::<String>()
            .to_ascii_lowercase();
        let prefix = format!("sparkds_{id}_");
        // IF NOT EXISTS: the bridge creates the writer again to commit or abort.
        let create = format!(
            "CREATE UNLOGGED TABLE IF NOT EXISTS {} ()",
            quote(&anchor(&prefix))
        );
        client.batch_execute(&create).map_err(|e| {
            Error::msg(format!(
                "cannot create the write's anchor table {}: {}",
                anchor(&prefix),
                describe(&e)
            ))
        })?;
        Ok(Writer {
            settings: self.settings.clone(),
            table: table.clone(),
            target,
            columns,
            exists: existing.is_some(),
            mode: info.mode,
            prefix,
        })
    }
}

/// The anchor of the write whose staging tables start with `prefix` (see the module's doc).
fn anchor(prefix: &str) -> String {
    format!("{prefix}live")
}

/// `dbtable` resolved as PostgreSQL resolves a table name, once: the schema-qualified quoted
/// name of the table and its columns, or, when there is no such table, the quoted name it is
/// created with (in the schema where an unqualified CREATE TABLE would put it) and `None`.
fn resolve(client: &Session, table: &str) -> Result<(String, Option<Vec<String>>)> {
    let parts = identifiers(table).ok_or_else(|| {
        Error::Option(format!(
            "option `dbtable` of a write must be a table name, [schema.]table, with \
             double quotes around a part that has other characters, got `{table}`"
        ))
    })?;
    let quoted: Vec<String> = parts.iter().map(|p| quote(p)).collect();
    let quoted = quoted.join(".");
    let failed = |e: tokio_postgres::Error| {
        Error::msg(format!(
            "cannot read the columns of the table {table}: {}",
            describe(&e)
        ))
    };
    let found = client
        .query_opt(
            "SELECT n.nspname::text, c.relname::text FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)",
            &[&quoted],
        )
        .map_err(failed)?;
    let Some(found) = found else {
        let name = match parts.as_slice() {
            [name] => {
                let schema: Option<String> = client
                    .query_one("SELECT current_schema()::text", &[])
                    .and_then(|row| row.try_get(0))
                    .map_err(failed)?;
                let schema = schema.ok_or_else(|| {
                    Error::msg(format!(
                        "cannot create the table {table}: the search_path names no schema that \
                         exists; qualify `dbtable` with its schema"
                    ))
                })?;
                format!("{}.{}", quote(&schema), quote(name))
            }
            _ => quoted,
        };
        return Ok((name, None));
    };
    let (schema, name): (String, String) = (found.get(0), found.get(1));
    let target = format!("{}.{}", quote(&schema), quote(&name));
    table_columns(client, table, &target).map(|columns| (target, Some(columns)))
}

/// The parts of a qualified name as SQL reads it: unquoted parts (letters, digits, `_`, `$`)
/// folded to lower case, quoted parts as they are, with `""` for a quote; `None` for anything
/// else, such as a subquery or a second statement.
fn identifiers(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = text.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if !(c.is_alphanumeric() || c == '_' || c == '$') {
                    break;
                }
                part.extend(c.to_lowercase());
                chars.next();
            }
            if part.is_empty() || part.starts_with(|c: char| c.is_ascii_digit() || c == '$') {
                return None;
            }
        }
        if part.is_empty() {
            return None;
        }
        parts.push(part);
        match chars.next() {
            None => break,
            Some('.') => {}
            Some(_) => return None,
        }
    }
    (parts.len() <= 3).then_some(parts)
}

/// The columns of the table `target`.
fn table_columns(client: &Session, table: &str, target: &str) -> Result<Vec<String>> {
    let rows = client
        .query(
            "SELECT a.attname::text FROM pg_attribute a \
                 WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 \
                 AND NOT a.attisdropped ORDER BY a.attnum",
            &[&target],
        )
        .map_err(|e| {
            Error::msg(format!(
                "cannot read the columns of the table {table}: {}",
                describe(&e)
            ))
        })?;
    rows.iter()
        .map(|row| row.try_get::<_, String>(0))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::msg(format!("cannot read the catalog: {}", describe(&e))))
}

impl Writer {
    /// Every staging table of this write, whoever made it: they are in the schema that an
    /// unqualified CREATE TABLE uses, the first of the `search_path`.
    fn staging_tables(&self, client: &Session) -> Result<Vec<String>> {
        let rows = client
            .query(
                "SELECT c.relname::text FROM pg_class c \
                     WHERE c.relnamespace = \
                       (SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema()) \
                     AND c.relkind = 'r' AND left(c.relname, length($1)) = $1",
                &[&self.prefix],
            )
            .map_err(|e| Error::msg(format!("cannot list the staging tables: {}", describe(&e))))?;
        Ok(rows.iter().filter_map(|r| r.try_get(0).ok()).collect())
    }

    /// Drops the anchor, then every staging table, in the transaction under way: the anchor's
    /// lock waits for the tasks that are creating theirs, so that the list has them.
    fn drop_staging_in(&self, client: &Session) -> Result<()> {
        let dropped = |table: &str, e: tokio_postgres::Error| {
            Error::msg(format!(
                "cannot drop the staging table {table}: {}",
                describe(&e)
            ))
        };
        let anchor = anchor(&self.prefix);
        client
            .batch_execute(&format!("DROP TABLE IF EXISTS {}", quote(&anchor)))
            .map_err(|e| dropped(&anchor, e))?;
        for table in self.staging_tables(client)? {
            client
                .batch_execute(&format!("DROP TABLE IF EXISTS {}", quote(&table)))
                .map_err(|e| dropped(&table, e))?;
        }
        Ok(())
    }

    /// [`Writer::drop_staging_in`] in a transaction of its own.
    fn drop_staging(&self, client: &Session) -> Result<()> {
        let failed = |e: tokio_postgres::Error| {
            Error::msg(format!("cannot drop the staging tables: {}", describe(&e)))
        };
        client.batch_execute("BEGIN").map_err(failed)?;
        match self.drop_staging_in(client) {
            Ok(()) => client.batch_execute("COMMIT").map_err(failed),
            Err(error) => {
                let _ = client.batch_execute("ROLLBACK");
                Err(error)
            }
        }
    }

    /// Publishes the staged rows and drops every staging table, in one transaction.
    fn publish_staged(&self, client: &Session, messages: &[Staged]) -> Result<()> {
        let failed = |e: tokio_postgres::Error| {
            Error::msg(format!(
                "cannot publish the write to {}: {}",
                self.table,
                describe(&e)
            ))
        };
        let mut statements = vec!["BEGIN".to_string()];
        statements.extend(self.publish(messages));
        for statement in statements {
            client.batch_execute(&statement).map_err(failed)?;
        }
        self.drop_staging_in(client)?;
        client.batch_execute("COMMIT").map_err(failed)
    }

    /// The statements of the commit, in order.
    fn publish(&self, messages: &[Staged]) -> Vec<String> {
        let table = &self.target;
        let mut statements = Vec::new();
        if !self.exists {
            let definitions: Vec<String> = self
                .columns
                .iter()
                // A column that the DataFrame declares not nullable is NOT NULL, as Spark's
                // JDBC source creates it: read back, it is not nullable again.
                .map(|c| {
                    let not_null = if c.nullable { "" } else { " NOT NULL" };
                    format!("{} {}{not_null}", quote(&c.target), c.kind.sql_type())
                })
                .collect();
            // Not IF NOT EXISTS: a table that appeared since the write was planned has columns
            // that nobody checked, and the commit fails rather than write into it.
            statements.push(format!("CREATE TABLE {table} ({})", definitions.join(", ")));
        }
        if self.mode == WriteMode::Truncate {
            statements.push(format!("TRUNCATE {table}"));
        }
        let targets: Vec<String> = self.columns.iter().map(|c| quote(&c.target)).collect();
        let sources: Vec<String> = (0..self.columns.len())
            .map(|i| quote(&format!("c{i}")))
            .collect();
        for staged in messages.iter().filter(|m| m.rows > 0) {
            statements.push(format!(
                "INSERT INTO {table} ({}) SELECT {} FROM {}",
                targets.join(", "),
                sources.join(", "),
                quote(&staged.table)
            ));
        }
        statements
    }
}

impl spark_datasource::Writer for Writer {
    type Message = Staged;
    type DataWriter = DataWriter;

    fn data_writer(&self, task: &TaskContext, _epoch: Option<u64>) -> Result<DataWriter> {
        let client = self.settings.connection.connect("sparkds-write")?;
        let stage = format!(
            "{}{}_{}",
            self.prefix,
            task.partition_id(),
            task.attempt_number()
        );
        let definitions: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{} {}", quote(&format!("c{i}")), c.kind.sql_type()))
            .collect();
        // One transaction, under the anchor's shared lock: an abort that has dropped the
        // anchor has listed every staging table, and this attempt creates none.
        let create = format!(
            "BEGIN; LOCK TABLE {anchor} IN ACCESS SHARE MODE; DROP TABLE IF EXISTS {stage}; \
             CREATE UNLOGGED TABLE {stage} ({}); COMMIT",
            definitions.join(", "),
            anchor = quote(&anchor(&self.prefix)),
            stage = quote(&stage)
        );
        client.batch_execute(&create).map_err(|e| {
            if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) {
                return Error::msg(format!(
                    "the write to {} was committed or aborted before this task attempt \
                     started (its anchor table {} is gone): the attempt stages nothing",
                    self.table,
                    anchor(&self.prefix)
                ));
            }
            Error::msg(format!(
                "cannot create the staging table {stage}: {}",
                describe(&e)
            ))
        })?;
        Ok(DataWriter {
            client,
            copy: format!("COPY {} FROM STDIN (FORMAT binary)", quote(&stage)),
            stage,
            kinds: self.columns.iter().map(|c| c.kind.clone()).collect(),
            names: self.columns.iter().map(|c| c.source.clone()).collect(),
            buffer: Vec::new(),
            rows: 0,
        })
    }

    fn commit(&mut self, _epoch: Option<u64>, messages: Vec<Staged>) -> Result<()> {
        let client = self.settings.connection.connect("sparkds-commit")?;
        let published = self.publish_staged(&client, &messages);
        if published.is_err() {
            // Nothing was published, and Spark does not commit a write twice: what was staged
            // is of no use. Dropped here too, for a host that does not abort after a failed
            // commit; the commit's own error is the one to report.
            let _ = client.batch_execute("ROLLBACK");
            let _ = self.drop_staging(&client);
        }
        published
    }

    fn abort(&mut self, _epoch: Option<u64>, _messages: Vec<Option<Staged>>) -> Result<()> {
        let client = self.settings.connection.connect("sparkds-abort")?;
        self.drop_staging(&client)
    }
}

/// One task attempt of a write: rows encoded into a buffer, sent to its staging table with
/// one COPY per `FLUSH_BYTES`.
pub struct DataWriter {
    client: Session,
    stage: String,
    copy: String,
    kinds: Vec<Kind>,
    /// The DataFrame's names of the columns, for messages.
    names: Vec<String>,
    buffer: Vec<u8>,
    rows: u64,
}

impl DataWriter {
    fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let failed = |e: &dyn std::fmt::Display| {
            Error::msg(format!("cannot stage rows in {}: {e}", self.stage))
        };
        let rows = Bytes::from(std::mem::take(&mut self.buffer));
        let chunks = [
            Bytes::from_static(HEADER),
            rows,
            Bytes::from_static(&TRAILER),
        ];
        self.client
            .copy_in(&self.copy, chunks)
            .map_err(|e| failed(&describe(&e)))?;
        Ok(())
    }
}

impl spark_datasource::DataWriter for DataWriter {
    type Message = Staged;

    fn write(&mut self, batch: RecordBatch) -> Result<()> {
        if batch.num_columns() != self.kinds.len() {
            return Err(Error::msg(format!(
                "a batch of {} columns, where the write has {}",
                batch.num_columns(),
                self.kinds.len()
            )));
        }
        let encoders: Vec<Encoder> = batch
            .columns()
            .iter()
            .zip(&self.kinds)
            .map(|(array, kind)| Encoder::new(array.as_ref(), kind))
            .collect();
        let count = i16::try_from(encoders.len())
            .map_err(|_| Error::msg("a write of more than 32,767 columns, past COPY's rows"))?
            .to_be_bytes();
        for row in 0..batch.num_rows() {
            self.buffer.extend_from_slice(&count);
            for (encoder, name) in encoders.iter().zip(&self.names) {
                encoder.field(row, &mut self.buffer).map_err(|why| {
                    Error::msg(format!("cannot write the column `{name}`: it holds {why}"))
                })?;
            }
        }
        self.rows += batch.num_rows() as u64;
        if self.buffer.len() >= FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn commit(&mut self) -> Result<Staged> {
        self.flush()?;
        Ok(Staged {
            table: self.stage.clone(),
            rows: self.rows,
        })
    }

    fn abort(&mut self) -> Result<()> {
        self.buffer.clear();
        let drop = format!("DROP TABLE IF EXISTS {}", quote(&self.stage));
        self.client.batch_execute(&drop).map_err(|e| {
            Error::msg(format!(
                "cannot drop the staging table {}: {}",
                self.stage,
                describe(&e)
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_name_is_read_as_sql_reads_it_and_nothing_else_is_taken() {
        let parts = |text: &str| identifiers(text);
        assert_eq!(parts("Orders"), Some(vec!["orders".to_string()]));
        assert_eq!(
            parts(r#"sales."Big ""Q"" Orders""#),
            Some(vec!["sales".to_string(), r#"Big "Q" Orders"#.to_string()])
        );
        for refused in [
            "t; DROP TABLE x",
            "(SELECT 1) AS t",
            "a..b",
            "\"open",
            "",
            "1t",
            "a.b.c.d",
        ] {
            assert_eq!(parts(refused), None, "{refused}");
        }
    }
}
