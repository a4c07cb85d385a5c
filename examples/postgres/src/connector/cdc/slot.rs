//! The replication slot on the server: what the driver and the tasks ask of it, and the
//! messages of what can go wrong with it.
//!
//! Every session of a stream that uses the slot (the driver's peek and advance, a task's
//! peek) first takes a transaction-level advisory lock on the slot's name,
//! `pg_advisory_xact_lock(hashtext('sparkds replication slot'), hashtext(<slot>))`: PostgreSQL
//! lets one session at a time use a slot and fails the others at once ("replication slot ...
//! is active"), so the stream's own sessions wait for each other instead (a retried task
//! whose first attempt's peek still runs, the driver's next peek). Another consumer of the
//! slot is an error that names its process.

use std::time::{Duration, Instant};

use spark_datasource::{log, Error, Result};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::PgLsn;

use tokio_postgres::Client;

use super::super::connect::{describe, is_transient, ConnectError, Connection, Session};
use super::super::copy_out::CopyError;
use super::pgoutput::Lsn;
use super::Capture;

/// The statement that takes the slot's lock, `$1` the slot's name.
pub const LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtext('sparkds replication slot'), hashtext($1))";

/// The options of `pgoutput` that every peek passes, `$3` the publication's name: protocol
/// version 1 (whole transactions, at their commit) and values in binary.
pub const PLUGIN_OPTIONS: &str = "'proto_version', '1', 'publication_names', $3, 'binary', 'true'";

/// How long a session waits for another consumer to release the slot before it fails.
const BUSY_WAIT: Duration = Duration::from_secs(10);

