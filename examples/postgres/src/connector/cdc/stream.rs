//! The stream reader: offsets are LSNs, a micro-batch peeks at the slot, a commit advances it.
//!
//! - `initial_offset`: the slot's consistent point, creating the slot (and, for `tables`, its
//!   publication) when it is missing. A query restarted from its checkpoint never asks, so a
//!   slot dropped under it is an error, never a new slot that would skip changes.
//! - `latest_offset(start)`: what the server has flushed, when a transaction of the
//!   publication commits between `start` and there (the driver peeks at the slot until it
//!   finds one); with `maxChangesPerTrigger`, the end of the last of the first whole
//!   transactions after `start` whose changes fit it (the driver peeks at them all); or
//!   `start` when there is none.
//! - `stream_partitions(start, end)`: the micro-batch in parts by WAL position
//!   (`Capture::parts`: one, or up to `decodingTasks` of `decodingTaskBytes` or more), which
//!   tasks decode side by side.
//! - `read`: peeks at the slot up to the part's end and keeps the transactions that commit in
//!   the part; a part after the first peeks at a temporary copy of the slot advanced to where
//!   it starts. Peeking consumes nothing, so a micro-batch read again returns the same rows.
//! - `commit(end)`: advances the slot to `end`, and the server may recycle the WAL before it.
//!
//! An offset is JSON: `{"lsn":"0/16B3748"}`, in PostgreSQL's notation: a transaction is
//! before it when its commit record starts before it (the end of a transaction's commit
//! record, with `maxChangesPerTrigger`; else what the server had flushed); `snapshot` while
//! the initial snapshot is still to be read; and, as information that plays no part in the
//! position, `lagBytes` (WAL that the server has flushed past it, when it was planned) and
//! `retainedBytes` (WAL that the server kept for the slot).

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_schema::SchemaRef;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use spark_datasource::{
    log, BatchSender, Batches, Error, Producer, Result, StreamRead, StreamReader, TaskContext,
};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{PgLsn, ToSql};
use tokio_postgres::Client;

use super::super::binary::{BatchSize, CopyDecoder, Decoder, ReadError};
use super::super::connect::{describe, Connection, Session};
use super::super::copy_out::{CopyOut, Detach, Duplex};
use super::super::read::{drive, Driven, CANCEL_CHECK};
use super::super::sql::quote;
use super::super::time::{is_utc, local_zone};
use super::super::types::Kind;
use super::super::Source;
use super::changes::{Decoding, Rows};
use super::convert::Converter;
use super::pgoutput::Lsn;
use super::slot::{self, Driver, Failure, PLUGIN_OPTIONS};
use super::snapshot::{Export, SnapshotRead};
use super::{catalog, schema, Capture, Publication, Table};

/// A position in the stream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offset {
    /// Every transaction whose commit record starts before it is before the offset.
    #[serde(with = "lsn_text")]
    pub lsn: Lsn,
    /// The exported snapshot to read the tables with, before the changes from `lsn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// Information: the WAL that the server had flushed past `lsn` when it was planned.
    #[serde(rename = "lagBytes", default, skip_serializing_if = "Option::is_none")]
    pub lag_bytes: Option<u64>,
    /// Information: the WAL that the server kept for the slot then.
    #[serde(
        rename = "retainedBytes",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub retained_bytes: Option<u64>,
}

impl Offset {
    fn at(lsn: Lsn) -> Offset {
        Offset {
            lsn,
            snapshot: None,
            lag_bytes: None,
            retained_bytes: None,
        }
    }
}

/// LSNs as PostgreSQL writes them, in offsets.
mod lsn_text {
    use super::*;

    pub fn serialize<S: Serializer>(lsn: &Lsn, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&lsn.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Lsn, D::Error> {
        let text = String::deserialize(deserializer)?;
        Lsn::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("`{text}` is not an LSN such as 0/16B3748"))
        })
    }
}

