//! TLS with libpq's `sslmode` semantics (rustls). What a connection lets the server do while
//! it authenticates (channel binding, SCRAM's iterations, no password in clear without TLS) is
//! the guard's (`guard`).
//!
//! | `sslmode`     | TLS                                 | the server's certificate          |
//! |---------------|-------------------------------------|-----------------------------------|
//! | `disable`     | never                               |                                   |
//! | `allow`       | only when the server refuses plain  | not checked                       |
//! | `prefer`      | first; plain when the server has none | not checked                     |
//! | `require`     | always (the default without `sslrootcert`) | not checked (as `verify-ca` when `sslrootcert` is set) |
//! | `verify-ca`   | always                              | signed by `sslrootcert`           |
//! | `verify-full` | always (the default with `sslrootcert`) | signed by `sslrootcert`, for the host |
//!
//! Only `disable`, `allow` and `prefer` may connect without TLS, and only when an option or
//! `PGSSLMODE` names them: a server in the middle answers "no TLS" for the real one, and then
//! sees and changes everything.
//!
//! `sslrootcert=system` checks the server's certificate against the machine's trusted
//! authorities, with `verify-full` only (as libpq: a public authority signs certificates for
//! anyone's name, so the name must be checked). `sslcert` and `sslkey` present a certificate of
//! the client, for a server whose `pg_hba.conf` asks for one (`cert`, `clientcert=verify-full`);
//! the key must be a file that neither its group nor others may read (0600), as libpq wants.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result};
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
        SslMode::ALL
            .into_iter()
            .find(|mode| mode.name() == text)
            .ok_or_else(|| {
                Error::Option(format!(
                    "option `sslmode` must be disable, allow, prefer, require, verify-ca or \
                     verify-full, got `{text}`"
                ))
            })
    }

    const ALL: [SslMode; 6] = [
        SslMode::Disable,
        SslMode::Allow,
        SslMode::Prefer,
        SslMode::Require,
        SslMode::VerifyCa,
        SslMode::VerifyFull,
    ];

    /// The mode's name, as libpq spells it.
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Whether the mode connects without TLS when it must.
    pub fn allows_plain(self) -> bool {
        matches!(self, SslMode::Disable | SslMode::Allow | SslMode::Prefer)
    }
}

/// What the server's certificate is checked against (`sslrootcert`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RootCert {
    /// The authorities of a PEM file, on every machine that connects.
    File(PathBuf),
    /// `system`: the machine's trusted authorities.
    System,
}

impl RootCert {
    /// `sslrootcert` as libpq reads it: `system`, or a file.
    pub fn parse(text: &str) -> RootCert {
        match text {
            "system" => RootCert::System,
            path => RootCert::File(PathBuf::from(path)),
        }
    }
}

/// A certificate of the client and its key (`sslcert`, `sslkey`): PEM files on every machine
/// that connects.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientCert {
    pub cert: PathBuf,
    pub key: PathBuf,
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

