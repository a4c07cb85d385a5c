//! A connection of PostgreSQL's replication protocol in database mode (`replication=database`
//! in the startup message), which the initial snapshot needs: only such a connection runs
//! `CREATE_REPLICATION_SLOT ... (SNAPSHOT 'export')`, which creates the slot and exports the
//! snapshot of its consistent point in one step.
//!
//! The client (tokio-postgres 0.7) has no option for that parameter, and builds the startup
//! message itself. So the connection opens as every other one does (`Connection::
//! connect_with`: TLS as `sslmode` says, the password guard, SCRAM with channel binding), on
//! a stream that adds `replication` `database` to the parameters of the startup message as it
//! passes: the message's format is fixed by the protocol (its length, the version 3.0, then
//! pairs of NUL-terminated strings and a final NUL). Without TLS, the socket carries the
//! startup message; with TLS, the TLS stream does, and the socket only the `SSLRequest` and
//! encrypted records: one wrapper of each adds the parameter to whichever carries it.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use futures_util::TryFutureExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, TlsConnect, TlsStream};
use tokio_postgres::Client;

use super::super::connect::{ConnectError, Connection};
use super::super::guard::{Guarded, Socket};

/// The parameter that asks for a replication connection in database mode.
const PARAMETER: &[u8] = b"replication\0database\0";
/// The protocol version of a startup message, 3.0.
const VERSION_3: u32 = 196_608;
/// The codes of the messages that negotiate encryption before the startup message.
const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;

/// A replication connection, and the connection future that the caller drives.
pub type ReplicationConnection = tokio_postgres::Connection<
    WithParameter<Socket>,
    Guarded<WithParameter<TlsOf<WithParameter<Socket>>>>,
>;

/// The TLS stream of the connector over `S`.
pub type TlsOf<S> =
    <tokio_postgres_rustls::MakeRustlsConnect as tokio_postgres::tls::MakeTlsConnect<S>>::Stream;

/// Opens a replication connection.
///
/// # Errors
/// As `Connection::try_connect`; a role without the `REPLICATION` attribute is refused by
/// the server with its message.
pub async fn connect(
    connection: &Connection,
    application_name: &str,
) -> Result<(Client, ReplicationConnection), ConnectError> {
    connection
        .connect_with(application_name, WithParameter::new, Tls)
        .await
}

/// The TLS connector whose stream adds the parameter.
pub struct Tls<T>(T);

impl<S, T: TlsConnect<S>> TlsConnect<S> for Tls<T>
where
    T::Stream: TlsStream + Unpin,
{
    type Stream = WithParameter<T::Stream>;
    type Error = T::Error;
    type Future = futures_util::future::MapOk<T::Future, fn(T::Stream) -> WithParameter<T::Stream>>;

    fn connect(self, stream: S) -> Self::Future {
        self.0.connect(stream).map_ok(WithParameter::new)
    }
}

/// A stream that adds `replication=database` to the startup message written through it.
pub struct WithParameter<S> {
    inner: S,
    state: State,
}

enum State {
    /// Gathering the next message the client writes: a negotiation or the startup message.
    Gathering(Vec<u8>),
    /// Writing `bytes` from `at`; then `next`.
    Writing {
        bytes: Vec<u8>,
        at: usize,
        next: Box<State>,
    },
    /// After a negotiation request: the server's one-byte answer says what comes next.
    Answering,
    /// The startup message went (or TLS runs above): the bytes pass as they are.
    Through,
}

impl<S> WithParameter<S> {
    pub fn new(inner: S) -> Self {
        WithParameter {
            inner,
            state: State::Gathering(Vec::new()),
        }
    }
}

/// The message that `message` (complete) becomes, and what follows it.
fn rewrite(message: Vec<u8>) -> io::Result<(Vec<u8>, State)> {
    let code = u32::from_be_bytes([message[4], message[5], message[6], message[7]]);
    match code {
        SSL_REQUEST | GSSENC_REQUEST => Ok((message, State::Answering)),
        VERSION_3 => {
            if message.last() != Some(&0) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a startup message without its final NUL",
                ));
            }
            let mut rewritten = message;
            rewritten.pop();
            rewritten.extend_from_slice(PARAMETER);
            rewritten.push(0);
            let length = u32::try_from(rewritten.len()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidData, "a huge startup message")
            })?;
            rewritten[..4].copy_from_slice(&length.to_be_bytes());
            Ok((rewritten, State::Through))
        }
        // Anything else (a cancel request): as it is.
        _ => Ok((message, State::Through)),
    }
}

impl<S: AsyncWrite + Unpin> WithParameter<S> {
    /// Writes what is pending; ready when nothing is.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let State::Writing { bytes, at, .. } = &mut self.state {
            if *at == bytes.len() {
                let State::Writing { next, .. } =
                    std::mem::replace(&mut self.state, State::Through)
                else {
                    unreachable!("matched above");
                };
                self.state = *next;
                continue;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*at..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *at += n;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for WithParameter<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if let State::Answering = this.state {
            // `S`: TLS follows, and the TLS stream carries the startup message; otherwise the
            // startup message comes next, in the clear.
            match buf.filled().get(before) {
                Some(b'S') => this.state = State::Through,
                Some(_) => this.state = State::Gathering(Vec::new()),
                None => {}
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for WithParameter<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        let State::Gathering(gathered) = &mut this.state else {
            return Pin::new(&mut this.inner).poll_write(cx, bytes);
        };
        // Take no more than the message: its length comes first.
        let wanted = if gathered.len() < 4 {
            4 - gathered.len()
        } else {
            let length = u32::from_be_bytes([gathered[0], gathered[1], gathered[2], gathered[3]]);
            (length as usize).saturating_sub(gathered.len())
        };
        let n = wanted.min(bytes.len());
        gathered.extend_from_slice(&bytes[..n]);
        if gathered.len() >= 8 {
            let length = u32::from_be_bytes([gathered[0], gathered[1], gathered[2], gathered[3]]);
            if gathered.len() == length as usize {
                let (message, next) = rewrite(std::mem::take(gathered))?;
                this.state = State::Writing {
                    bytes: message,
                    at: 0,
                    next: Box::new(next),
                };
                // Written now if the socket takes it; else by the flush that follows.
                if this.drain(cx).is_ready() {
                    // An error here comes again from the flush.
                }
            }
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

impl<S: TlsStream + Unpin> TlsStream for WithParameter<S> {
    fn channel_binding(&self) -> ChannelBinding {
        self.inner.channel_binding()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_startup_message_gains_the_parameter_and_others_pass() -> io::Result<()> {
        let mut startup = vec![0, 0, 0, 0];
        startup.extend_from_slice(&VERSION_3.to_be_bytes());
        startup.extend_from_slice(b"user\0ann\0\0");
        let length = startup.len() as u32;
        startup[..4].copy_from_slice(&length.to_be_bytes());
        let (rewritten, next) = rewrite(startup)?;
        assert!(matches!(next, State::Through));
        let mut expected = vec![0, 0, 0, 39];
        expected.extend_from_slice(&VERSION_3.to_be_bytes());
        expected.extend_from_slice(b"user\0ann\0replication\0database\0\0");
        assert_eq!(expected.len(), 39);
        assert_eq!(rewritten, expected);
        let mut request = vec![0, 0, 0, 8];
        request.extend_from_slice(&SSL_REQUEST.to_be_bytes());
        let (same, next) = rewrite(request.clone())?;
        assert_eq!(same, request);
        assert!(matches!(next, State::Answering));
        Ok(())
    }
}