/// What a task of a micro-batch reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Partition {
    /// The transactions that commit in `[start, end)`, of the micro-batch that starts at
    /// `from`: the slot's own changes when `start` is `from`, else those of a copy of the slot
    /// advanced to `start` (a part of the micro-batch that another task decodes beside).
    Changes {
        #[serde(with = "lsn_text")]
        start: Lsn,
        #[serde(with = "lsn_text")]
        end: Lsn,
        #[serde(with = "lsn_text")]
        from: Lsn,
    },
    /// One table of the initial snapshot, as of `lsn`.
    Snapshot {
        snapshot: String,
        table: usize,
        #[serde(with = "lsn_text")]
        lsn: Lsn,
    },
}

/// The stream reader, sent to the executors as bytes.
#[derive(Serialize, Deserialize)]
pub struct Reader {
    connection: Connection,
    batch_size: BatchSize,
    capture: Capture,
    tables: Vec<Table>,
    /// The server's insert LSN just before the catalog was read.
    #[serde(with = "lsn_text")]
    schema_lsn: Lsn,
    /// The time zone in which a `timestamp` becomes an instant (the driver's, as in a batch
    /// read), when one does.
    zone: Option<String>,
    /// The driver's state; the executors have none.
    #[serde(skip)]
    driver: Mutex<DriverState>,
}

#[derive(Default)]
struct DriverState {
    driver: Driver,
    /// What `initial_offset` returned, which Spark may ask again.
    initial: Option<Offset>,
    /// The messages that the last peek of `latest_offset` decoded: the next peeks ask for
    /// about as many, plus the budget.
    messages: i64,
    /// The connection that exported the initial snapshot, open until its micro-batch is read.
    export: Option<Export>,
}

impl StreamRead for Source {
    type Reader = Reader;

    fn stream_reader(&self, requested: SchemaRef) -> Result<Reader> {
        let capture = self.capture.clone().ok_or_else(|| {
            Error::Option(
                "a streaming read of PostgreSQL reads the changes of tables from a replication \
                 slot: set the options `slot` and `publication` (or `tables`)"
                    .to_string(),
            )
        })?;
        let session = self.settings.connection.connect("sparkds-schema")?;
        let failed = |what: &str, e: tokio_postgres::Error| {
            Error::msg(format!("cannot {what}: {}", describe(&e)))
        };
        // Before the catalog: a change committed before this LSN was made with the columns
        // the catalog shows, or earlier ones (see `changes`).
        let schema_lsn: PgLsn = session
            .query_one("SELECT pg_current_wal_insert_lsn()", &[])
            .and_then(|row| row.try_get(0))
            .map_err(|e| failed("read the server's WAL position", e))?;
        let tables = catalog(&session, &capture, self.settings.prefer_ntz)?;
        if let Publication::Tables(_) = &capture.publication {
            check_own_publication(&session, &capture, &tables)?;
        }
        let ours = schema(&tables);
        if ours.fields() != requested.fields() {
            return Err(Error::msg(
                "the schema of the stream is not the one Spark asks for: the captured tables \
                 changed while the query started (start it again), or .schema(...) gave \
                 another one (leave it out)",
            ));
        }
        Ok(Reader {
            connection: self.settings.connection.clone(),
            batch_size: self.settings.batch_size,
            capture,
            zone: tables
                .iter()
                .any(|t| t.columns.iter().any(|c| c.kind.is_local()))
                .then(local_zone),
            tables,
            schema_lsn: Lsn(u64::from(schema_lsn)),
            driver: Mutex::default(),
        })
    }
}

/// The publication that `tables` names after the slot, when it exists: it must publish those
/// tables, no more, no fewer.
fn check_own_publication(session: &Session, capture: &Capture, tables: &[Table]) -> Result<()> {
    let failed = |e: tokio_postgres::Error| {
        Error::msg(format!(
            "cannot read the tables of the publication `{}`: {}",
            capture.slot,
            describe(&e)
        ))
    };
    let exists = session
        .query_opt(
            "SELECT 1 FROM pg_publication WHERE pubname = $1",
            &[&capture.slot],
        )
        .map_err(failed)?
        .is_some();
    if !exists {
        return Ok(());
    }
    let mut published: Vec<String> = session
        .query(
            "SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = $1",
            &[&capture.slot],
        )
        .map_err(failed)?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(failed)?;
    let mut wanted: Vec<String> = tables.iter().map(Table::qualified).collect();
    published.sort();
    wanted.sort();
    if published != wanted {
        return Err(Error::Option(format!(
            "option `tables` names {}, but the publication `{}` that the stream created for \
             its slot publishes {}: give the same tables, or capture the publication's with \
             the option `publication`",
            wanted.join(", "),
            capture.slot,
            published.join(", ")
        )));
    }
    Ok(())
}

