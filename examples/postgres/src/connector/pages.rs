//! Reads partitioned by the table's pages (`partitionColumn` `ctid`), in one snapshot.
//!
//! A read partitioned in ranges of a column scans the whole table for each range, unless the
//! column has an index. A range of pages (`ctid >= '(first,0)' AND ctid < '(next,0)'`, a TID
//! range scan) has the server read each page once. But each task reads in a transaction of its
//! own, and a row updated between two tasks' starts may move to another task's pages, to be
//! read twice or not at all. So the driver exports a snapshot when it plans the partitions
//! (`pg_export_snapshot`), every task reads in it (`SET TRANSACTION SNAPSHOT`), and the read
//! sees the table as one statement at planning would.
//!
//! A snapshot can be imported only while the transaction that exported it is open, and the
//! driver may close its reader right after planning. So a thread of the library (the keeper)
//! holds that transaction until every partition has been read to its end (each task's
//! transaction sends `NOTIFY <channel>, '<partition>'`, which the server delivers when it
//! commits, to a second session of the keeper, which listens), or until `snapshotTimeout`
//! passes, for partitions that never run (a `LIMIT` that the first ones met, a cancelled
//! query). A task that starts after that fails with how to fix it, as do the tasks of a read
//! planned by a process that then ended: the Python bridge's, since Spark plans a Python data
//! source in a Python worker that ends once it planned.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::mpsc;
use std::task::Poll;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result};
use tokio_postgres::AsyncMessage;

use super::connect::{describe, ClientConnection, Connection};

/// How long the keeper holds a snapshot for tasks that have not read theirs, by default.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 600;

/// What a task of a read partitioned by pages reads: its pages, in the read's snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRange {
    /// The partition's index, which its task notifies once it has read it.
    pub index: usize,
    /// The first page, and the one after the last (`None`: open at that end).
    pub first: Option<u64>,
    pub next: Option<u64>,
    /// The snapshot that the driver exported, and the channel that its keeper listens on.
    snapshot: String,
    channel: String,
}

impl PageRange {
    /// The condition on `ctid` of the partition's pages.
    pub fn condition(&self) -> Option<String> {
        let first = self.first.map(|p| format!("ctid >= '({p},0)'::tid"));
        let next = self.next.map(|p| format!("ctid < '({p},0)'::tid"));
        match (first, next) {
            (Some(first), Some(next)) => Some(format!("{first} AND {next}")),
            (first, next) => first.or(next),
        }
    }

    /// `statement` (a COPY) in the read's snapshot, with the notice that the partition was
    /// read, which the server delivers when the transaction commits.
    pub fn in_snapshot(&self, statement: &str) -> String {
        // Both are the server's and the keeper's own words (hex digits, dashes, underscores):
        // anything else is dropped rather than escaped.
        let plain = |s: &str, also: char| -> String {
            s.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == also)
                .collect()
        };
        format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '{}'; \
             {statement}; NOTIFY {}, '{}'; COMMIT",
            plain(&self.snapshot, '-'),
            plain(&self.channel, '_'),
            self.index
        )
    }

    /// The error of a task whose snapshot is gone (the server's `invalid snapshot identifier`),
    /// else `None`.
    pub fn gone(&self, server: &str, relation: &str, timeout: u64) -> Option<Error> {
        server.contains("invalid snapshot identifier").then(|| {
            Error::msg(format!(
                "cannot read {relation}: the snapshot of its pages (`partitionColumn` `ctid`), \
                 which the driver exported when it planned the read, is gone: the task started \
                 more than `snapshotTimeout` ({timeout} s) after planning, or the process \
                 that planned it ended (through the Python bridge, Spark plans in a Python \
                 worker that ends once it planned: read by pages with the JVM plugin). Run the \
                 query again, raise `snapshotTimeout`, or partition on a column's ranges \
                 ({server})"
            ))
        })
    }
}

