//! Change data capture: the changes of PostgreSQL tables as a stream of micro-batches, read
//! from a logical replication slot with the `pgoutput` plugin.
//!
//! - `pgoutput`: the plugin's messages (transactions, tables, rows).
//! - `changes`: the messages of a micro-batch turned into rows of the stream's schema.
//! - `slot`: the slot on the server: created, checked, peeked and advanced.
//! - `stream`: the stream reader: offsets, micro-batches, commits.
//! - `snapshot`: the initial snapshot, read as of the slot's consistent point
//!   (`replication` opens the connection that exports it).
//!
//! The stream's schema: `_op`, `_table`, `_lsn`, `_seq`, `_commit_time`, `_xid`,
//! `_unchanged`, then for each captured table a struct of its columns named after it (the row
//! after the change) and one named `<table>_before` (the old row, or its key).

mod changes;
mod convert;
mod pgoutput;
mod replication;
mod slot;
mod snapshot;
mod stream;

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Options, Result};
use tokio_postgres::types::Type;

use self::pgoutput::Lsn;
use super::connect::{describe, Session};
use super::sql::quote;
use super::types::{self, Kind};

pub use self::stream::{Offset, Partition, Reader};

/// The options of a stream, besides those of the connection.
pub const OPTIONS: &[&str] = &[
    "slot",
    "publication",
    "tables",
    "maxChangesPerTrigger",
    "initialSnapshot",
    "reconnectTimeout",
    "decodingTasks",
    "decodingTaskBytes",
];

/// How long the driver and a task starting to read wait for a server that is restarting,
/// when `reconnectTimeout` is not set.
const DEFAULT_RECONNECT_SECONDS: u64 = 60;

/// The most tasks that decode a micro-batch, when `decodingTasks` is not set.
const DEFAULT_DECODING_TASKS: u64 = 2;
/// The least WAL of a micro-batch that a task decodes when several do, when
/// `decodingTaskBytes` is not set.
const DEFAULT_DECODING_TASK_BYTES: u64 = 16 << 20;

/// The metadata columns, before the tables' structs.
const METADATA: [&str; 7] = [
    "_op",
    "_table",
    "_lsn",
    "_seq",
    "_commit_time",
    "_xid",
    "_unchanged",
];

/// What a stream captures, as its options give it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Capture {
    /// The replication slot.
    pub slot: String,
    pub publication: Publication,
    /// `maxChangesPerTrigger`.
    pub max_changes: Option<u64>,
    /// `initialSnapshot`.
    pub snapshot: bool,
    /// `reconnectTimeout`, in seconds.
    pub reconnect_seconds: u64,
    /// `decodingTasks`: the most tasks that decode a micro-batch, each a part of its WAL.
    pub decoding_tasks: u64,
    /// `decodingTaskBytes`: the least WAL that each of them decodes.
    pub decoding_task_bytes: u64,
}

/// Which tables the stream captures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Publication {
    /// `publication`: an existing publication, and its tables.
    Named(String),
    /// `tables`: these tables, in a publication named after the slot, created with the slot
    /// when it is missing.
    Tables(Vec<String>),
}