impl Reader {
    fn schema(&self) -> SchemaRef {
        schema(&self.tables)
    }

    fn state(&self) -> MutexGuard<'_, DriverState> {
        // A poisoned lock means a call panicked; its state is still whole.
        self.driver.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The statement that creates the publication of `tables`.
    fn create_publication(&self) -> String {
        let tables: Vec<String> = self
            .tables
            .iter()
            .map(|t| format!("{}.{}", quote(&t.namespace), quote(&t.name)))
            .collect();
        format!(
            "CREATE PUBLICATION {} FOR TABLE {}",
            quote(&self.capture.slot),
            tables.join(", ")
        )
    }

    /// Creates the publication of `tables` when it is missing.
    async fn ensure_publication(&self, client: &Client) -> Result<(), Failure> {
        if let Publication::Tables(_) = &self.capture.publication {
            let exists = client
                .query_opt(
                    "SELECT 1 FROM pg_publication WHERE pubname = $1",
                    &[&self.capture.slot],
                )
                .await
                .map_err(|e| Failure::Server("read the publications", e))?
                .is_some();
            if !exists {
                client
                    .batch_execute(&self.create_publication())
                    .await
                    .map_err(|e| Failure::Server("create the publication of `tables`", e))?;
            }
        }
        Ok(())
    }

    /// What the slot holds after `start`: the end of the micro-batch to plan, or `None`.
    async fn pending(
        &self,
        client: &Client,
        start: Lsn,
        hint: &mut i64,
    ) -> Result<(Option<Lsn>, slot::Status), Failure> {
        let capture = &self.capture;
        slot::lock(client, &capture.slot).await?;
        let status = slot::usable(client, &capture.slot, start).await?;
        if capture.max_changes.is_none() {
            let end = self.pending_to_flushed(client, start, &status).await?;
            slot::unlock(client).await?;
            return Ok((end, status));
        }
        // One row per transaction decoded (`xid`), with its end (the commit message's LSN),
        // its changes and its messages; then the ends of those after `start` that fit the
        // budget, whole (the first one always).
        let statement = format!(
            "WITH transactions AS ( \
               SELECT max(lsn) FILTER (WHERE get_byte(data, 0) = 67) AS end_lsn, \
                      count(*) FILTER (WHERE get_byte(data, 0) IN (73, 85, 68, 84)) AS changes, \
                      count(*) AS messages \
               FROM pg_logical_slot_peek_binary_changes($1, NULL, $2, {PLUGIN_OPTIONS}) \
               GROUP BY xid \
             ), pending AS ( \
               SELECT end_lsn, sum(changes) OVER w AS total, row_number() OVER w AS n \
               FROM transactions WHERE end_lsn > $4 WINDOW w AS (ORDER BY end_lsn) \
             ) \
             SELECT (SELECT coalesce(sum(messages), 0) FROM transactions)::bigint, \
                    (SELECT max(end_lsn) FROM pending \
                     WHERE $5::bigint IS NULL OR total <= $5 OR n = 1), \
                    (SELECT max(end_lsn) FROM pending)"
        );
        let max = capture
            .max_changes
            .map(|m| i64::try_from(m).unwrap_or(i64::MAX));
        // With a budget, the peek stops after the transaction in which it decoded `limit`
        // messages: enough for the transactions before `start` (the slot lags a micro-batch)
        // and the budget, or else it asks again for more.
        let mut limit: Option<i32> = max.map(|m| {
            let wanted = hint
                .saturating_add(m.saturating_mul(2))
                .saturating_add(1000);
            i32::try_from(wanted).unwrap_or(i32::MAX)
        });
        loop {
            let params: [&(dyn ToSql + Sync); 5] = [
                &capture.slot,
                &limit,
                &capture.publication_name(),
                &PgLsn::from(start.0),
                &max,
            ];
            let row = client
                .query_one(&statement, &params)
                .await
                .map_err(|e| Failure::Server("peek at the replication slot", e))?;
            let failed = |e| Failure::Server("peek at the replication slot", e);
            let messages: i64 = row.try_get(0).map_err(failed)?;
            let admitted: Option<PgLsn> = row.try_get(1).map_err(failed)?;
            let last: Option<PgLsn> = row.try_get(2).map_err(failed)?;
            let cut = limit.is_some_and(|l| messages >= i64::from(l));
            if cut && admitted == last && l_can_grow(limit) {
                // Stopped by `limit` before the budget was reached: ask for more.
                limit = limit.map(|l| l.saturating_mul(4));
                continue;
            }
            *hint = messages;
            slot::unlock(client).await?;
            return Ok((admitted.map(|l| Lsn(u64::from(l))), status));
        }
    }