/// Exports a snapshot of `table` for `partitions` tasks, which a keeper thread holds for at
/// most `timeout`, and plans its pages: as many ranges as `partitions`, fewer for a table of
/// fewer pages, the first open below and the last above.
///
/// # Errors
/// `table` is not a table or a materialized view, or the server failed.
pub fn plan(
    connection: &Connection,
    table: &str,
    partitions: usize,
    timeout: Duration,
) -> Result<Vec<PageRange>> {
    let (sent, planned) = mpsc::sync_channel(1);
    let connection = connection.clone();
    let table = table.to_string();
    std::thread::Builder::new()
        .name("sparkds-snapshot".into())
        .spawn(move || keep(&connection, &table, partitions, timeout, &sent))
        .map_err(|e| Error::io("cannot start the thread that holds a read's snapshot", e))?;
    let (snapshot, channel, pages) = planned
        .recv()
        .map_err(|_| Error::msg("the thread that holds a read's snapshot stopped"))??;
    let count = partitions.clamp(1, usize::try_from(pages.max(1)).unwrap_or(usize::MAX));
    let stride = pages.div_ceil(count as u64).max(1);
    Ok((0..count)
        .map(|index| PageRange {
            index,
            first: (index > 0).then(|| index as u64 * stride),
            next: (index + 1 < count).then(|| (index as u64 + 1) * stride),
            snapshot: snapshot.clone(),
            channel: channel.clone(),
        })
        .collect())
}

type Planned = Result<(String, String, u64)>;

/// The keeper: opens the two sessions, exports the snapshot, sends what the planning needs,
/// then holds the snapshot until the partitions were read or `timeout` passed.
fn keep(
    connection: &Connection,
    table: &str,
    partitions: usize,
    timeout: Duration,
    sent: &mpsc::SyncSender<Planned>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = sent.send(Err(Error::io("cannot start the runtime of a snapshot", e)));
            return;
        }
    };
    runtime.block_on(async {
        let opened = async {
            let (exporter, exporting) = connection.connect_async("sparkds-read-snapshot").await?;
            let (listener, listening) = connection.connect_async("sparkds-read-snapshot").await?;
            Ok::<_, Error>((exporter, exporting, listener, listening))
        };
        let (exporter, mut exporting, listener, mut listening) = match opened.await {
            Ok(opened) => opened,
            Err(e) => {
                let _ = sent.send(Err(e));
                return;
            }
        };
        let export = async {
            let failed = |e: tokio_postgres::Error| {
                Error::msg(format!(
                    "cannot export the snapshot of a read of `dbtable` {table} by its pages: {}",
                    describe(&e)
                ))
            };
            exporter
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await
                .map_err(failed)?;
            let row = exporter
                .query_opt(
                    "SELECT pg_export_snapshot(), c.relkind::text, \
                     pg_relation_size(c.oid) / current_setting('block_size')::int8 \
                     FROM pg_class c WHERE c.oid = to_regclass($1)",
                    &[&table],
                )
                .await
                .map_err(failed)?;
            let (snapshot, kind, pages): (String, String, i64) = match row {
                Some(row) => (row.get(0), row.get(1), row.get(2)),
                None => ("".into(), "".into(), 0),
            };
            if kind != "r" && kind != "m" {
                let what = match kind.as_str() {
                    "" => "names no table (a view, a subquery or a mistyped name?)",
                    "p" => "is a partitioned table, whose pages are its partitions'",
                    "v" => "is a view, which has no pages",
                    "f" => "is a foreign table, which has no pages here",
                    _ => "is no table",
                };
                return Err(Error::Option(format!(
                    "option `partitionColumn` `ctid` partitions a table by its pages, but \
                     `dbtable` {table} {what}: partition on a column's ranges \
                     (`partitionColumn`, `lowerBound`, `upperBound`), or name a table"
                )));
            }
            // Unique on the server while the snapshot lives.
            let channel =
                format!("sparkds_snapshot_{}", snapshot.replace('-', "_")).to_ascii_lowercase();
            listener
                .batch_execute(&format!("LISTEN {channel}"))
                .await
                .map_err(failed)?;
            Ok((snapshot, channel, pages.max(0) as u64))
        };
        let planned = drive_both(export, &mut exporting, &mut listening).await;
        let failed = planned.is_err();
        if sent.send(planned).is_err() || failed {
            return;
        }
        hold(&mut exporting, &mut listening, partitions, timeout).await;
        // Dropping the sessions ends the transaction, and the snapshot with it.
        drop((exporter, listener));
    });
}

