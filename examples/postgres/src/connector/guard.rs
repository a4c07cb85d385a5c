//! What a connection lets the server do while it authenticates: the connector reads the
//! server's messages itself, as they arrive and before the client acts on them, and ends the
//! connection before the client answers anything it should not:
//!
//! - a request for the password in clear text or as MD5 on a connection without TLS, which
//!   whoever answers in the server's place reads or replays (`allowPasswordWithoutTls`);
//! - on a TLS connection, any authentication but SCRAM-SHA-256-PLUS, whose proof is bound to
//!   the certificate that this client saw: a server in the middle, with a certificate of its
//!   own, cannot relay it to the real one (`channelBinding`, `require` by default);
//! - SCRAM with fewer iterations than `minScramIterations` (4096, PostgreSQL's default): the
//!   server chooses the count, and whoever impersonates it chooses a low one to make the proof
//!   it receives cheap to crack;
//! - a request for a password when there is none to give, with a message that says how to give
//!   one (the client would fail with "password missing").
//!
//! Without TLS, the guard is on the socket ([`Socket`]). With TLS, the socket sees encrypted
//! records after the server accepted the `SSLRequest`, so the guard moves to the TLS stream
//! ([`GuardedTls`]), where the messages are in clear. It stops looking once authentication
//! ends (`AuthenticationOk`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::config::ChannelBinding as ClientBinding;
use tokio_postgres::tls::{ChannelBinding, TlsConnect, TlsStream};

/// What a connection without TLS says when the server asks for the password as it is.
pub const REFUSED: &str = "the server asks for the password in clear text or as MD5 over a \
                           connection without TLS, where whoever answers in its place reads it: \
                           the password was not sent. Connect with TLS (option `sslmode`), let \
                           the server use scram-sha-256, or set the option \
                           `allowPasswordWithoutTls` to true";

/// What a connection says when the server asks for a password and none was given.
pub const NO_PASSWORD: &str = "the server asks for a password, and none was given: set the \
                               option `password` (or put it in `url`), or set the option \
                               `passwordFromEnvironment` to true to take PGPASSWORD or the \
                               password file (PGPASSFILE, ~/.pgpass) of each machine that \
                               connects, as libpq does";

/// The iteration count of SCRAM-SHA-256 that PostgreSQL uses by default, the least that a
/// connection accepts unless `minScramIterations` says otherwise.
pub const DEFAULT_MIN_ITERATIONS: u64 = 4096;

/// The longest authentication request that the guard reads whole: far more than SCRAM's
/// messages take (a list of mechanisms, a nonce, a salt and a count).
const LONGEST_REQUEST: usize = 65_536;

/// What the guard lets the server do while the connection authenticates.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// Answer a request for the password in clear text or as MD5.
    pub clear_password: bool,
    /// Accept no authentication but SCRAM-SHA-256-PLUS.
    pub channel_binding: bool,
    /// The fewest iterations of SCRAM-SHA-256 that the server may ask for.
    pub min_iterations: u64,
    /// Whether there is a password to answer with.
    pub has_password: bool,
}

/// Where the guard is in the start of the protocol.
enum Guard {
    /// Nothing written yet on a socket: the first message says whether TLS is asked for.
    Start {
        plain: Policy,
        refused_tls: Arc<AtomicBool>,
    },
    /// After an `SSLRequest`: the server's one-byte answer comes next.
    Answer {
        plain: Policy,
        refused_tls: Arc<AtomicBool>,
    },
    /// Reading the server's messages until authentication ends.
    Authenticating(Reader),
    /// Authentication over, or TLS on this socket (the TLS stream has a guard of its own).
    Off,
}

/// The server's messages, read as they arrive: `message` holds the current one's bytes (its
/// type and length, and all of it for an authentication request), `skip` the bytes of another
/// message still to pass.
struct Reader {
    policy: Policy,
    message: Vec<u8>,
    skip: usize,
    /// Whether the server offered SCRAM-SHA-256-PLUS.
    offered_binding: bool,
}

/// The `SSLRequest` message: its length and code.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 4, 210, 22, 47];

impl Guard {
    fn reading(policy: Policy) -> Guard {
        Guard::Authenticating(Reader {
            policy,
            message: Vec::new(),
            skip: 0,
            offered_binding: false,
        })
    }