impl Capture {
    /// The stream's options, or `None` for a source without `slot` (a batch read or write).
    ///
    /// # Errors
    /// A slot name that PostgreSQL would refuse, options that do not go together.
    pub fn from_options(options: &Options) -> Result<Option<Capture>> {
        let Some(slot) = options.get("slot") else {
            if let Some(key) = OPTIONS[1..].iter().find(|key| options.get(key).is_some()) {
                return Err(Error::Option(format!(
                    "option `{key}` is an option of change data capture, which needs the option \
                     `slot`: set .option(\"slot\", \"<replication slot>\") with spark.readStream"
                )));
            }
            return Ok(None);
        };
        // PostgreSQL's rule for slot names; it also makes the name safe in SQL text.
        if slot.is_empty()
            || slot.len() > 63
            || !slot
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(Error::Option(format!(
                "option `slot` must be a replication slot name: 1 to 63 lowercase letters, \
                 digits and underscores, got `{slot}`"
            )));
        }
        for key in ["dbtable", "query"] {
            if options.get(key).is_some() {
                return Err(Error::Option(format!(
                    "option `{key}` reads a table or a query, not its changes: with `slot`, \
                     name the tables to capture with `publication` or `tables`"
                )));
            }
        }
        let publication =
            match (options.get("publication"), options.get("tables")) {
                (Some(_), Some(_)) => return Err(Error::Option(
                    "options `publication` and `tables` cannot both be set: capture the tables \
                     of an existing publication with `publication`, or name them with `tables`"
                        .to_string(),
                )),
                (Some(name), None) => Publication::Named(name.trim().to_string()),
                (None, Some(list)) => {
                    let tables: Vec<String> = list
                        .split(',')
                        .map(|t| t.trim().to_string())
                        .filter(|t| !t.is_empty())
                        .collect();
                    if tables.is_empty() {
                        return Err(Error::Option(
                            "option `tables` names no table: give them as `schema.table, ...`"
                                .to_string(),
                        ));
                    }
                    Publication::Tables(tables)
                }
                (None, None) => {
                    return Err(Error::Option(
                        "missing option `publication` or `tables`: capture the tables of a \
                     publication with .option(\"publication\", \"name\"), or name them with \
                     .option(\"tables\", \"public.orders, public.customers\")"
                            .to_string(),
                    ))
                }
            };
        let max_changes = options.optional::<u64>("maxChangesPerTrigger")?;
        if max_changes == Some(0) {
            return Err(Error::Option(
                "option `maxChangesPerTrigger` must be at least 1".to_string(),
            ));
        }
        let decoding_tasks = options.get_or("decodingTasks", DEFAULT_DECODING_TASKS)?;
        let decoding_task_bytes =
            options.get_or("decodingTaskBytes", DEFAULT_DECODING_TASK_BYTES)?;
        if decoding_tasks == 0 || decoding_task_bytes == 0 {
            return Err(Error::Option(format!(
                "options `decodingTasks` and `decodingTaskBytes` must be at least 1, got {} and \
                 {}: set decodingTasks to 1 to decode each micro-batch in one task",
                decoding_tasks, decoding_task_bytes
            )));
        }
        Ok(Some(Capture {
            slot: slot.to_string(),
            publication,
            max_changes,
            snapshot: options.get_or("initialSnapshot", false)?,
            reconnect_seconds: options.get_or("reconnectTimeout", DEFAULT_RECONNECT_SECONDS)?,
            decoding_tasks,
            decoding_task_bytes,
        }))
    }

    /// The name of the publication that the slot decodes with.
    pub fn publication_name(&self) -> &str {
        match &self.publication {
            Publication::Named(name) => name,
            Publication::Tables(_) => &self.slot,
        }
    }

    /// The parts of the WAL from `start` to `end` that tasks decode side by side: as many as
    /// `decodingTasks`, each of `decodingTaskBytes` or more, or the whole range in one.
    pub fn parts(&self, start: Lsn, end: Lsn) -> Vec<(Lsn, Lsn)> {
        let bytes = end.since(start);
        let tasks = (bytes / self.decoding_task_bytes).clamp(1, self.decoding_tasks);
        (0..tasks)
            .map(|i| {
                let at = |i: u64| {
                    Lsn(start.0 + (u128::from(bytes) * u128::from(i) / u128::from(tasks)) as u64)
                };
                (at(i), at(i + 1))
            })
            .collect()
    }
}

/// A captured table, as the stream reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub namespace: String,
    pub name: String,
    /// The published columns, in the table's order.
    pub columns: Vec<Column>,
}

/// A column of a captured table: its Spark type, and its PostgreSQL type as the change
/// stream's relation messages give it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    pub type_oid: u32,
    pub type_modifier: i32,
}

impl Table {
    /// `namespace.name`, as `_table` holds it.
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.namespace, self.name)
    }

    /// The Arrow type of its two struct columns.
    fn struct_type(&self) -> DataType {
        let fields: Fields = self
            .columns
            .iter()
            // Nullable whatever the table says: a key-only old row, an unchanged TOASTed value
            // and a change's missing side are NULL there.
            .map(|c| types::field(&c.name, &c.kind, true))
            .collect();
        DataType::Struct(fields)
    }
}

/// The schema of a stream of the changes of `tables`.
pub fn schema(tables: &[Table]) -> SchemaRef {
    let utc = Some(Arc::from("UTC"));
    let mut fields = vec![
        Field::new("_op", DataType::Utf8, false),
        Field::new("_table", DataType::Utf8, false),
        Field::new("_lsn", DataType::Int64, false),
        Field::new("_seq", DataType::Int64, false),
        Field::new(
            "_commit_time",
            DataType::Timestamp(TimeUnit::Microsecond, utc),
            true,
        ),
        Field::new("_xid", DataType::Int64, true),
        Field::new(
            "_unchanged",
            DataType::List(Arc::new(Field::new("element", DataType::Utf8, true))),
            true,
        ),
    ];
    for table in tables {
        fields.push(Field::new(&table.name, table.struct_type(), true));
        fields.push(Field::new(
            format!("{}_before", table.name),
            table.struct_type(),
            true,
        ));
    }
    Arc::new(Schema::new(fields))
}