    /// Without a budget, a micro-batch reads every transaction that commits from `start` to
    /// what the server has flushed, whose end is then the micro-batch's: the driver decodes
    /// no more than it takes to find one transaction of the publication that commits after
    /// `start` (the task decodes them all once, and the commit's advance once more, without
    /// the output). `None` when there is none.
    ///
    /// An end that is not a transaction's keeps the same rule: a transaction belongs to the
    /// micro-batch whose range holds the start of its commit record. The task's peek up to
    /// `end` decodes every record that starts before it (waiting for the rest of one that
    /// the server has not flushed whole yet), and the advance to `end` skips exactly those.
    async fn pending_to_flushed(
        &self,
        client: &Client,
        start: Lsn,
        status: &slot::Status,
    ) -> Result<Option<Lsn>, Failure> {
        let capture = &self.capture;
        let end = status.flushed;
        if end <= start {
            return Ok(None);
        }
        // A commit message of pgoutput: 'C', its flags, then the LSN of the commit record.
        let statement = format!(
            "SELECT count(*) FILTER (WHERE get_byte(data, 0) = 67 AND \
            ('x' || encode(substring(data FROM 3 FOR 8), 'hex'))::bit(64)::bigint \
            >= $4)::bigint, \
            count(*)::bigint \
            FROM pg_logical_slot_peek_binary_changes($1, $2, $5, {PLUGIN_OPTIONS})"
        );
        let start_lsn = i64::try_from(start.0).unwrap_or(i64::MAX);
        // The peek stops once it returned `limit` messages (after the transaction that
        // reaches it): the transactions before `start`, which the slot holds until the
        // previous micro-batch's commit, come first.
        let mut limit: i32 = 1000;
        loop {
            let params: [&(dyn ToSql + Sync); 5] = [
                &capture.slot,
                &PgLsn::from(end.0),
                &capture.publication_name(),
                &start_lsn,
                &limit,
            ];
            let failed = |e| Failure::Server("peek at the replication slot", e);
            let row = client
                .query_one(&statement, &params)
                .await
                .map_err(failed)?;
            let after: i64 = row.try_get(0).map_err(failed)?;
            let messages: i64 = row.try_get(1).map_err(failed)?;
            if after > 0 {
                return Ok(Some(end));
            }
            if messages < i64::from(limit) || limit == i32::MAX {
                return Ok(None);
            }
            limit = limit.saturating_mul(8);
        }
    }

