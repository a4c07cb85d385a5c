//! `COPY ... TO STDOUT` read straight off the connection's stream.
//!
//! PostgreSQL sends a COPY's rows one `CopyData` message each. Through the client, every one
//! is split into a buffer of its own, parsed and handed over a channel: that took about three
//! quarters of a read's time on the client, against a tenth for decoding the rows. Here the
//! connection opens with the client (TLS, authentication and its guard, the bindings of a
//! read), and then the read takes the stream from under it ([`Detach`]) and walks the
//! server's messages in its own buffer, handing each row's bytes to the decoder where they
//! lie.
//!
//! The stream is taken only when the client waits for nothing: after it saw `ReadyForQuery`,
//! the server sends nothing until it is asked, so no message is left in the client's buffer.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::TryFutureExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, TlsConnect, TlsStream};

use super::connect::{is_transient_io, is_transient_state};

/// A connection's stream, once taken from the client.
pub trait Duplex: AsyncRead + AsyncWrite + Unpin + Send {}

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Duplex for T {}

type Take = Box<dyn FnOnce() -> Option<Box<dyn Duplex>> + Send>;

/// Where the outermost stream of a connection is taken from: the socket's, or the TLS
/// stream's when the connection has TLS. Each layer registers itself as it opens, the TLS
/// stream after the socket under it, and a new attempt's socket after the last attempt's.
#[derive(Clone, Default)]
pub struct Detach(Arc<Mutex<Option<Take>>>);