/// The tables that `capture` reads, with their published columns, as the server describes
/// them now.
///
/// # Errors
/// A server without `wal_level = logical`, a missing publication or table, a column of a
/// type that no Spark type holds, two tables of one name.
pub fn catalog(client: &Session, capture: &Capture, prefer_ntz: bool) -> Result<Vec<Table>> {
    let failed = |what: &str, e: tokio_postgres::Error| {
        Error::msg(format!("cannot {what}: {}", describe(&e)))
    };
    let level: String = client
        .query_one("SELECT current_setting('wal_level')", &[])
        .and_then(|row| row.try_get(0))
        .map_err(|e| failed("read the server's wal_level", e))?;
    if level != "logical" {
        return Err(Error::msg(format!(
            "the server's wal_level is `{level}`: change data capture needs wal_level = logical \
             (set it in postgresql.conf or with ALTER SYSTEM SET wal_level = logical, then \
             restart the server)"
        )));
    }
    // (namespace, name, published columns or None for all).
    let listed: Vec<(String, String, Option<Vec<String>>)> = match &capture.publication {
        Publication::Named(publication) => {
            let exists = client
                .query_opt(
                    "SELECT 1 FROM pg_publication WHERE pubname = $1",
                    &[publication],
                )
                .map_err(|e| failed("read the publications", e))?
                .is_some();
            if !exists {
                return Err(Error::msg(format!(
                    "the publication `{publication}` (option `publication`) does not exist: \
                     create it with CREATE PUBLICATION {} FOR TABLE ..., or name the tables \
                     with the option `tables`",
                    quote(publication)
                )));
            }
            client
                .query(
                    "SELECT schemaname::text, tablename::text, attnames::text[] \
                     FROM pg_publication_tables WHERE pubname = $1 \
                     ORDER BY schemaname, tablename",
                    &[publication],
                )
                .map_err(|e| failed("read the tables of the publication", e))?
                .iter()
                .map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
                .collect::<Result<_, tokio_postgres::Error>>()
                .map_err(|e| failed("read the tables of the publication", e))?
        }
        Publication::Tables(names) => names
            .iter()
            .map(|name| {
                let row = client
                    .query_opt(
                        "SELECT n.nspname::text, c.relname::text FROM pg_class c \
                         JOIN pg_namespace n ON n.oid = c.relnamespace \
                         WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'p')",
                        &[name],
                    )
                    .map_err(|e| failed(&format!("resolve the table `{name}`"), e))?
                    .ok_or_else(|| {
                        Error::Option(format!(
                            "option `tables` names `{name}`, which is not a table of the \
                             database: give tables as `schema.table` (a part in double quotes \
                             keeps its case)"
                        ))
                    })?;
                Ok((
                    row.get::<_, String>(0),
                    row.get::<_, String>(1),
                    None::<Vec<String>>,
                ))
            })
            .collect::<Result<_>>()?,
    };
    if listed.is_empty() {
        return Err(Error::msg(format!(
            "the publication `{}` has no table: add them with ALTER PUBLICATION ... ADD TABLE",
            capture.publication_name()
        )));
    }
    let tables = listed
        .into_iter()
        .map(|(namespace, name, published)| table(client, namespace, name, published, prefer_ntz))
        .collect::<Result<Vec<_>>>()?;
    check_names(&tables)?;
    Ok(tables)
}