    /// Starts the stream: the slot's consistent point, creating what is missing.
    fn start(&self, session: &Session) -> Result<(Offset, Option<Export>), Failure> {
        let capture = &self.capture;
        let client = session.client();
        session.wait(self.ensure_publication(client))?;
        if let Some(status) = session.wait(slot::status(client, &capture.slot))? {
            if capture.snapshot {
                return Err(Error::Option(format!(
                    "option `initialSnapshot` reads the tables as of the consistent point of \
                     the slot that the query creates, but the replication slot `{}` exists \
                     already: drop it (SELECT pg_drop_replication_slot('{}')), or leave \
                     initialSnapshot out to stream from its position",
                    capture.slot, capture.slot
                ))
                .into());
            }
            return Ok((Offset::at(status.confirmed), None));
        }
        if capture.snapshot {
            // On a connection of its own, which the snapshot needs open.
            let export = Export::create(&self.connection, &capture.slot)?;
            let mut offset = Offset::at(export.consistent_point);
            offset.snapshot = Some(export.name.clone());
            return Ok((offset, Some(export)));
        }
        let point = session.wait(slot::create(client, &capture.slot))?;
        Ok((Offset::at(point), None))
    }
}

/// Whether a peek's message limit can still grow.
fn l_can_grow(limit: Option<i32>) -> bool {
    limit.is_some_and(|l| l < i32::MAX)
}

impl StreamReader for Reader {
    type Offset = Offset;
    type Partition = Partition;

    fn initial_offset(&self) -> Result<Offset> {
        let mut state = self.state();
        if let Some(offset) = &state.initial {
            return Ok(offset.clone());
        }
        let DriverState { driver, .. } = &mut *state;
        let (offset, export) = driver.run(&self.connection, &self.capture, |session| {
            self.start(session)
        })?;
        log::info(&format!(
            "replication slot `{}`: the stream starts at {}{}",
            self.capture.slot,
            offset.lsn,
            if export.is_some() {
                ", after the initial snapshot"
            } else {
                ""
            }
        ));
        state.export = export;
        state.initial = Some(offset.clone());
        Ok(offset)
    }

    fn latest_offset(&mut self, start: Offset) -> Result<Offset> {
        if start.snapshot.is_some() {
            // The first micro-batch reads the snapshot alone; the changes come after it.
            return Ok(Offset::at(start.lsn));
        }
        let mut state = self.state();
        // Spark plans past the snapshot once it has read it: its export may end.
        state.export = None;
        let DriverState {
            driver, messages, ..
        } = &mut *state;
        let (end, status) = driver.run(&self.connection, &self.capture, |session| {
            session.wait(self.pending(session.client(), start.lsn, messages))
        })?;
        let Some(end) = end else {
            return Ok(start);
        };
        let offset = Offset {
            lsn: end,
            snapshot: None,
            lag_bytes: Some(status.flushed.since(end)),
            retained_bytes: Some(status.retained()),
        };
        log::info(&format!(
            "replication slot `{}`: micro-batch from {} to {end}; the server has flushed {} \
             bytes of WAL past it and keeps {} bytes for the slot",
            self.capture.slot,
            start.lsn,
            status.flushed.since(end),
            status.retained()
        ));
        Ok(offset)
    }

    fn partitions(&self, start: Offset, end: Offset) -> Result<Vec<Partition>> {
        if end.lsn < start.lsn {
            return Err(Error::msg(format!(
                "a micro-batch from {} back to {}: the offsets of the checkpoint do not come \
                 from this stream",
                start.lsn, end.lsn
            )));
        }
        if let Some(snapshot) = start.snapshot {
            return Ok((0..self.tables.len())
                .map(|table| Partition::Snapshot {
                    snapshot: snapshot.clone(),
                    table,
                    lsn: start.lsn,
                })
                .collect());
        }
        if end.lsn == start.lsn {
            return Ok(Vec::new());
        }
        Ok(self
            .capture
            .parts(start.lsn, end.lsn)
            .into_iter()
            .map(|(part_start, part_end)| Partition::Changes {
                start: part_start,
                end: part_end,
                from: start.lsn,
            })
            .collect())
    }

    fn read(&self, partition: Partition, task: &TaskContext) -> Result<Batches> {
        let schema = self.schema();
        let read = Task {
            connection: self.connection.clone(),
            capture: self.capture.clone(),
            tables: self.tables.clone(),
            schema_lsn: self.schema_lsn,
            zone: self.zone.clone(),
            schema: schema.clone(),
            size: self.batch_size,
            partition,
        };
        let batches = Producer::spawn(task, move |out| read.run(out))?;
        Ok(Batches::new(schema, batches))
    }