/// Runs `work` while both connections are driven; a connection that ends fails it.
async fn drive_both<T>(
    work: impl Future<Output = Result<T>>,
    a: &mut ClientConnection,
    b: &mut ClientConnection,
) -> Result<T> {
    let mut work = pin!(work);
    poll_fn(|cx| {
        for connection in [&mut *a, &mut *b] {
            if let Poll::Ready(ended) = Pin::new(connection).poll(cx) {
                let why = ended.err().map(|e| describe(&e)).unwrap_or_default();
                return Poll::Ready(Err(Error::msg(format!(
                    "the session that exports a read's snapshot ended: {why}"
                ))));
            }
        }
        work.as_mut().poll(cx)
    })
    .await
}

/// Waits until every partition of `partitions` was notified on `listening`, `timeout` passed,
/// or a session ended.
async fn hold(
    exporting: &mut ClientConnection,
    listening: &mut ClientConnection,
    partitions: usize,
    timeout: Duration,
) {
    let mut read = vec![false; partitions];
    let mut left = partitions;
    let mut deadline = pin!(tokio::time::sleep(timeout));
    poll_fn(|cx| {
        if deadline.as_mut().poll(cx).is_ready() || Pin::new(&mut *exporting).poll(cx).is_ready() {
            return Poll::Ready(());
        }
        loop {
            match listening.poll_message(cx) {
                Poll::Ready(Some(Ok(AsyncMessage::Notification(n)))) => {
                    if let Some(seen) = n
                        .payload()
                        .parse()
                        .ok()
                        .and_then(|i: usize| read.get_mut(i))
                    {
                        if !*seen {
                            *seen = true;
                            left -= 1;
                        }
                    }
                    if left == 0 {
                        return Poll::Ready(());
                    }
                }
                Poll::Ready(Some(Ok(_))) => {}
                Poll::Ready(_) => return Poll::Ready(()),
                Poll::Pending => return Poll::Pending,
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(first: Option<u64>, next: Option<u64>) -> PageRange {
        PageRange {
            index: 2,
            first,
            next,
            snapshot: "00000003-000000C2-1".into(),
            channel: "sparkds_snapshot_00000003_000000c2_1".into(),
        }
    }

    #[test]
    fn a_range_of_pages_is_a_condition_on_ctid_open_at_the_ends() {
        assert_eq!(
            range(Some(4), Some(8)).condition().as_deref(),
            Some("ctid >= '(4,0)'::tid AND ctid < '(8,0)'::tid")
        );
        assert_eq!(
            range(None, Some(8)).condition().as_deref(),
            Some("ctid < '(8,0)'::tid")
        );
        assert_eq!(range(None, None).condition(), None);
    }

    #[test]
    fn a_task_reads_in_the_snapshot_and_says_so_when_it_commits() {
        assert_eq!(
            range(None, None).in_snapshot("COPY (SELECT 1) TO STDOUT"),
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT \
             '00000003-000000C2-1'; COPY (SELECT 1) TO STDOUT; \
             NOTIFY sparkds_snapshot_00000003_000000c2_1, '2'; COMMIT"
        );
        let gone = range(None, None).gone(
            "ERROR: invalid snapshot identifier: \"00000003-000000C2-1\"",
            "`dbtable` t",
            600,
        );
        let message = gone.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("more than `snapshotTimeout` (600 s)"),
            "{message}"
        );
    }
}