    /// Sees what the client wrote: the first message says whether TLS is asked for.
    fn wrote(&mut self, bytes: &[u8]) {
        if let Guard::Start { plain, refused_tls } = self {
            *self = if bytes.starts_with(&SSL_REQUEST) {
                Guard::Answer {
                    plain: *plain,
                    refused_tls: refused_tls.clone(),
                }
            } else {
                Guard::reading(*plain)
            };
        }
    }

    /// Sees what the server sent: an error for a request the policy refuses.
    fn read(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        if let Guard::Answer { plain, refused_tls } = self {
            let Some((&answer, rest)) = bytes.split_first() else {
                return Ok(());
            };
            *self = if answer == b'S' {
                Guard::Off
            } else {
                refused_tls.store(true, Ordering::Relaxed);
                Guard::reading(*plain)
            };
            bytes = rest;
        }
        let Guard::Authenticating(reader) = self else {
            return Ok(());
        };
        if reader.read(bytes)? {
            *self = Guard::Off;
        }
        Ok(())
    }
}

impl Reader {
    /// Reads `bytes`; true once authentication is over.
    fn read(&mut self, mut bytes: &[u8]) -> io::Result<bool> {
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            // A message: its type and its length (itself included), then, for an
            // authentication request (`R`), all of it; the others are passed.
            if self.message.len() < 5 {
                let n = (5 - self.message.len()).min(bytes.len());
                self.message.extend_from_slice(&bytes[..n]);
                bytes = &bytes[n..];
                if self.message.len() < 5 {
                    continue;
                }
            }
            let length = [1, 2, 3, 4].map(|i| self.message[i]);
            let total = 1 + usize::try_from(i32::from_be_bytes(length))
                .unwrap_or(0)
                .max(4);
            if self.message[0] != b'R' {
                self.skip = total - 5;
                self.message.clear();
                continue;
            }
            if total > LONGEST_REQUEST {
                return Err(refused(
                    "the server sent an authentication request longer than 64 KiB",
                ));
            }
            let n = (total - self.message.len()).min(bytes.len());
            self.message.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.message.len() < total {
                continue;
            }
            let over = self.inspect()?;
            self.message.clear();
            if over {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Checks the authentication request in `message` (whole); true when it says that
    /// authentication is over.
    fn inspect(&mut self) -> io::Result<bool> {
        let Some(code) = self.message.get(5..9) else {
            return Ok(false);
        };
        let code = i32::from_be_bytes([code[0], code[1], code[2], code[3]]);
        let body = &self.message[9..];
        let policy = self.policy;
        match code {
            0 if policy.channel_binding && !self.offered_binding => Err(unbound(
                "let the connection in without asking for a password (trust, or a client \
                 certificate)",
            )),
            0 => Ok(true),
            3 | 5 if policy.channel_binding => {
                Err(unbound("asks for the password in clear text or as MD5"))
            }
            3 | 5 if !policy.clear_password => Err(refused(REFUSED)),
            3 | 5 if !policy.has_password => Err(refused(NO_PASSWORD)),
            10 => {
                let plus = body
                    .split(|&b| b == 0)
                    .any(|mechanism| mechanism == b"SCRAM-SHA-256-PLUS");
                if policy.channel_binding && !plus {
                    return Err(unbound(
                        "offers SCRAM-SHA-256 without channel binding (SCRAM-SHA-256-PLUS)",
                    ));
                }
                if !policy.has_password {
                    return Err(refused(NO_PASSWORD));
                }
                self.offered_binding = plus;
                Ok(false)
            }
            11 => match iterations(body) {
                Some(count) if count >= policy.min_iterations => Ok(false),
                Some(count) => Err(refused(&format!(
                    "the server asks for SCRAM-SHA-256 with {count} iterations, fewer than the \
                     {} that the option `minScramIterations` requires (PostgreSQL's default is \
                     {DEFAULT_MIN_ITERATIONS}): whoever answers in the server's place chooses a \
                     low count to make the password's proof cheap to crack, so the proof was not \
                     sent. Set the role's password again on a server with scram_iterations of \
                     {DEFAULT_MIN_ITERATIONS} or more, or lower `minScramIterations` if this \
                     server's count is intended",
                    policy.min_iterations
                ))),
                None => Err(refused(
                    "the server's SCRAM-SHA-256 challenge has no iteration count",
                )),
            },
            _ => Ok(false),
        }
    }
}

/// The iteration count (`i=`) of SCRAM's server-first-message.
fn iterations(message: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(message).ok()?;
    text.split(',')
        .find_map(|attribute| attribute.strip_prefix("i="))
        .and_then(|count| count.parse().ok())
}

fn refused(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, why.to_string())
}

/// The error of a TLS connection whose server `did` something else than SCRAM with channel
/// binding.
fn unbound(did: &str) -> io::Error {
    refused(&format!(
        "the server {did}, on a TLS connection, where only SCRAM-SHA-256-PLUS (channel \
         binding) is accepted by default: it binds the password's proof to the certificate \
         this connection saw, so a server in the middle cannot relay it. Let the server \
         authenticate the role with scram-sha-256 (pg_hba.conf; PostgreSQL 11 and later offer \
         channel binding over TLS), or set the option `channelBinding` to `prefer` to accept \
         it without (with sslmode verify-full, which stops a server in the middle by itself)"
    ))
}

/// The socket under a connection, TCP or Unix, with the guard of its authentication.
pub struct Socket {
    stream: Stream,
    guard: Guard,
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Socket {
    /// A TCP socket, guarded by `plain` when the connection has no TLS; `refused_tls` is set
    /// when the server answers an `SSLRequest` with no.
    pub fn tcp(stream: TcpStream, plain: Policy, refused_tls: Arc<AtomicBool>) -> Socket {
        Socket {
            stream: Stream::Tcp(stream),
            guard: Guard::Start { plain, refused_tls },
        }
    }

    /// A Unix socket: local, reached only through the file system's permissions, and
    /// PostgreSQL offers no TLS on it (libpq ignores `sslmode` there too); the guard still
    /// checks SCRAM's count and that a password was given.
    pub fn unix(stream: UnixStream, plain: Policy) -> Socket {
        Socket {
            stream: Stream::Unix(stream),
            guard: Guard::reading(plain),
        }
    }
}

impl AsyncRead for Socket {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = match &mut this.stream {
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
        };
        if let Poll::Ready(Ok(())) = polled {
            this.guard.read(&buf.filled()[before..])?;
        }
        polled
    }
}

impl AsyncWrite for Socket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = match &mut this.stream {
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, bytes),
            Stream::Unix(s) => Pin::new(s).poll_write(cx, bytes),
        };
        if let Poll::Ready(Ok(n)) = polled {
            this.guard.wrote(&bytes[..n]);
        }
        polled
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// A TLS connector whose streams carry the guard of authentication with `policy`.
pub struct GuardedTls<T> {
    pub inner: T,
    pub policy: Policy,
}

