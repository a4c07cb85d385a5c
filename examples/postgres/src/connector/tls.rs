//! The transport of a connection: TLS with libpq's `sslmode` semantics (rustls), and, on a
//! connection without TLS, a guard that refuses to answer a request for the password in clear
//! text or as MD5, which whoever impersonates the server could read or replay.
//!
//! | `sslmode`     | TLS                                 | the server's certificate          |
//! |---------------|-------------------------------------|-----------------------------------|
//! | `disable`     | never                               |                                   |
//! | `allow`       | only when the server refuses plain  | not checked                       |
//! | `prefer`      | first; plain when the server has none | not checked                     |
//! | `require`     | always                              | not checked (as `verify-ca` when `sslrootcert` is set) |
//! | `verify-ca`   | always                              | signed by `sslrootcert`           |
//! | `verify-full` | always                              | signed by `sslrootcert`, for the host |
//!
//! The guard reads the server's messages until authentication ends, on connections without TLS
//! only (after an `SSLRequest` that the server accepted, the bytes are TLS records and the
//! password travels inside them). SCRAM-SHA-256 never shows the password, so it passes.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// The mode named `text`, as libpq spells it.
    ///
    /// # Errors
    /// Another name.
    pub fn parse(text: &str) -> Result<SslMode> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(Error::Option(format!(
                    "option `sslmode` must be disable, allow, prefer, require, verify-ca or \
                     verify-full, got `{other}`"
                )))
            }
        })
    }
}

/// How a connection checks the server's certificate.
enum Check {
    /// Not at all: TLS against eavesdroppers, not against an impersonator (libpq's `require`).
    Nothing,
    /// Signed by one of these roots; for the host too when `host` is set.
    Roots {
        roots: Arc<RootCertStore>,
        host: bool,
    },
}

/// The TLS side of a connection: the rustls configuration of its `sslmode`.
///
/// # Errors
/// A mode that verifies without a readable root certificate file.
pub fn connector(mode: SslMode, root_cert: Option<&Path>) -> Result<MakeRustlsConnect> {
    let check = match (mode, root_cert) {
        (SslMode::VerifyCa | SslMode::VerifyFull, _) => {
            let path = root_cert
                .map(Path::to_path_buf)
                .or_else(default_root_cert)
                .ok_or_else(|| missing_root(mode))?;
            Check::Roots {
                roots: Arc::new(roots(&path, mode)?),
                host: mode == SslMode::VerifyFull,
            }
        }
        // libpq verifies the chain in `require` when a root certificate file is given.
        (SslMode::Require, Some(path)) => Check::Roots {
            roots: Arc::new(roots(path, mode)?),
            host: false,
        },
        _ => Check::Nothing,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::msg(format!("cannot set up TLS: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = match check {
        Check::Nothing => Arc::new(Unchecked(provider)),
        Check::Roots { roots, host } => {
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| Error::msg(format!("cannot set up TLS: {e}")))?;
            if host {
                webpki
            } else {
                Arc::new(AnyName(webpki))
            }
        }
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// libpq's default root certificate file, `~/.postgresql/root.crt`, when it exists.
fn default_root_cert() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("HOME")?).join(".postgresql/root.crt");
    path.is_file().then_some(path)
}

fn missing_root(mode: SslMode) -> Error {
    let mode = match mode {
        SslMode::VerifyCa => "verify-ca",
        _ => "verify-full",
    };
    Error::Option(format!(
        "option `sslmode` is {mode}, which checks the server's certificate against a root \
         certificate: set `sslrootcert` to the PEM file of the certificate authority that \
         signed it (the default, ~/.postgresql/root.crt, does not exist)"
    ))
}

/// The certificates of the PEM file `path`.
fn roots(path: &Path, mode: SslMode) -> Result<RootCertStore> {
    let unreadable = |why: String| {
        Error::Option(format!(
            "option `sslrootcert` ({}), needed by sslmode {mode:?}, {why}",
            path.display()
        ))
    };
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|e| unreadable(format!("cannot be read: {e}")))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| unreadable(format!("is not a PEM file of certificates: {e}")))?;
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(certificates);
    if added == 0 {
        return Err(unreadable("holds no certificate".to_string()));
    }
    Ok(roots)
}

/// Accepts any certificate, but still checks that the server holds its key.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain is checked, the name in the certificate is not.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // The name is checked last, once the chain is valid.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// What a connection without TLS says when the server asks for the password as it is.
pub const REFUSED: &str = "the server asks for the password in clear text or as MD5 over a \
                           connection without TLS, where whoever answers in its place reads it: \
                           the password was not sent. Connect with TLS (option `sslmode`), let \
                           the server use scram-sha-256, or set the option \
                           `allowPasswordWithoutTls` to true";

/// The socket under a connection, TCP or Unix, with the guard of the password.
pub struct Socket {
    stream: Stream,
    guard: Guard,
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

/// Where the guard is in the start of the protocol.
enum Guard {
    /// Nothing written yet: the first message says whether TLS is asked for.
    Start { allow: bool },
    /// After an `SSLRequest`: the server's one-byte answer comes next.
    Answer { allow: bool },
    /// Reading the server's messages, `header` holding the bytes of the current one's type,
    /// length and authentication code, `skip` the bytes of it still to pass.
    Plain { header: Vec<u8>, skip: usize },
    /// TLS, authentication over, or passwords allowed: nothing more to look at.
    Off,
}

/// The `SSLRequest` message: its length and code.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 4, 210, 22, 47];

impl Socket {
    /// A TCP socket; `allow` lets a password go without TLS.
    pub fn tcp(stream: TcpStream, allow: bool) -> Socket {
        Socket {
            stream: Stream::Tcp(stream),
            guard: Guard::Start { allow },
        }
    }