impl Detach {
    /// Wraps `stream` as the connection's outermost stream, until another registers.
    pub fn layer<S: Duplex + 'static>(&self, stream: S) -> Layer<S> {
        let slot = Arc::new(Mutex::new(Some(stream)));
        let taken = Arc::clone(&slot);
        let take: Take = Box::new(move || {
            let stream = lock(&taken).take()?;
            Some(Box::new(stream) as Box<dyn Duplex>)
        });
        *lock(&self.0) = Some(take);
        Layer(slot)
    }

    /// The TLS connector whose streams register here.
    pub fn tls<T>(&self, inner: T) -> DetachTls<T> {
        DetachTls {
            inner,
            detach: self.clone(),
        }
    }

    /// The outermost stream; the client's connection reads and writes nothing after this.
    pub fn take(&self) -> Option<Box<dyn Duplex>> {
        lock(&self.0).take().and_then(|take| take())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stream that [`Detach::take`] can take from under the client.
pub struct Layer<S>(Arc<Mutex<Option<S>>>);

/// What the client's connection sees of a stream that was taken.
fn taken() -> io::Error {
    io::Error::other("the stream was taken by a COPY read")
}

impl<S: AsyncRead + Unpin> AsyncRead for Layer<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match lock(&self.0).as_mut() {
            Some(stream) => Pin::new(stream).poll_read(cx, buf),
            None => Poll::Ready(Err(taken())),
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Layer<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        match lock(&self.0).as_mut() {
            Some(stream) => Pin::new(stream).poll_write(cx, bytes),
            None => Poll::Ready(Err(taken())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match lock(&self.0).as_mut() {
            Some(stream) => Pin::new(stream).poll_flush(cx),
            None => Poll::Ready(Err(taken())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match lock(&self.0).as_mut() {
            Some(stream) => Pin::new(stream).poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}

impl<S: TlsStream + Unpin> TlsStream for Layer<S> {
    fn channel_binding(&self) -> ChannelBinding {
        match lock(&self.0).as_ref() {
            Some(stream) => stream.channel_binding(),
            None => ChannelBinding::none(),
        }
    }
}

/// A TLS connector whose streams register with a [`Detach`].
pub struct DetachTls<T> {
    inner: T,
    detach: Detach,
}

impl<S, T> TlsConnect<S> for DetachTls<T>
where
    T: TlsConnect<S>,
    T::Stream: Duplex + 'static,
    T::Future: Send + 'static,
{
    type Stream = Layer<T::Stream>;
    type Error = T::Error;
    type Future = Pin<Box<dyn std::future::Future<Output = Result<Self::Stream, T::Error>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        let detach = self.detach;
        Box::pin(
            self.inner
                .connect(stream)
                .map_ok(move |stream| detach.layer(stream)),
        )
    }
}

/// The longest message other than `CopyData` that a read takes whole (an error's text, a
/// notice): more than PostgreSQL writes.
const LONGEST_MESSAGE: usize = 1 << 20;

/// What a read asks of the socket at once.
const READ_SIZE: usize = 256 * 1024;

/// Why a COPY read stopped.
#[derive(Debug)]
pub enum CopyError {
    /// The server's error: its SQLSTATE, and its severity, message, and detail and hint where
    /// given.
    Server { code: String, text: String },
    /// The connection failed.
    Io(io::Error),
    /// The server closed the connection.
    Closed,
    /// The server sent what the protocol does not allow here.
    Protocol(String),
    /// Whoever reads asked to stop.
    Cancelled,
}

impl CopyError {
    /// Whether trying again on a new connection may succeed, as `connect::is_transient` says
    /// of the client's errors: the server shuts down or restarts, or the connection broke.
    pub fn is_transient(&self) -> bool {
        match self {
            CopyError::Server { code, .. } => is_transient_state(code),
            CopyError::Io(e) => is_transient_io(e),
            CopyError::Closed => true,
            CopyError::Protocol(_) | CopyError::Cancelled => false,
        }
    }

    /// Whether the server's error is that another session uses the object (a replication
    /// slot), SQLSTATE 55006.
    pub fn is_in_use(&self) -> bool {
        matches!(self, CopyError::Server { code, .. } if code == "55006")
    }
}

impl std::fmt::Display for CopyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // As the client says them (`connect::describe`).
            CopyError::Server { text, .. } => f.write_str(text),
            CopyError::Io(e) => write!(f, "error communicating with the server: {e}"),
            CopyError::Closed => f.write_str("connection closed"),
            CopyError::Protocol(why) => write!(f, "the server broke the protocol: {why}"),
            CopyError::Cancelled => f.write_str("the read was cancelled"),
        }
    }
}

/// A running `COPY ... TO STDOUT` on a stream of its own.
pub struct CopyOut<F> {
    stream: Box<dyn Duplex>,
    /// Whether whoever reads has stopped: asked whenever the server is silent for `check`.
    cancelled: F,
    check: Duration,
    buf: Vec<u8>,
    /// The bytes of `buf` not handled yet.
    start: usize,
    end: usize,
    /// What is left of the `CopyData` message being read.
    data_left: usize,
    /// The server said `CopyOutResponse`.
    copying: bool,
    /// The server's first error, reported once it is ready for a new query.
    error: Option<CopyError>,
    done: bool,
}

impl<F: Fn() -> bool> CopyOut<F> {
    /// Sends `statement` (a `COPY ... TO STDOUT`) as a simple query on `stream`.
    ///
    /// # Errors
    /// The connection failed.
    pub async fn start(
        mut stream: Box<dyn Duplex>,
        statement: &str,
        cancelled: F,
        check: Duration,
    ) -> Result<CopyOut<F>, CopyError> {
        let length = u32::try_from(4 + statement.len() + 1)
            .map_err(|_| CopyError::Protocol("the statement is longer than 4 GiB".into()))?;
        let mut query = Vec::with_capacity(1 + length as usize);
        query.push(b'Q');
        query.extend_from_slice(&length.to_be_bytes());
        query.extend_from_slice(statement.as_bytes());
        query.push(0);
        stream.write_all(&query).await.map_err(CopyError::Io)?;
        stream.flush().await.map_err(CopyError::Io)?;
        Ok(CopyOut {
            stream,
            cancelled,
            check,
            buf: vec![0; READ_SIZE],
            start: 0,
            end: 0,
            data_left: 0,
            copying: false,
            error: None,
            done: false,
        })
    }

    /// The next bytes of the COPY's data, as they lie in the read buffer (a row, or the part
    /// of one that arrived); `None` once the server is ready for a new query.
    ///
    /// # Errors
    /// The server's error, a failed or closed connection, or a cancelled read.
    pub async fn next(&mut self) -> Result<Option<&[u8]>, CopyError> {
        loop {
            if self.data_left > 0 && self.start < self.end {
                let at = self.start;
                let n = self.data_left.min(self.end - at);
                self.start += n;
                self.data_left -= n;
                return Ok(Some(&self.buf[at..at + n]));
            }
            if self.data_left == 0 {
                self.messages()?;
            }
            if self.done {
                return match self.error.take() {
                    Some(error) => Err(error),
                    None if !self.copying => Err(CopyError::Protocol(
                        "the statement sent no COPY data".into(),
                    )),
                    None => Ok(None),
                };
            }
            if self.data_left > 0 && self.start < self.end {
                continue;
            }
            self.fill().await?;
        }
    }

    /// Handles the whole messages at the start of the buffer, up to the next `CopyData`.
    fn messages(&mut self) -> Result<(), CopyError> {
        while !self.done && self.data_left == 0 && self.end - self.start >= 5 {
            let at = self.start;
            let tag = self.buf[at];
            let length = u32::from_be_bytes([
                self.buf[at + 1],
                self.buf[at + 2],
                self.buf[at + 3],
                self.buf[at + 4],
            ]) as usize;
            if length < 4 {
                return Err(CopyError::Protocol(format!("a message of length {length}")));
            }
            if tag == b'd' {
                self.start += 5;
                self.data_left = length - 4;
                if self.data_left == 0 {
                    continue;
                }
                return Ok(());
            }
            if length > LONGEST_MESSAGE {
                return Err(CopyError::Protocol(format!(
                    "a message `{}` of {length} bytes",
                    char::from(tag)
                )));
            }
            if self.end - at < 1 + length {
                return Ok(());
            }
            self.start += 1 + length;
            let body = &self.buf[at + 5..at + 1 + length];
            match tag {
                // CopyOutResponse: the rows follow.
                b'H' => self.copying = true,
                // CopyDone, CommandComplete, a notice, a parameter's new value, a
                // notification: nothing to do.
                b'c' | b'C' | b'N' | b'S' | b'A' => {}
                b'E' => {
                    if self.error.is_none() {
                        self.error = Some(server_error(body));
                    }
                }
                b'Z' => self.done = true,
                other => {
                    return Err(CopyError::Protocol(format!(
                        "a message `{}` during a COPY",
                        char::from(other)
                    )))
                }
            }
        }
        Ok(())
    }

    /// Reads more from the stream, keeping what is not handled yet; every `check` of silence,
    /// asks whether to stop.
    async fn fill(&mut self) -> Result<(), CopyError> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < READ_SIZE / 4 {
            self.buf.resize(self.buf.len() + READ_SIZE, 0);
        }
        loop {
            if (self.cancelled)() {
                return Err(CopyError::Cancelled);
            }
            let read = self.stream.read(&mut self.buf[self.end..]);
            match tokio::time::timeout(self.check, read).await {
                Err(_) => continue,
                Ok(Ok(0)) => return Err(CopyError::Closed),
                Ok(Ok(n)) => {
                    self.end += n;
                    return Ok(());
                }
                Ok(Err(e)) => return Err(CopyError::Io(e)),
            }
        }
    }

    /// Ends the session as the client does (`Terminate`), once the COPY ended.
    pub async fn close(mut self) {
        let _ = self.stream.write_all(&[b'X', 0, 0, 0, 4]).await;
        let _ = self.stream.shutdown().await;
    }
}

/// An `ErrorResponse`, its text as `connect::describe` says the client's: `SEVERITY: message
/// (detail); hint: hint`.
fn server_error(body: &[u8]) -> CopyError {
    let (mut severity, mut message, mut detail, mut hint) =
        ("ERROR".into(), String::new(), None, None);
    let mut code = String::new();
    for field in body.split(|&b| b == 0) {
        let Some((&field_type, value)) = field.split_first() else {
            continue;
        };
        let value = String::from_utf8_lossy(value).into_owned();
        match field_type {
            b'S' => severity = value,
            b'C' => code = value,
            b'M' => message = value,
            b'D' => detail = Some(value),
            b'H' => hint = Some(value),
            _ => {}
        }
    }
    let mut text = format!("{severity}: {message}");
    if let Some(detail) = detail {
        text.push_str(&format!(" ({detail})"));
    }
    if let Some(hint) = hint {
        text.push_str(&format!("; hint: {hint}"));
    }
    CopyError::Server { code, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's message: its tag, its length and its body.
    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![tag];
        bytes.extend_from_slice(&u32::try_from(body.len() + 4).unwrap_or(0).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    fn error_response(code: &str, text: &str) -> Vec<u8> {
        let mut body = Vec::new();
        for (field, value) in [
            (b'S', "ERROR"),
            (b'C', code),
            (b'M', text),
            (b'H', "try again"),
        ] {
            body.push(field);
            body.extend_from_slice(value.as_bytes());
            body.push(0);
        }
        body.push(0);
        message(b'E', &body)
    }

    /// Runs a COPY against a server that answers `answer`, written `chunk` bytes at a time;
    /// the data read, or the error, and what the server received.
    fn run(
        answer: Vec<u8>,
        chunk: usize,
        cancelled: bool,
    ) -> (Result<Vec<u8>, CopyError>, Vec<u8>) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let (client, mut server) = tokio::io::duplex(64);
            let serve = tokio::spawn(async move {
                let mut received = vec![0; 5 + "COPY t".len() + 1];
                server.read_exact(&mut received).await.expect("the query");
                for part in answer.chunks(chunk) {
                    if server.write_all(part).await.is_err() {
                        break;
                    }
                }
                received
            });
            let read = async {
                let stream: Box<dyn Duplex> = Box::new(client);
                let mut copy =
                    CopyOut::start(stream, "COPY t", || cancelled, Duration::from_millis(10))
                        .await?;
                let mut data = Vec::new();
                while let Some(bytes) = copy.next().await? {
                    data.extend_from_slice(bytes);
                }
                Ok(data)
            };
            let result = read.await;
            let received = serve.await.expect("the server");
            (result, received)
        })
    }

    fn copy(rows: &[&[u8]]) -> Vec<u8> {
        let mut bytes = message(b'H', &[1, 0, 0]);
        for row in rows {
            bytes.extend(message(b'N', b"Snotice\0\0"));
            bytes.extend(message(b'd', row));
        }
        bytes.extend(message(b'c', b""));
        bytes.extend(message(b'C', b"COPY 2\0"));
        bytes.extend(message(b'Z', b"I"));
        bytes
    }

    #[test]
    fn rows_arrive_whole_however_the_server_splits_them_and_the_query_is_a_simple_one() {
        let rows: [&[u8]; 3] = [b"first row", b"", &[7; 300]];
        let expected: Vec<u8> = rows.concat();
        for chunk in [1, 3, 7, 64, 10_000] {
            let (data, received) = run(copy(&rows), chunk, false);
            assert_eq!(data.ok(), Some(expected.clone()), "chunks of {chunk}");
            let mut query = vec![b'Q', 0, 0, 0, 11];
            query.extend_from_slice(b"COPY t\0");
            assert_eq!(received, query);
        }
    }

    #[test]
    fn the_servers_error_keeps_its_code_and_reads_as_the_clients() {
        let mut answer = error_response("55006", "replication slot \"s\" is active");
        answer.extend(message(b'Z', b"I"));
        let (data, _) = run(answer, 5, false);
        let error = data.expect_err("an error");
        assert!(error.is_in_use() && !error.is_transient());
        assert_eq!(
            error.to_string(),
            "ERROR: replication slot \"s\" is active; hint: try again"
        );
        // After rows: the error still comes, once the server is ready again.
        let mut answer = message(b'H', &[1, 0, 0]);
        answer.extend(message(b'd', b"row"));
        answer.extend(error_response("57P01", "terminating connection"));
        answer.extend(message(b'Z', b"I"));
        let error = run(answer, 2, false).0.expect_err("an error");
        assert!(error.is_transient(), "{error}");
    }

    #[test]
    fn what_the_protocol_does_not_allow_fails_the_read_never_a_panic() {
        let no_copy = [message(b'C', b"SELECT 1\0"), message(b'Z', b"I")].concat();
        let mut data_row = message(b'H', &[1, 0, 0]);
        data_row.extend(message(b'D', &[0, 0]));
        let short = vec![b'H', 0, 0, 0, 3];
        let huge = vec![b'N', 0xff, 0xff, 0xff, 0xff];
        for (answer, why) in [
            (no_copy, "sent no COPY data"),
            (data_row, "a message `D` during a COPY"),
            (short, "a message of length 3"),
            (huge, "of 4294967295 bytes"),
        ] {
            let error = run(answer, 4, false).0.expect_err("an error").to_string();
            assert!(error.contains(why), "{error}");
        }
        // The server goes away in the middle of a row.
        let mut cut = message(b'H', &[1, 0, 0]);
        cut.extend(&message(b'd', b"a row")[..7]);
        let error = run(cut, 4, false).0.expect_err("an error");
        assert!(matches!(error, CopyError::Closed) && error.is_transient());
    }

    #[test]
    fn a_read_that_whoever_reads_stopped_ends_while_the_server_is_silent() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let error = runtime.block_on(async {
            // A server that never answers, and is kept open.
            let (client, _server) = tokio::io::duplex(64);
            let stream: Box<dyn Duplex> = Box::new(client);
            let mut copy = CopyOut::start(stream, "COPY t", || true, Duration::from_millis(5))
                .await
                .expect("the query fits the pipe");
            copy.next().await.err()
        });
        assert!(matches!(error, Some(CopyError::Cancelled)));
    }
}