impl<S, T: TlsConnect<S>> TlsConnect<S> for GuardedTls<T>
where
    T::Future: Unpin,
{
    type Stream = Guarded<T::Stream>;
    type Error = T::Error;
    type Future = GuardedConnect<T::Future>;

    fn connect(self, stream: S) -> Self::Future {
        GuardedConnect {
            inner: self.inner.connect(stream),
            policy: self.policy,
        }
    }
}

/// The TLS handshake of [`GuardedTls`].
pub struct GuardedConnect<F> {
    inner: F,
    policy: Policy,
}

impl<F, S, E> Future for GuardedConnect<F>
where
    F: Future<Output = Result<S, E>> + Unpin,
{
    type Output = Result<Guarded<S>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let policy = this.policy;
        Pin::new(&mut this.inner).poll(cx).map(|connected| {
            connected.map(|inner| Guarded {
                inner,
                guard: Guard::reading(policy),
            })
        })
    }
}

/// A TLS stream with the guard of authentication on what it decrypts.
pub struct Guarded<S> {
    inner: S,
    guard: Guard,
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.guard.read(&buf.filled()[before..])?;
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl<S: TlsStream + Unpin> TlsStream for Guarded<S> {
    fn channel_binding(&self) -> ChannelBinding {
        self.inner.channel_binding()
    }
}

/// libpq's `channel_binding`, for connections with TLS: whether SCRAM must be bound to the TLS
/// connection (SCRAM-SHA-256-PLUS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Binding {
    /// Only SCRAM-SHA-256-PLUS (the default).
    Require,
    /// SCRAM-SHA-256-PLUS when the server offers it, any other authentication otherwise.
    Prefer,
    /// Never bound.
    Disable,
}