    fn commit(&mut self, end: Offset) -> Result<()> {
        if end.snapshot.is_some() {
            return Ok(());
        }
        let slot_name = self.capture.slot.clone();
        let mut state = self.state();
        state.export = None;
        state
            .driver
            .run(&self.connection, &self.capture, |session| {
                session.wait(async {
                    let client = session.client();
                    slot::lock(client, &slot_name).await?;
                    let Some(status) = slot::status(client, &slot_name).await? else {
                        return Err(slot::usable(client, &slot_name, end.lsn)
                            .await
                            .err()
                            .unwrap_or_else(|| Error::msg("the slot vanished").into()));
                    };
                    if status.confirmed < end.lsn {
                        slot::usable(client, &slot_name, end.lsn).await?;
                        slot::advance(client, &slot_name, end.lsn).await?;
                    }
                    slot::unlock(client).await
                })
            })
    }
}

/// What the thread of a task needs.
struct Task {
    connection: Connection,
    capture: Capture,
    tables: Vec<Table>,
    schema_lsn: Lsn,
    zone: Option<String>,
    schema: SchemaRef,
    size: BatchSize,
    partition: Partition,
}

impl Task {
    /// Reads the partition on a runtime of this thread; tries again while the server
    /// restarts, as long as no batch has left.
    fn run(self, out: &BatchSender) -> Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("cannot start the runtime of a read", e))?;
        runtime.block_on(async {
            let started = Instant::now();
            let mut pause = Duration::from_millis(100);
            let sent = Cell::new(false);
            loop {
                let failure = match self.attempt(out, &sent).await {
                    Ok(()) => return Ok(()),
                    Err(failure) => failure,
                };
                let retry = if sent.get() {
                    None
                } else {
                    slot::retry_after(&failure, started, &self.capture, &mut pause)
                };
                let Some(wait) = retry else {
                    return Err(failure.into_error(&self.capture.slot));
                };
                tokio::time::sleep(wait).await;
            }
        })
    }

    /// One try at the partition: the client opens the connection and starts the read (the
    /// snapshot's transaction, or the slot's lock); then a COPY reads off the connection's
    /// stream (`copy_out`): the table in the snapshot, or the slot's peek.
    async fn attempt(&self, out: &BatchSender, sent: &Cell<bool>) -> Result<(), Failure> {
        let detach = Detach::default();
        let (client, mut connection) = self
            .connection
            .try_connect_detachable("sparkds-stream-read", &detach)
            .await?;
        let read = self.read();
        let work = async {
            match &read {
                Read::Snapshot(snapshot) => snapshot.begin(&client).await.map(|()| None),
                Read::Changes { start, from, .. } if start == from => {
                    self.lock(&client, *start).await.map(|()| None)
                }
                Read::Changes { start, from, .. } => self.copy_slot(&client, *from, *start).await,
            }
        };
        let copy = match drive(&mut connection, work, out).await {
            Ok(copy) => copy,
            Err(Driven::Failed(failure)) => return Err(failure),
            Err(Driven::Connection(e)) => return Err(Failure::Server("read the changes", e)),
            Err(Driven::Closed) => {
                return Err(Failure::Unreachable(
                    Error::msg("the server closed the connection while the task read the changes"),
                    true,
                ))
            }
        };
        // The client waits for nothing now (see `lock`, `copy_slot` and `SnapshotRead::begin`):
        // the stream is the COPY's.
        drop((client, connection));
        let stream = detach.take().ok_or_else(|| {
            Failure::Stream(Error::msg(
                "reading the changes failed: the connection's stream cannot be taken",
            ))
        })?;
        match read {
            Read::Snapshot(snapshot) => snapshot.read(stream, out, sent).await,
            Read::Changes { start, end, .. } => {
                let slot_name = copy.as_deref().unwrap_or(&self.capture.slot);
                self.changes(stream, slot_name, start, end, out, sent).await
            }
        }
    }

    /// What the partition reads.
    fn read(&self) -> Read<'_> {
        match &self.partition {
            Partition::Changes { start, end, from } => Read::Changes {
                start: *start,
                end: *end,
                from: *from,
            },
            Partition::Snapshot {
                snapshot,
                table,
                lsn,
            } => Read::Snapshot(SnapshotRead {
                snapshot,
                tables: &self.tables,
                table: *table,
                lsn: *lsn,
                zone: self.zone.as_deref(),
                schema: &self.schema,
                size: self.size,
            }),
        }
    }

    /// Takes the slot's lock in a transaction that lasts until the connection closes, checks
    /// that the slot still holds the changes after `start`, and waits until the server is
    /// ready for the COPY: an empty query's answer comes after every message before it.
    async fn lock(&self, client: &Client, start: Lsn) -> Result<(), Failure> {
        let slot_name = &self.capture.slot;
        slot::lock(client, slot_name).await?;
        slot::usable(client, slot_name, start).await?;
        client
            .batch_execute("")
            .await
            .map_err(|e| Failure::Server("peek at the replication slot", e))
    }

    /// For a part of the micro-batch from `from` that starts at `start`: checks that the slot
    /// still holds the micro-batch, copies it into a temporary slot of this session (dropped
    /// with it), advances the copy to `start`, and waits until the server is ready for the
    /// COPY; the copy's name. The slot's lock is not taken: a copy reads the slot without
    /// using it, and the part that peeks at the slot itself holds the lock meanwhile.
    ///
    /// With no free slot for the copy (`max_replication_slots`), the part waits for the lock
    /// and peeks at the slot itself, decoding the micro-batch from its start (`None`).
    async fn copy_slot(
        &self,
        client: &Client,
        from: Lsn,
        start: Lsn,
    ) -> Result<Option<String>, Failure> {
        const WHAT: &str = "copy the replication slot for a part of the micro-batch";
        let slot_name = &self.capture.slot;
        slot::usable(client, slot_name, from).await?;
        let copied = client
            .query_one(
                "SELECT slot_name::text FROM pg_copy_logical_replication_slot($1, \
                 'sparkds_part_' || pg_backend_pid(), true)",
                &[slot_name],
            )
            .await
            .and_then(|row| row.try_get::<_, String>(0));
        let copy = match copied {
            Ok(copy) => copy,
            Err(e) if e.code() == Some(&SqlState::CONFIGURATION_LIMIT_EXCEEDED) => {
                log::warn(&format!(
                    "cannot {WHAT} (replication slot `{slot_name}`): {}. The part from {start} \
                     peeks at the slot itself, in turn with the stream's other sessions, \
                     decoding the micro-batch from its start: raise max_replication_slots \
                     (each task that decodes a part after the first uses a temporary copy of \
                     the slot while it runs), or set decodingTasks to 1",
                    describe(&e).trim_end_matches('.')
                ));
                return self.lock(client, start).await.map(|()| None);
            }
            Err(e) => return Err(Failure::Server(WHAT, e)),
        };
        slot::advance(client, &copy, start).await?;
        client
            .batch_execute("")
            .await
            .map_err(|e| Failure::Server(WHAT, e))?;
        Ok(Some(copy))
    }

    /// Peeks at the slot up to `end`, with a COPY on `stream`, and sends the rows of the
    /// transactions after `start`. The slot's lock ends with the connection.
    async fn changes(
        &self,
        stream: Box<dyn Duplex>,
        slot_name: &str,
        start: Lsn,
        end: Lsn,
        out: &BatchSender,
        sent: &Cell<bool>,
    ) -> Result<(), Failure> {
        const WHAT: &str = "peek at the replication slot";
        // COPY takes no parameters: the slot's name, an LSN and the publication's name, as
        // string literals (`E''`, whose escapes hold whatever standard_conforming_strings is).
        let statement = format!(
            "COPY (SELECT data FROM pg_logical_slot_peek_binary_changes({}, '{end}'::pg_lsn, \
             NULL, {})) TO STDOUT (FORMAT binary)",
            string_literal(slot_name),
            PLUGIN_OPTIONS.replace("$3", &string_literal(self.capture.publication_name())),
        );
        // A cancelled read is not tried again, and ends as `Error::Cancelled` (`into_error`).
        let failed = |e| Failure::Copy(WHAT, e);
        let mut copy = CopyOut::start(stream, &statement, || out.is_cancelled(), CANCEL_CHECK)
            .await
            .map_err(failed)?;
        let mut decoding = Decoding::new(&self.tables, start, end, self.schema_lsn);
        let utc = self.zone.as_deref().is_some_and(is_utc);
        let mut rows = Rows::new(self.schema.clone(), &self.tables, self.size, utc);
        let mut converter = Converter::new(&self.connection, self.zone.as_deref());
        // The peek's one `bytea` column, decoded from COPY's binary rows a thousand at a time.
        let mut copied = CopyDecoder::new(BatchSize {
            rows: 1024,
            bytes: 1 << 24,
        });
        let mut data = [Decoder::new(&Kind::Bytes)];
        let format = |e: ReadError| {
            let why = match e {
                ReadError::Format(why) => why,
                ReadError::Value { why, .. } => why,
            };
            Failure::Stream(Error::msg(format!("reading the changes failed: {why}")))
        };
        let messages = async |data: &mut [Decoder; 1],
                              decoding: &mut Decoding,
                              rows: &mut Rows,
                              converter: &mut Converter|
               -> Result<(), Failure> {
            let array = data[0].finish();
            let Some(messages) = array.as_binary_opt::<i32>() else {
                return Err(Failure::Stream(Error::msg(
                    "reading the changes failed: the peek's column is not bytes",
                )));
            };
            for message in messages.iter().flatten() {
                decoding.message(message, rows)?;
                if rows.full() {
                    out.send(rows.finish(converter).await?)?;
                    sent.set(true);
                }
            }
            Ok(())
        };
        while let Some(chunk) = copy.next().await.map_err(failed)? {
            let mut input = chunk;
            loop {
                match copied.decode(input, &mut data) {
                    Ok(true) => {
                        copied.take_batch();
                        messages(&mut data, &mut decoding, &mut rows, &mut converter).await?;
                    }
                    Ok(false) => break,
                    Err(e) => return Err(format(e)),
                }
                input = &[];
            }
        }
        copy.close().await;
        copied.finish().map_err(format)?;
        copied.take_batch();
        messages(&mut data, &mut decoding, &mut rows, &mut converter).await?;
        decoding.finish()?;
        if !rows.is_empty() {
            out.send(rows.finish(&mut converter).await?)?;
            sent.set(true);
        }
        Ok(())
    }
}