    /// A Unix socket: local, and PostgreSQL offers no TLS on it, so no guard.
    pub fn unix(stream: UnixStream) -> Socket {
        Socket {
            stream: Stream::Unix(stream),
            guard: Guard::Off,
        }
    }
}

impl Guard {
    /// Sees what the client wrote: the first message says whether TLS is asked for.
    fn wrote(&mut self, bytes: &[u8]) {
        if let Guard::Start { allow } = *self {
            *self = if bytes.starts_with(&SSL_REQUEST) {
                Guard::Answer { allow }
            } else if allow {
                Guard::Off
            } else {
                Guard::plain()
            };
        }
    }

    fn plain() -> Guard {
        Guard::Plain {
            header: Vec::new(),
            skip: 0,
        }
    }

    /// Sees what the server sent: an error when it asks for the password in clear or as MD5.
    fn read(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        loop {
            match self {
                Guard::Off | Guard::Start { .. } => return Ok(()),
                Guard::Answer { allow } => {
                    let Some((&answer, rest)) = bytes.split_first() else {
                        return Ok(());
                    };
                    *self = if answer == b'S' || *allow {
                        Guard::Off
                    } else {
                        Guard::plain()
                    };
                    bytes = rest;
                }
                Guard::Plain { header, skip } => {
                    if bytes.is_empty() {
                        return Ok(());
                    }
                    if *skip > 0 {
                        let n = (*skip).min(bytes.len());
                        *skip -= n;
                        bytes = &bytes[n..];
                        continue;
                    }
                    // A message: its type and length (itself included), and for an
                    // authentication request (`R`) its code.
                    let wanted: usize = if header.first() == Some(&b'R') { 9 } else { 5 };
                    let n = wanted.saturating_sub(header.len()).min(bytes.len());
                    header.extend_from_slice(&bytes[..n]);
                    bytes = &bytes[n..];
                    if header.len() < 5 || header[0] == b'R' && header.len() < 9 {
                        continue;
                    }
                    if header[0] == b'R' {
                        match i32::from_be_bytes([header[5], header[6], header[7], header[8]]) {
                            3 | 5 => {
                                return Err(io::Error::new(
                                    io::ErrorKind::PermissionDenied,
                                    REFUSED,
                                ))
                            }
                            // Authenticated: the password is asked for no more.
                            0 => {
                                *self = Guard::Off;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    *skip = length(header).saturating_sub(header.len() - 1);
                    header.clear();
                }
            }
        }
    }
}

/// The length field of a message header (type byte, then 4 bytes), as a count of bytes.
fn length(header: &[u8]) -> usize {
    let length = i32::from_be_bytes([header[1], header[2], header[3], header[4]]);
    usize::try_from(length).unwrap_or(0)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A guard that asked for TLS and was refused, fed the server's `bytes` in chunks of `size`.
    fn feed(bytes: &[u8], size: usize, allow: bool) -> io::Result<()> {
        let mut guard = Guard::Start { allow };
        guard.wrote(&SSL_REQUEST);
        let mut answered = vec![b'N'];
        answered.extend_from_slice(bytes);
        for chunk in answered.chunks(size) {
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

    #[test]
    fn a_request_for_the_password_in_clear_or_md5_is_refused_without_tls() {
        let clear = message(b'R', &3i32.to_be_bytes());
        let mut md5 = 5i32.to_be_bytes().to_vec();
        md5.extend_from_slice(b"salt");
        let md5 = message(b'R', &md5);
        let mut sasl = 10i32.to_be_bytes().to_vec();
        sasl.extend_from_slice(b"SCRAM-SHA-256\0\0");
        let mut scram_then_ok = message(b'R', &sasl);
        scram_then_ok.extend(message(b'R', &0i32.to_be_bytes()));
        // After authentication, a message that looks like a request is data.
        scram_then_ok.extend(message(b'S', b"client_encoding\0UTF8\0"));
        // Before it, no other message ends the guard.
        let mut notice_then_clear = message(b'N', b"Shello\0\0");
        notice_then_clear.extend_from_slice(&clear);
        scram_then_ok.extend(message(b'R', &3i32.to_be_bytes()));
        for size in [1, 2, 5, 100] {
            for request in [&clear, &md5, &notice_then_clear] {
                let error = feed(request, size, false).expect_err("refused");
                assert_eq!(error.to_string(), REFUSED);
                assert!(feed(request, size, true).is_ok());
            }
            assert!(feed(&scram_then_ok, size, false).is_ok(), "{size}");
        }
    }

    #[test]
    fn sslmodes_are_libpqs() {
        assert_eq!(
            SslMode::parse("verify-full").ok(),
            Some(SslMode::VerifyFull)
        );
        assert!(SslMode::parse("verify_full").is_err_and(|e| e
            .to_string()
            .starts_with("option `sslmode` must be disable")));
        assert!(
            connector(SslMode::VerifyFull, Some(Path::new("/nonexistent/ca.pem")))
                .is_err_and(|e| e.to_string().contains("cannot be read"))
        );
    }
}