/// A table's columns, from the row description of `SELECT * FROM` it, as the batch reader
/// reads them with the same `preferTimestampNTZ`; only the `published` ones when the
/// publication has a column list.
fn table(
    client: &Session,
    namespace: String,
    name: String,
    published: Option<Vec<String>>,
    prefer_ntz: bool,
) -> Result<Table> {
    let qualified = format!("{}.{}", quote(&namespace), quote(&name));
    let statement = client
        .prepare(&format!("SELECT * FROM {qualified}"))
        .map_err(|e| {
            Error::msg(format!(
                "cannot read the columns of the table `{namespace}.{name}`: {}",
                describe(&e)
            ))
        })?;
    let columns = statement
        .columns()
        .iter()
        .filter(|c| {
            published
                .as_ref()
                .is_none_or(|names| names.iter().any(|n| n == c.name()))
        })
        .map(|c| {
            let kind = types::read_kind(c.name(), c.type_(), c.type_modifier(), prefer_ntz)
                .map_err(|_| {
                    Error::msg(format!(
                        "column `{}` of the table `{namespace}.{name}` has the PostgreSQL type \
                     `{}`, which maps to no Spark type that this data source reads: leave it \
                     out of the publication with a column list (CREATE PUBLICATION ... FOR \
                     TABLE {qualified} (<the other columns>))",
                        c.name(),
                        c.type_().name()
                    ))
                })?;
            Ok(Column {
                name: c.name().to_string(),
                kind,
                type_oid: c.type_().oid(),
                type_modifier: c.type_modifier(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Table {
        namespace,
        name,
        columns,
    })
}

/// Each table names two columns of the stream: they must differ from each other and from the
/// metadata columns.
fn check_names(tables: &[Table]) -> Result<()> {
    let mut seen: Vec<(String, String)> = METADATA
        .iter()
        .map(|m| (m.to_string(), "the stream's metadata".to_string()))
        .collect();
    for table in tables {
        for column in [table.name.clone(), format!("{}_before", table.name)] {
            if let Some((_, owner)) = seen.iter().find(|(name, _)| *name == column) {
                return Err(Error::msg(format!(
                    "the table `{}` would name the column `{column}` of the stream, which {owner} \
                     names already: capture tables of one name with two streams, each with a \
                     slot and a publication of its own",
                    table.qualified()
                )));
            }
            seen.push((column, format!("the table `{}`", table.qualified())));
        }
    }
    Ok(())
}

/// The type of a column as a relation message gives it, for messages: its name when the
/// client knows it.
fn type_name(oid: u32) -> String {
    Type::from_oid(oid)
        .map(|t| t.name().to_string())
        .unwrap_or_else(|| format!("the type of OID {oid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(options: &[(&str, &str)]) -> Result<Option<Capture>> {
        Capture::from_options(&Options::new(options.iter().copied()))
    }

    #[test]
    fn a_slot_name_that_postgresql_refuses_is_refused() {
        let error = capture(&[("slot", "My-Slot"), ("tables", "t")])
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            error.as_deref(),
            Some(
                "option `slot` must be a replication slot name: 1 to 63 lowercase letters, \
                 digits and underscores, got `My-Slot`"
            )
        );
    }

    #[test]
    fn stream_options_without_a_slot_are_refused() {
        let error = capture(&[("tables", "t")]).err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.starts_with("option `tables` is an option of change")));
        assert!(capture(&[("dbtable", "t")]).is_ok_and(|c| c.is_none()));
    }

    #[test]
    fn tables_are_a_comma_separated_list() -> Result<()> {
        let capture = capture(&[("slot", "s"), ("tables", " public.a ,b,")])?;
        let tables = capture.map(|c| c.publication);
        assert!(matches!(tables, Some(Publication::Tables(t)) if t == ["public.a", "b"]));
        Ok(())
    }

    #[test]
    fn a_micro_batch_is_decoded_in_parts_of_at_least_the_bytes_by_at_most_the_tasks() -> Result<()>
    {
        let parts = |options: &[(&str, &str)], start: u64, end: u64| -> Result<Vec<(u64, u64)>> {
            let mut all = vec![("slot", "s"), ("tables", "t")];
            all.extend_from_slice(options);
            let capture = capture(&all)?.ok_or_else(|| Error::msg("a stream"))?;
            Ok(capture
                .parts(Lsn(start), Lsn(end))
                .into_iter()
                .map(|(a, b)| (a.0, b.0))
                .collect())
        };
        let mib = 1 << 20;
        // The defaults: two tasks of 16 MiB or more.
        assert_eq!(parts(&[], 100, 100 + 31 * mib)?, [(100, 100 + 31 * mib)]);
        assert_eq!(
            parts(&[], 100, 100 + 33 * mib)?,
            [
                (100, 100 + 33 * mib / 2),
                (100 + 33 * mib / 2, 100 + 33 * mib)
            ]
        );
        assert_eq!(parts(&[], 0, 1000 * mib)?.len(), 2);
        let three = parts(
            &[("decodingTasks", "3"), ("decodingTaskBytes", "10")],
            0,
            100,
        )?;
        assert_eq!(three, [(0, 33), (33, 66), (66, 100)]);
        // Parts that meet, whatever the numbers, up to the end of the WAL's positions.
        let far = parts(
            &[("decodingTasks", "7"), ("decodingTaskBytes", "1")],
            5,
            u64::MAX,
        )?;
        assert_eq!(far.len(), 7);
        assert_eq!((far[0].0, far[6].1), (5, u64::MAX));
        assert!(far.windows(2).all(|w| w[0].1 == w[1].0 && w[0].0 < w[0].1));
        assert_eq!(parts(&[("decodingTasks", "1")], 0, 1000 * mib)?.len(), 1);
        for (key, value) in [
            ("decodingTasks", "0"),
            ("decodingTaskBytes", "0"),
            ("decodingTasks", "-1"),
        ] {
            assert!(parts(&[(key, value)], 0, 1).is_err(), "{key}={value}");
        }
        Ok(())
    }

    #[test]
    fn two_tables_of_one_name_are_refused() {
        let table = |namespace: &str, name: &str| Table {
            namespace: namespace.into(),
            name: name.into(),
            columns: Vec::new(),
        };
        let error = check_names(&[table("a", "t"), table("b", "t")])
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.starts_with(
            "the table `b.t` would name the column `t` of the stream, which the table `a.t` names"
        )));
        assert!(check_names(&[table("a", "_op")]).is_err());
    }
}
