//! The initial snapshot (`initialSnapshot=true`): the captured tables as of the slot's
//! consistent point, read before the changes that follow it.
//!
//! The slot is created on a replication connection with `CREATE_REPLICATION_SLOT ...
//! (SNAPSHOT 'export')`, which exports the snapshot of the consistent point: every
//! transaction that commits before the point is in it, every one after is in the slot's
//! changes, none in both. The connection stays open, and idle, on the driver until Spark
//! plans past the snapshot's micro-batch: the snapshot lives as long as it does. Each task of
//! that micro-batch reads one table in a `REPEATABLE READ` transaction that imports it
//! (`SET TRANSACTION SNAPSHOT`), with binary COPY.
//!
//! A query that stops before its snapshot's micro-batch is read cannot read it later (the
//! connection closed with the query): the tasks then fail with a message that says so.

use std::cell::Cell;

use arrow_schema::SchemaRef;
use spark_datasource::{BatchSender, Error};
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, SimpleQueryMessage};

use super::super::binary::{BatchSize, CopyDecoder, Decoder, ReadError};
use super::super::connect::Connection;
use super::super::copy_out::{CopyOut, Duplex};
use super::super::projection::Projection;
use super::super::read::CANCEL_CHECK;
use super::super::sql::quote;
use super::super::time::is_utc;
use super::changes::{Meta, Rows};
use super::pgoutput::Lsn;
use super::replication;
use super::slot::Failure;
use super::Table;

/// The snapshot of a slot's consistent point, exported by a connection that stays open.
pub struct Export {
    /// What `SET TRANSACTION SNAPSHOT` takes.
    pub name: String,
    pub consistent_point: Lsn,
    // The client first, then the runtime whose task runs its connection: dropping them closes
    // the connection, which ends the snapshot.
    _client: Client,
    _runtime: tokio::runtime::Runtime,
}

impl Export {
    /// Creates the slot `slot` and exports the snapshot of its consistent point.
    ///
    /// # Errors
    /// The server's: a role without the `REPLICATION` attribute, a slot that exists, no free
    /// replication slot or WAL sender.
    pub fn create(connection: &Connection, slot: &str) -> Result<Export, Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("cannot start the runtime of a connection", e))?;
        let (client, connection) =
            runtime.block_on(replication::connect(connection, "sparkds-snapshot"))?;
        // Runs whenever the runtime waits on it; idle otherwise, as the export needs.
        runtime.spawn(connection);
        // The slot's name is PostgreSQL's kind of name (`Capture::from_options`).
        let command =
            format!("CREATE_REPLICATION_SLOT {slot} LOGICAL pgoutput (SNAPSHOT 'export')");
        let messages = runtime
            .block_on(client.simple_query(&command))
            .map_err(|e| Failure::Server("create the replication slot with a snapshot", e))?;
        let row = messages
            .iter()
            .find_map(|m| match m {
                SimpleQueryMessage::Row(row) => Some(row),
                _ => None,
            })
            .ok_or_else(|| Error::msg("CREATE_REPLICATION_SLOT returned no row"))?;
        let point = row.get("consistent_point").and_then(Lsn::parse);
        let name = row.get("snapshot_name");
        let (Some(consistent_point), Some(name)) = (point, name) else {
            return Err(Error::msg(
                "CREATE_REPLICATION_SLOT returned no consistent point or snapshot name",
            )
            .into());
        };
        Ok(Export {
            name: name.to_string(),
            consistent_point,
            _client: client,
            _runtime: runtime,
        })
    }
}

/// One table of the initial snapshot, read by a task.
pub struct SnapshotRead<'a> {
    /// The exported snapshot.
    pub snapshot: &'a str,
    pub tables: &'a [Table],
    /// The index of the table in `tables`.
    pub table: usize,
    /// The LSN of the rows, `_op` `snapshot`.
    pub lsn: Lsn,
    /// The time zone in which a `timestamp` becomes an instant, as in a batch read.
    pub zone: Option<&'a str>,
    pub schema: &'a SchemaRef,
    pub size: BatchSize,
}