/// What a task reads: a table in the initial snapshot, or the changes between two offsets.
enum Read<'a> {
    Snapshot(SnapshotRead<'a>),
    Changes { start: Lsn, end: Lsn, from: Lsn },
}

/// `text` as a string literal that reads back as it is whatever `standard_conforming_strings`
/// says: `E'...'`, its backslashes and quotes doubled.
fn string_literal(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_the_peeks_copy_are_escape_strings_that_read_back_as_they_are() {
        assert_eq!(string_literal("sparkds_orders"), "E'sparkds_orders'");
        // A quote doubled, a backslash doubled: the same text with standard_conforming_strings
        // on or off, and nothing past the literal.
        assert_eq!(string_literal(r"o'k\'); DROP"), r"E'o''k\\''); DROP'");
    }

    #[test]
    fn offsets_are_json_with_the_lsn_as_postgresql_writes_it() -> Result<(), serde_json::Error> {
        let offset = Offset {
            lsn: Lsn(0x16B3748),
            snapshot: None,
            lag_bytes: Some(12),
            retained_bytes: None,
        };
        let text = serde_json::to_string(&offset)?;
        assert_eq!(text, r#"{"lsn":"0/16B3748","lagBytes":12}"#);
        assert_eq!(serde_json::from_str::<Offset>(&text)?, offset);
        assert!(serde_json::from_str::<Offset>(r#"{"lsn":"16B3748"}"#).is_err());
        Ok(())
    }
}
