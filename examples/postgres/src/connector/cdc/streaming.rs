//! A micro-batch's changes streamed from the slot: `START_REPLICATION ... LOGICAL` on a
//! replication connection, read off the connection's stream (`copy_out`).
//!
//! A peek (`pg_logical_slot_peek_binary_changes`) decodes the whole range into a result set
//! before the first row leaves the server; streamed, the server sends each transaction as it
//! decodes its commit, so its decoding and the task's run side by side.
//!
//! - The range: the stream starts at the micro-batch's start (the server skips the
//!   transactions whose commit record starts before it, as `Decoding` does), and stops once
//!   every transaction whose commit record starts before `end` has come: at the first `Begin`
//!   of a later commit (transactions come in commit order), or at a keepalive that says the
//!   server decoded past `end` (it sends one whenever it waits for WAL).
//! - The slot stays where it is: the task answers the server's keepalives with a status that
//!   confirms nothing (position 0), so the server never moves the slot; the driver's commit
//!   advances it.
//! - The end: `CopyDone`, then whatever the server still sends is dropped until it is ready
//!   for a new query, by when it has let go of the slot.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::super::copy_out::{CopyError, CopyOut, Duplex};
use super::pgoutput::Lsn;

/// `pgoutput`'s options, as the peeks pass them (`slot::PLUGIN_OPTIONS`): protocol version 1,
/// the publication, values in binary.
fn options(publication: &str) -> String {
    format!(
        "proto_version '1', publication_names {}, binary 'true'",
        literal(publication)
    )
}

/// The statement that streams `slot`'s changes from `start`.
pub fn statement(slot: &str, start: Lsn, publication: &str) -> String {
    format!(
        "START_REPLICATION SLOT {} LOGICAL {start} ({})",
        identifier(slot),
        options(publication)
    )
}

/// A name as the replication command's grammar quotes it: `"..."`, quotes doubled.
fn identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A string as the replication command's grammar quotes it: `'...'`, quotes doubled (it has
/// no backslash escapes).
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The changes of `[start, end)`, streamed.
pub struct Changes<F> {
    copy: CopyOut<F>,
    end: Lsn,
}

/// What one `CopyData` message of the stream is.
enum Kind {
    /// `XLogData`: a message of `pgoutput` after the header's 25 bytes.
    Data,
    /// A `Begin` of a transaction that commits at or after `end`: everything before is in.
    Past,
    /// A primary keepalive: how far the server decoded, and whether it asks for an answer.
    Keepalive { decoded: Lsn, reply: bool },
}

/// The length of `XLogData`'s header: `w`, the data's start, the server's WAL end, its clock.
const HEADER: usize = 25;

fn be_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
}

fn kind(message: &[u8], end: Lsn) -> Result<Kind, CopyError> {
    let broken = || {
        CopyError::Protocol(format!(
            "a replication message of {} bytes starting with {:?}",
            message.len(),
            message.first().map(|&b| char::from(b))
        ))
    };
    match message.first() {
        Some(b'w') if message.len() > HEADER => {
            let data = &message[HEADER..];
            if data[0] == b'B' {
                let commit = be_u64(&data[1..]).ok_or_else(broken)?;
                if Lsn(commit) >= end {
                    return Ok(Kind::Past);
                }
            }
            Ok(Kind::Data)
        }
        Some(b'k') if message.len() >= 18 => Ok(Kind::Keepalive {
            decoded: Lsn(be_u64(&message[1..]).ok_or_else(broken)?),
            reply: message[17] != 0,
        }),
        _ => Err(broken()),
    }
}