/// A failure of an operation on the server.
pub enum Failure {
    /// The server's or the connection's error, with what was being done.
    Server(&'static str, tokio_postgres::Error),
    /// The same, of a COPY read off the connection's stream (`copy_out`).
    Copy(&'static str, CopyError),
    /// A connection that could not be opened, and whether it may open later.
    Unreachable(Error, bool),
    /// An error of the stream, final.
    Stream(Error),
}

impl From<ConnectError> for Failure {
    fn from(failed: ConnectError) -> Self {
        Failure::Unreachable(failed.error, failed.transient)
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Stream(error)
    }
}

impl Failure {
    /// Whether trying again (on a new connection) may succeed: a server that restarts.
    pub fn is_transient(&self) -> bool {
        match self {
            Failure::Server(_, e) => is_transient(e),
            Failure::Copy(_, e) => e.is_transient(),
            Failure::Unreachable(_, transient) => *transient,
            Failure::Stream(_) => false,
        }
    }

    /// Whether another session holds the slot.
    fn is_busy(&self) -> bool {
        match self {
            Failure::Server(_, e) => e.code() == Some(&SqlState::OBJECT_IN_USE),
            Failure::Copy(_, e) => e.is_in_use(),
            _ => false,
        }
    }

    /// The error for Spark.
    pub fn into_error(self, slot: &str) -> Error {
        let busy = self.is_busy();
        let (what, why) = match self {
            Failure::Stream(error) | Failure::Unreachable(error, _) => return error,
            Failure::Copy(_, CopyError::Cancelled) => return Error::Cancelled,
            Failure::Server(what, e) => (what, describe(&e)),
            Failure::Copy(what, e) => (what, e.to_string()),
        };
        if busy {
            return Error::msg(format!(
                "cannot {what}: {why}. Another consumer uses the replication slot `{slot}` (see \
                 pg_replication_slots.active_pid); a slot serves one stream"
            ));
        }
        Error::msg(format!("cannot {what} (replication slot `{slot}`): {why}"))
    }
}

/// What `pg_replication_slots` says of the slot, and the server's flushed LSN.
#[derive(Clone, Debug)]
pub struct Status {
    /// Everything before it is consumed: the plugin skips the transactions that commit
    /// before it.
    pub confirmed: Lsn,
    /// The oldest WAL that the server keeps for the slot (none once invalidated).
    pub restart: Option<Lsn>,
    /// `reserved`, `extended`, `unreserved` or `lost` (WAL removed).
    pub wal_status: Option<String>,
    /// `pg_current_wal_flush_lsn()`.
    pub flushed: Lsn,
}

impl Status {
    /// The WAL that the server keeps for the slot, in bytes.
    pub fn retained(&self) -> u64 {
        self.restart.map_or(0, |r| self.flushed.since(r))
    }
}

fn lsn(value: Option<PgLsn>) -> Option<Lsn> {
    value.map(|v| Lsn(u64::from(v)))
}

/// The slot's status, checked: it exists, is a logical slot of `pgoutput` in this database,
/// and still has the WAL it needs. `None` when it does not exist.
pub async fn status(client: &Client, slot: &str) -> Result<Option<Status>, Failure> {
    let row = client
        .query_one(
            "SELECT pg_current_wal_flush_lsn(), s.slot_name IS NOT NULL, s.slot_type, \
                    s.plugin::text, s.database::text, current_database()::text, \
                    s.confirmed_flush_lsn, s.restart_lsn, s.wal_status \
             FROM (SELECT 1) AS one \
             LEFT JOIN pg_replication_slots AS s ON s.slot_name = $1",
            &[&slot],
        )
        .await
        .map_err(|e| Failure::Server("read the replication slots", e))?;
    let get = |row: &tokio_postgres::Row| -> Result<_, tokio_postgres::Error> {
        Ok((
            row.try_get::<_, PgLsn>(0)?,
            row.try_get::<_, bool>(1)?,
            row.try_get::<_, Option<String>>(2)?,
            row.try_get::<_, Option<String>>(3)?,
            row.try_get::<_, Option<String>>(4)?,
            row.try_get::<_, String>(5)?,
            row.try_get::<_, Option<PgLsn>>(6)?,
            row.try_get::<_, Option<PgLsn>>(7)?,
            row.try_get::<_, Option<String>>(8)?,
        ))
    };
    let (flushed, exists, kind, plugin, database, current, confirmed, restart, wal_status) =
        get(&row).map_err(|e| Failure::Server("read the replication slots", e))?;
    if !exists {
        return Ok(None);
    }
    if kind.as_deref() != Some("logical") {
        return Err(Error::msg(format!(
            "the replication slot `{slot}` is a physical slot: change data capture needs a \
             logical slot (this data source creates one when the slot is missing)"
        ))
        .into());
    }
    if plugin.as_deref() != Some("pgoutput") {
        return Err(Error::msg(format!(
            "the replication slot `{slot}` decodes with the plugin `{}`: this data source \
             reads `pgoutput`; give it another slot (it creates a missing one)",
            plugin.unwrap_or_default()
        ))
        .into());
    }
    if database.as_deref() != Some(current.as_str()) {
        return Err(Error::msg(format!(
            "the replication slot `{slot}` belongs to the database `{}`, not `{current}` (option \
             `url`): a logical slot decodes the changes of its own database",
            database.unwrap_or_default()
        ))
        .into());
    }
    Ok(Some(Status {
        confirmed: lsn(confirmed).unwrap_or_default(),
        restart: lsn(restart),
        wal_status,
        flushed: Lsn(u64::from(flushed)),
    }))
}

/// The status of a slot that must exist and have the WAL from `from` on: what a peek and a
/// commit need.
///
/// # Errors
/// A slot that was dropped, or invalidated, or advanced past `from` by someone else: each a
/// loss of changes that the query has not read, with what to do.
pub async fn usable(client: &Client, slot: &str, from: Lsn) -> Result<Status, Failure> {
    let Some(status) = status(client, slot).await? else {
        return Err(Error::msg(format!(
            "the replication slot `{slot}` does not exist: it was dropped while the query \
             used it, and the changes after {from} that the query has not read are gone. \
             Start the query again with a new checkpointLocation: it creates the slot anew \
             (with initialSnapshot=true, it reads the tables as they are then)"
        ))
        .into());
    };
    if status.wal_status.as_deref() == Some("lost") {
        return Err(Error::msg(format!(
            "the replication slot `{slot}` lost the WAL it kept (wal_status `lost`): the \
             server removed it, past max_slot_wal_keep_size, while the stream was behind, and \
             the changes after {from} that the query has not read are gone. Drop the slot \
             (SELECT pg_drop_replication_slot('{slot}')), then start the query again with a \
             new checkpointLocation (with initialSnapshot=true, it reads the tables as they are \
             then)"
        ))
        .into());
    }
    if status.confirmed > from {
        return Err(Error::msg(format!(
            "the replication slot `{slot}` has consumed the changes up to {}, past {from}, \
             where this micro-batch starts: another consumer used the slot \
             (pg_logical_slot_get_changes, pg_replication_slot_advance, another query), and \
             the changes between are gone for this query. Give each query a slot of its own, \
             and start this one again with a new checkpointLocation",
            status.confirmed
        ))
        .into());
    }
    Ok(status)
}

/// Begins a transaction that holds the slot's lock; the lock ends with it.
pub async fn lock(client: &Client, slot: &str) -> Result<(), Failure> {
    client
        .batch_execute("BEGIN")
        .await
        .map_err(|e| Failure::Server("begin a transaction", e))?;
    client
        .query_one(LOCK, &[&slot])
        .await
        .map_err(|e| Failure::Server("lock the replication slot for the stream", e))?;
    Ok(())
}

/// Commits the transaction of [`lock`].
pub async fn unlock(client: &Client) -> Result<(), Failure> {
    client
        .batch_execute("COMMIT")
        .await
        .map_err(|e| Failure::Server("commit a transaction", e))
}

/// The driver's session, opened when first needed and again after a failure, and the retry
/// of work that fails while the server restarts.
#[derive(Default)]
pub struct Driver {
    session: Option<Session>,
}

impl Driver {
    /// Runs `work` on the driver's session; again on a new connection when it fails because
    /// the server restarts (for up to `reconnectTimeout`), or while another session holds the
    /// slot (for a few seconds).
    ///
    /// # Errors
    /// The error of the last try.
    pub fn run<T>(
        &mut self,
        connection: &Connection,
        capture: &Capture,
        mut work: impl FnMut(&Session) -> Result<T, Failure>,
    ) -> Result<T> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(100);
        loop {
            let failure = match self.session(connection) {
                Ok(session) => match work(session) {
                    Ok(done) => return Ok(done),
                    Err(failure) => {
                        // A failed transaction is aborted: the next try starts afresh.
                        self.session = None;
                        failure
                    }
                },
                Err(failure) => failure,
            };
            let Some(wait) = retry_after(&failure, started, capture, &mut pause) else {
                return Err(failure.into_error(&capture.slot));
            };
            log::warn(&format!(
                "{}; trying again",
                failure.into_error(&capture.slot)
            ));
            std::thread::sleep(wait);
        }
    }

    fn session(&mut self, connection: &Connection) -> Result<&Session, Failure> {
        let session = match self.session.take() {
            Some(session) => session,
            None => connection
                .try_session("sparkds-stream")
                .map_err(Failure::from)?,
        };
        Ok(self.session.insert(session))
    }
}

/// The pause before trying `failure`'s work again, or `None` when it must not be tried
/// again: the policy of [`Driver::run`], for a task that has sent nothing yet.
pub fn retry_after(
    failure: &Failure,
    started: Instant,
    capture: &Capture,
    pause: &mut Duration,
) -> Option<Duration> {
    let wait = if failure.is_busy() {
        BUSY_WAIT
    } else {
        Duration::from_secs(capture.reconnect_seconds)
    };
    if !(failure.is_transient() || failure.is_busy()) || started.elapsed() >= wait {
        return None;
    }
    let now = *pause;
    *pause = (*pause * 2).min(Duration::from_secs(2));
    Some(now)
}

/// Creates the slot (a logical slot of `pgoutput`); its consistent point.
pub async fn create(client: &Client, slot: &str) -> Result<Lsn, Failure> {
    let failed = |e| Failure::Server("create the replication slot", e);
    let row = client
        .query_one(
            "SELECT lsn FROM pg_create_logical_replication_slot($1, 'pgoutput')",
            &[&slot],
        )
        .await
        .map_err(failed)?;
    let lsn: PgLsn = row.try_get(0).map_err(failed)?;
    Ok(Lsn(u64::from(lsn)))
}

/// Advances the slot to `to`: the server may recycle the WAL before it.
pub async fn advance(client: &Client, slot: &str, to: Lsn) -> Result<(), Failure> {
    client
        .query_one(
            "SELECT pg_replication_slot_advance($1, $2)",
            &[&slot, &PgLsn::from(to.0)],
        )
        .await
        .map_err(|e| Failure::Server("advance the replication slot", e))?;
    Ok(())
}