impl Binding {
    /// The mode named `text`, as libpq spells it.
    ///
    /// # Errors
    /// Another name.
    pub fn parse(text: &str) -> Result<Binding> {
        Ok(match text {
            "require" => Binding::Require,
            "prefer" => Binding::Prefer,
            "disable" => Binding::Disable,
            other => {
                return Err(Error::Option(format!(
                    "option `channelBinding` must be require, prefer or disable, got `{other}`"
                )))
            }
        })
    }

    /// The client's setting for a connection with TLS.
    pub fn client(self) -> ClientBinding {
        match self {
            Binding::Require => ClientBinding::Require,
            Binding::Prefer => ClientBinding::Prefer,
            Binding::Disable => ClientBinding::Disable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection without TLS that may not send the password in clear.
    const PLAIN: Policy = Policy {
        clear_password: false,
        channel_binding: false,
        min_iterations: DEFAULT_MIN_ITERATIONS,
        has_password: true,
    };

    /// A connection with TLS and the defaults.
    const TLS: Policy = Policy {
        clear_password: true,
        channel_binding: true,
        min_iterations: DEFAULT_MIN_ITERATIONS,
        has_password: true,
    };

    /// The guard of a socket that asked for TLS and was refused, fed the server's `bytes` in
    /// chunks of `size`.
    fn feed(bytes: &[u8], size: usize, policy: Policy) -> io::Result<()> {
        let refused_tls = Arc::new(AtomicBool::new(false));
        let mut guard = Guard::Start {
            plain: policy,
            refused_tls: refused_tls.clone(),
        };
        guard.wrote(&SSL_REQUEST);
        let mut answered = vec![b'N'];
        answered.extend_from_slice(bytes);
        for chunk in answered.chunks(size) {
            guard.read(chunk)?;
        }
        assert!(refused_tls.load(Ordering::Relaxed));
        Ok(())
    }

    /// The guard of a TLS stream, fed `bytes` in chunks of `size`.
    fn feed_tls(bytes: &[u8], size: usize, policy: Policy) -> io::Result<()> {
        let mut guard = Guard::reading(policy);
        for chunk in bytes.chunks(size) {
            guard.read(chunk)?;
        }
        Ok(())
    }

    fn message(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![kind];
        bytes.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    /// An authentication request.
    fn request(code: i32, body: &[u8]) -> Vec<u8> {
        let mut all = code.to_be_bytes().to_vec();
        all.extend_from_slice(body);
        message(b'R', &all)
    }

    fn sasl(mechanisms: &[&str]) -> Vec<u8> {
        let mut body = Vec::new();
        for mechanism in mechanisms {
            body.extend_from_slice(mechanism.as_bytes());
            body.push(0);
        }
        body.push(0);
        request(10, &body)
    }

    /// SCRAM's server-first-message with `iterations`, then its final message and the end.
    fn challenge_then_ok(iterations: &str) -> Vec<u8> {
        let mut bytes = request(11, format!("r=nonce,s=c2FsdA==,{iterations}").as_bytes());
        bytes.extend(request(12, b"v=signature"));
        bytes.extend(request(0, b""));
        bytes
    }

    fn scram(mechanisms: &[&str], iterations: &str) -> Vec<u8> {
        let mut bytes = sasl(mechanisms);
        bytes.extend(challenge_then_ok(iterations));
        bytes
    }

    const SIZES: [usize; 5] = [1, 2, 5, 9, 1000];

    #[test]
    fn a_request_for_the_password_in_clear_or_md5_is_refused_without_tls() {
        let clear = request(3, b"");
        let md5 = request(5, b"salt");
        let mut scram_then_ok = scram(&["SCRAM-SHA-256"], "i=4096");
        // After authentication, a message that looks like a request is data.
        scram_then_ok.extend(message(b'S', b"client_encoding\0UTF8\0"));
        scram_then_ok.extend(request(3, b""));
        // Before it, no other message ends the guard.
        let mut notice_then_clear = message(b'N', b"Shello\0\0");
        notice_then_clear.extend_from_slice(&clear);
        let allowed = Policy {
            clear_password: true,
            ..PLAIN
        };
        for size in SIZES {
            for asked in [&clear, &md5, &notice_then_clear] {
                let error = feed(asked, size, PLAIN).expect_err("refused");
                assert_eq!(error.to_string(), REFUSED);
                assert!(feed(asked, size, allowed).is_ok());
            }
            assert!(feed(&scram_then_ok, size, PLAIN).is_ok(), "{size}");
        }
    }

    #[test]
    fn over_tls_only_scram_with_channel_binding_passes_by_default() {
        let bound = scram(&["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], "i=4096");
        let unbound = scram(&["SCRAM-SHA-256"], "i=4096");
        let trust = request(0, b"");
        let clear = request(3, b"");
        let prefer = Policy {
            channel_binding: false,
            ..TLS
        };
        for size in SIZES {
            assert!(feed_tls(&bound, size, TLS).is_ok());
            for (other, what) in [
                (&unbound, "offers SCRAM-SHA-256 without channel binding"),
                (
                    &trust,
                    "let the connection in without asking for a password",
                ),
                (&clear, "asks for the password in clear text or as MD5"),
            ] {
                let error = feed_tls(other, size, TLS).expect_err("unbound");
                assert!(
                    error.to_string().starts_with(&format!("the server {what}")),
                    "{error}"
                );
                assert!(error.to_string().contains("`channelBinding`"), "{error}");
                assert!(feed_tls(other, size, prefer).is_ok());
            }
        }
    }

    #[test]
    fn scram_with_fewer_iterations_than_the_least_is_refused_before_the_proof() {
        for size in SIZES {
            let error = feed_tls(&scram(&["SCRAM-SHA-256-PLUS"], "i=4095"), size, TLS)
                .expect_err("too few");
            let text = error.to_string();
            assert!(
                text.starts_with(
                    "the server asks for SCRAM-SHA-256 with 4095 iterations, fewer than the \
                     4096 that the option `minScramIterations` requires"
                ),
                "{text}"
            );
            let fewer = Policy {
                min_iterations: 1000,
                ..PLAIN
            };
            assert!(feed(&scram(&["SCRAM-SHA-256"], "i=1000"), size, fewer).is_ok());
            assert!(feed(&scram(&["SCRAM-SHA-256"], "i=999"), size, fewer).is_err());
            let error = feed(&scram(&["SCRAM-SHA-256"], "x=1"), size, PLAIN).expect_err("none");
            assert!(error.to_string().contains("no iteration count"), "{error}");
        }
    }

    #[test]
    fn a_request_for_a_password_that_was_not_given_says_how_to_give_one() {
        let none = Policy {
            has_password: false,
            clear_password: true,
            ..PLAIN
        };
        for size in SIZES {
            for asked in [
                sasl(&["SCRAM-SHA-256"]),
                request(3, b""),
                request(5, b"salt"),
            ] {
                let error = feed(&asked, size, none).expect_err("no password");
                assert_eq!(error.to_string(), NO_PASSWORD);
            }
            // A server that lets the role in without one: nothing to give.
            assert!(feed(&request(0, b""), size, none).is_ok());
        }
    }

    #[test]
    fn an_authentication_request_longer_than_any_scram_message_is_refused() {
        let long = request(11, &vec![b'a'; LONGEST_REQUEST]);
        let error = feed(&long, 4096, PLAIN).expect_err("too long");
        assert!(error.to_string().contains("longer than 64 KiB"), "{error}");
        // Other messages are passed, whatever their length.
        let mut notice = message(b'N', &vec![b'a'; 2 * LONGEST_REQUEST]);
        notice.extend(request(0, b""));
        assert!(feed(&notice, 4096, PLAIN).is_ok());
    }

    #[test]
    fn channel_binding_modes_are_libpqs() {
        assert_eq!(Binding::parse("prefer").ok(), Some(Binding::Prefer));
        assert!(Binding::parse("on").is_err_and(|e| e
            .to_string()
            .starts_with("option `channelBinding` must be require, prefer or disable")));
    }
}