/// A standby status update that confirms nothing: written, flushed and applied at 0, which
/// leaves the slot where it is.
fn status_update(now: SystemTime) -> Vec<u8> {
    // Microseconds since 2000-01-01 UTC, PostgreSQL's epoch.
    const POSTGRES_EPOCH: Duration = Duration::from_secs(946_684_800);
    let clock = now
        .duration_since(UNIX_EPOCH + POSTGRES_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let mut bytes = Vec::with_capacity(39);
    bytes.push(b'd');
    bytes.extend_from_slice(&38u32.to_be_bytes());
    bytes.push(b'r');
    bytes.extend_from_slice(&[0; 24]);
    bytes.extend_from_slice(&clock.to_be_bytes());
    bytes.push(0);
    bytes
}

/// `CopyDone`.
const COPY_DONE: [u8; 5] = [b'c', 0, 0, 0, 4];

impl<F: Fn() -> bool> Changes<F> {
    /// Sends `statement` on `stream`, a replication connection ready for a query.
    ///
    /// # Errors
    /// The connection failed.
    pub async fn start(
        stream: Box<dyn Duplex>,
        statement: &str,
        end: Lsn,
        cancelled: F,
        check: Duration,
    ) -> Result<Changes<F>, CopyError> {
        let copy = CopyOut::start(stream, statement, cancelled, check).await?;
        Ok(Changes { copy, end })
    }

    /// The next message of `pgoutput`, or `None` once every transaction that commits before
    /// `end` has come.
    ///
    /// # Errors
    /// The server's error (the slot used by another session: `CopyError::is_in_use`), a
    /// failed or closed connection, a message the protocol does not have, a cancelled read.
    pub async fn next(&mut self) -> Result<Option<&[u8]>, CopyError> {
        loop {
            if !self.copy.advance().await? {
                return Err(CopyError::Protocol(format!(
                    "the server ended the replication before {}",
                    self.end
                )));
            }
            match kind(self.copy.message(), self.end)? {
                Kind::Data => return Ok(Some(&self.copy.message()[HEADER..])),
                Kind::Past => return Ok(None),
                Kind::Keepalive { decoded, .. } if decoded >= self.end => return Ok(None),
                Kind::Keepalive { reply: true, .. } => {
                    self.copy.send(&status_update(SystemTime::now())).await?;
                }
                Kind::Keepalive { .. } => {}
            }
        }
    }

    /// Ends the replication: `CopyDone`, then what the server still sends is dropped until it
    /// is ready for a new query (it has let go of the slot then); then the session ends.
    ///
    /// # Errors
    /// The server's error, or a failed connection: the changes read are whole all the same,
    /// and the server lets go of the slot when it sees the connection closed.
    pub async fn finish(mut self) -> Result<(), CopyError> {
        self.copy.send(&COPY_DONE).await?;
        while self.copy.advance().await? {}
        self.copy.close().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![tag];
        bytes.extend_from_slice(&u32::try_from(body.len() + 4).unwrap_or(0).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    fn xlog_data(data: &[u8]) -> Vec<u8> {
        let mut body = vec![b'w'];
        body.extend_from_slice(&[0; 24]);
        body.extend_from_slice(data);
        message(b'd', &body)
    }

    fn keepalive(decoded: u64, reply: bool) -> Vec<u8> {
        let mut body = vec![b'k'];
        body.extend_from_slice(&decoded.to_be_bytes());
        body.extend_from_slice(&[0; 8]);
        body.push(u8::from(reply));
        message(b'd', &body)
    }

    fn begin(commit: u64) -> Vec<u8> {
        let mut data = vec![b'B'];
        data.extend_from_slice(&commit.to_be_bytes());
        data.extend_from_slice(&[0; 12]);
        data
    }

    /// Streams from a server that sends `answer` in chunks of `chunk` bytes, then (after the
    /// client's `CopyDone`) `after`; the messages read, and what the server received after
    /// the query.
    fn run(
        answer: Vec<u8>,
        after: Vec<u8>,
        chunk: usize,
        end: u64,
    ) -> (Result<Vec<Vec<u8>>, CopyError>, Vec<u8>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let (client, mut server) = tokio::io::duplex(1 << 16);
            let query = "START_REPLICATION";
            let serve = tokio::spawn(async move {
                let mut received = vec![0; 5 + query.len() + 1];
                server.read_exact(&mut received).await.expect("the query");
                for part in answer.chunks(chunk) {
                    if server.write_all(part).await.is_err() {
                        break;
                    }
                }
                let mut replies = Vec::new();
                // The client's messages, up to its CopyDone.
                loop {
                    let mut head = [0; 5];
                    if server.read_exact(&mut head).await.is_err() {
                        return replies;
                    }
                    let length = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
                    let mut body = vec![0; length - 4];
                    server.read_exact(&mut body).await.expect("a whole message");
                    replies.extend_from_slice(&head);
                    replies.extend_from_slice(&body);
                    if head[0] == b'c' {
                        break;
                    }
                }
                let _ = server.write_all(&after).await;
                let mut rest = Vec::new();
                let _ = server.read_to_end(&mut rest).await;
                replies.extend(rest);
                replies
            });
            let read = async {
                let stream: Box<dyn Duplex> = Box::new(client);
                let mut changes =
                    Changes::start(stream, query, Lsn(end), || false, Duration::from_millis(10))
                        .await?;
                let mut read = Vec::new();
                while let Some(data) = changes.next().await? {
                    read.push(data.to_vec());
                }
                changes.finish().await?;
                Ok(read)
            };
            let result = read.await;
            let received = serve.await.expect("the server");
            (result, received)
        })
    }

    fn ending() -> Vec<u8> {
        [
            message(b'c', b""),
            message(b'C', b"START_STREAMING\0"),
            message(b'Z', b"I"),
        ]
        .concat()
    }

    #[test]
    fn the_stream_stops_at_a_later_commit_or_a_keepalive_past_the_end_and_lets_the_slot_be() {
        let big = vec![7; 300_000];
        let mut answer = message(b'W', &[0, 0, 0]);
        for part in [
            xlog_data(&begin(100)),
            xlog_data(b"I row"),
            keepalive(90, true),
            xlog_data(&big),
            xlog_data(b"C"),
            xlog_data(&begin(200)),
            xlog_data(b"I not read"),
        ] {
            answer.extend(part);
        }
        // After the client's CopyDone, the rest of a transaction still comes, and is dropped.
        let after = [xlog_data(b"C late"), ending()].concat();
        for chunk in [1, 7, 4096, 1 << 20] {
            let (read, received) = run(answer.clone(), after.clone(), chunk, 200);
            let read = read.expect("the changes");
            assert_eq!(read.len(), 4, "chunks of {chunk}");
            assert_eq!(read[0], begin(100));
            assert_eq!(read[1], b"I row");
            assert_eq!(read[2], big);
            assert_eq!(read[3], b"C");
            // One status update (asked for) confirming nothing, CopyDone, then Terminate.
            assert_eq!(received.len(), 39 + 5 + 5, "{received:?}");
            assert_eq!(&received[..6], &[b'd', 0, 0, 0, 38, b'r']);
            assert_eq!(&received[6..30], &[0; 24]);
            assert_eq!(&received[39..], &[b'c', 0, 0, 0, 4, b'X', 0, 0, 0, 4]);
        }
        // A keepalive at or past the end stops it between transactions.
        let mut answer = message(b'W', &[0, 0, 0]);
        answer.extend(
            [
                xlog_data(&begin(100)),
                xlog_data(b"C"),
                keepalive(150, false),
            ]
            .concat(),
        );
        let (read, _) = run(answer, ending(), 64, 150);
        assert_eq!(read.expect("the changes").len(), 2);
    }

    #[test]
    fn an_error_or_a_stream_that_ends_early_fails_the_read() {
        let mut error = Vec::new();
        for (field, value) in [(b'S', "ERROR"), (b'C', "55006"), (b'M', "slot is active")] {
            error.push(field);
            error.extend_from_slice(value.as_bytes());
            error.push(0);
        }
        error.push(0);
        let answer = [message(b'E', &error), message(b'Z', b"I")].concat();
        let failed = run(answer, Vec::new(), 16, 10).0.expect_err("an error");
        assert!(failed.is_in_use(), "{failed}");
        let mut early = message(b'W', &[0, 0, 0]);
        early.extend(keepalive(5, false));
        early.extend(ending());
        let failed = run(early, Vec::new(), 16, 10).0.expect_err("an error");
        assert!(
            failed
                .to_string()
                .contains("ended the replication before 0/A"),
            "{failed}"
        );
        let mut short = message(b'W', &[0, 0, 0]);
        short.extend(message(b'd', b"k12"));
        let failed = run(short, Vec::new(), 16, 10).0.expect_err("an error");
        assert!(
            failed
                .to_string()
                .contains("a replication message of 3 bytes"),
            "{failed}"
        );
    }

    #[test]
    fn names_are_quoted_as_the_replication_grammar_reads_them() {
        assert_eq!(
            statement("my \"slot\"", Lsn(0x1_0000_00A0), "it's"),
            "START_REPLICATION SLOT \"my \"\"slot\"\"\" LOGICAL 1/A0 \
             (proto_version '1', publication_names 'it''s', binary 'true')"
        );
    }
}