/// The TLS side of a connection: the rustls configuration of its `sslmode`, root certificates
/// and client certificate.
///
/// # Errors
/// A mode that verifies without a readable root certificate file, `sslrootcert=system` with a
/// mode other than `verify-full` or no trusted authority on the machine, a client certificate
/// or key that cannot be read, or a key that others may read.
pub fn connector(
    mode: SslMode,
    root_cert: Option<&RootCert>,
    client: Option<&ClientCert>,
) -> Result<MakeRustlsConnect> {
    if root_cert == Some(&RootCert::System) && mode != SslMode::VerifyFull {
        return Err(Error::Option(format!(
            "option `sslrootcert` is system, which needs sslmode verify-full (got {}): the \
             machine's authorities sign certificates for anyone's name, so the server's name \
             must be checked",
            mode.name()
        )));
    }
    let check = match (mode, root_cert) {
        (SslMode::VerifyCa | SslMode::VerifyFull, _) => {
            let root = root_cert
                .cloned()
                .or_else(|| default_root_cert().map(RootCert::File))
                .ok_or_else(|| missing_root(mode))?;
            Check::Roots {
                roots: Arc::new(roots(&root, mode)?),
                host: mode == SslMode::VerifyFull,
            }
        }
        // libpq verifies the chain in `require` when a root certificate file is given.
        (SslMode::Require, Some(root)) => Check::Roots {
            roots: Arc::new(roots(root, mode)?),
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
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some(client) => {
            let (chain, key) = client_identity(client)?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                Error::Option(format!(
                    "options `sslcert` and `sslkey` ({} and {}) do not make a client identity: \
                     {e}",
                    client.cert.display(),
                    client.key.display()
                ))
            })?
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

/// The certificate chain and the key of `client`, the key from a file that only its owner
/// reads (0600), or root and its group (0640), as libpq takes it.
fn client_identity(
    client: &ClientCert,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = CertificateDer::pem_file_iter(&client.cert)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| {
            Error::Option(format!(
                "option `sslcert` ({}) is not a readable PEM file of certificates: {e}",
                client.cert.display()
            ))
        })?;
    if chain.is_empty() {
        return Err(Error::Option(format!(
            "option `sslcert` ({}) holds no certificate",
            client.cert.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let metadata = std::fs::metadata(&client.key).map_err(|e| {
            Error::Option(format!(
                "option `sslkey` ({}) cannot be read: {e}",
                client.key.display()
            ))
        })?;
        let mode = metadata.permissions().mode();
        let allowed = if metadata.uid() == 0 { 0o027 } else { 0o077 };
        if mode & allowed != 0 {
            return Err(Error::Option(format!(
                "option `sslkey` ({}) has group or world access (mode {:o}): make it u=rw \
                 (chmod 0600), or u=rw,g=r (0640) for a file that root owns",
                client.key.display(),
                mode & 0o777
            )));
        }
    }
    let key = PrivateKeyDer::from_pem_file(&client.key).map_err(|e| {
        Error::Option(format!(
            "option `sslkey` ({}) is not a PEM private key (PKCS#8, PKCS#1 or SEC1, not \
             encrypted): {e}",
            client.key.display()
        ))
    })?;
    Ok((chain, key))
}

/// libpq's default root certificate file, `~/.postgresql/root.crt`, when it exists.
fn default_root_cert() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("HOME")?).join(".postgresql/root.crt");
    path.is_file().then_some(path)
}

fn missing_root(mode: SslMode) -> Error {
    Error::Option(format!(
        "option `sslmode` is {}, which checks the server's certificate against a root \
         certificate: set `sslrootcert` to the PEM file of the certificate authority that \
         signed it (the default, ~/.postgresql/root.crt, does not exist)",
        mode.name()
    ))
}

/// The authorities of `root`.
fn roots(root: &RootCert, mode: SslMode) -> Result<RootCertStore> {
    match root {
        RootCert::File(path) => file_roots(path, mode),
        RootCert::System => {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = RootCertStore::empty();
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default();
                return Err(Error::Option(format!(
                    "option `sslrootcert` is system, and this machine trusts no certificate \
                     authority that could be read{why}: install its authorities (the \
                     ca-certificates package), or set SSL_CERT_FILE, or name a file"
                )));
            }
            Ok(roots)
        }
    }
}

/// The certificates of the PEM file `path`.
fn file_roots(path: &Path, mode: SslMode) -> Result<RootCertStore> {
    let unreadable = |why: String| {
        Error::Option(format!(
            "option `sslrootcert` ({}), needed by sslmode {}, {why}",
            path.display(),
            mode.name()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmodes_are_libpqs() {
        assert_eq!(
            SslMode::parse("verify-full").ok(),
            Some(SslMode::VerifyFull)
        );
        assert!(SslMode::parse("verify_full").is_err_and(|e| e
            .to_string()
            .starts_with("option `sslmode` must be disable")));
        assert!(connector(
            SslMode::VerifyFull,
            Some(&RootCert::parse("/nonexistent/ca.pem")),
            None
        )
        .is_err_and(|e| e.to_string().contains("cannot be read")));
    }
}