impl SnapshotRead<'_> {
    /// Starts the transaction of the snapshot on `client`, in the read's time zone. The
    /// client then waits for nothing (a batch of statements answers once the server is ready),
    /// so the COPY can take the stream ([`SnapshotRead::read`]).
    pub async fn begin(&self, client: &Client) -> Result<(), Failure> {
        let snapshot = self.snapshot;
        // PostgreSQL's snapshot names are hexadecimal digits and dashes: safe in SQL text.
        if snapshot.is_empty() || !snapshot.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') {
            return Err(Error::msg(format!("`{snapshot}` is not the name of a snapshot")).into());
        }
        let begin = format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '{snapshot}'"
        );
        // PostgreSQL's time zone names are letters, digits, `/`, `_`, `+` and `-`.
        let zone = match self.zone {
            Some(zone)
                if zone
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/_+-".contains(&b)) =>
            {
                format!("; SET LOCAL TimeZone = '{zone}'")
            }
            Some(zone) => {
                return Err(Error::msg(format!("`{zone}` is not the name of a time zone")).into())
            }
            None => String::new(),
        };
        let begin = begin + &zone;
        if let Err(e) = client.batch_execute(&begin).await {
            if e.code() == Some(&SqlState::INVALID_PARAMETER_VALUE)
                || e.code() == Some(&SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE)
            {
                return Err(Error::msg(format!(
                    "the initial snapshot of the stream ({snapshot}) is gone: it lived as long as \
                     the query that created the slot, which stopped before it read the snapshot \
                     whole. Drop the replication slot and start the query again with a new \
                     checkpointLocation"
                ))
                .into());
            }
            return Err(Failure::Server("import the initial snapshot", e));
        }
        Ok(())
    }

    /// Reads the table in the snapshot that [`SnapshotRead::begin`] started, with a COPY on
    /// `stream` (the connection's, taken from the client), each column selected as a batch
    /// read selects it (`Kind::select`), and sends its rows. The transaction, read only, ends
    /// with the connection.
    pub async fn read(
        &self,
        stream: Box<dyn Duplex>,
        out: &BatchSender,
        sent: &Cell<bool>,
    ) -> Result<(), Failure> {
        let (tables, table, lsn) = (self.tables, self.table, self.lsn);
        let (schema, size) = (self.schema, self.size);
        let captured = &tables[table];
        let qualified = captured.qualified();
        // As a batch read selects them (`projection`).
        let utc = self.zone.is_some_and(is_utc);
        let named = captured.columns.iter().map(|c| (c.name.as_str(), &c.kind));
        let fields = Projection::new(named, self.zone);
        let statement = format!(
            "COPY (SELECT {} FROM {}.{}) TO STDOUT (FORMAT binary)",
            fields.select_list(),
            quote(&captured.namespace),
            quote(&captured.name)
        );
        // A cancelled read is not tried again, and ends as `Error::Cancelled` (`into_error`).
        let failed = |e| Failure::Copy("read the initial snapshot", e);
        let mut stream = CopyOut::start(stream, &statement, || out.is_cancelled(), CANCEL_CHECK)
            .await
            .map_err(failed)?;
        let mut copy = CopyDecoder::new(size);
        let mut decoders = fields.decoders(captured.columns.iter().map(|c| &c.kind));
        let mut rows = Rows::new(schema.clone(), tables, size, utc);
        let mut seq = 0i64;
        let value_error = |error: ReadError| -> Failure {
            match error {
                ReadError::Value { column, why, .. } => Error::msg(format!(
                    "column `{}` of the table `{qualified}` holds {why}",
                    captured.columns[fields.column(column)].name
                )),
                ReadError::Format(why) => Error::msg(format!(
                    "reading the snapshot of `{qualified}` failed: {why}"
                )),
            }
            .into()
        };
        let mut send = |decoders: &mut [Decoder], count: usize| -> Result<(), Failure> {
            let arrays = fields.finish(decoders);
            let meta = Meta {
                op: "snapshot",
                table: captured,
                lsn,
                seq,
                commit_time: None,
                xid: None,
            };
            let batch = rows.snapshot(table, &meta, arrays)?;
            seq += i64::try_from(count).unwrap_or(i64::MAX);
            out.send(batch)?;
            sent.set(true);
            Ok(())
        };
        while let Some(chunk) = stream.next().await.map_err(failed)? {
            let mut input: &[u8] = chunk;
            while copy.decode(input, &mut decoders).map_err(value_error)? {
                let count = copy.take_batch();
                send(&mut decoders, count)?;
                input = &[];
            }
        }
        stream.close().await;
        copy.finish().map_err(value_error)?;
        let count = copy.take_batch();
        if count > 0 {
            send(&mut decoders, count)?;
        }
        Ok(())
    }
}
