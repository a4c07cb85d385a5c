//! TLS that libpq has and the tests of `tls.rs` do not cover: a client certificate
//! (`sslcert`, `sslkey`) for a server whose `pg_hba.conf` asks for one, a key file that others
//! may read refused, and `sslrootcert=system` (the machine's authorities, here `SSL_CERT_FILE`
//! naming the tests' own), with `verify-full` only.

use std::sync::OnceLock;

use crate::certificates::{authority, client_certificate, file};
use crate::helpers::{library, message};
use crate::server::{Server, Setup};

/// The role that signs in with its certificate.
const USER: &str = "certified";

/// A server that lets `certified` in with a client certificate signed by the tests' authority
/// only (`cert`: no password).
fn cert_server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let server = Server::start_with(Setup {
            settings: vec!["ssl_ca_file={dir}/ca.pem".into()],
            hba: vec![format!("hostssl all {USER} 127.0.0.1/32 cert")],
            files: vec![("ca.pem", file("ca.pem"), 0o644)],
            ..Setup::default()
        });
        server.admin(&format!("CREATE ROLE {USER} LOGIN"));
        server
    })
}

/// The options of a read of `SELECT 1` as `certified`, with `more`.
fn options(more: &[(&str, String)]) -> Vec<(String, String)> {
    let server = cert_server();
    let mut options = vec![
        // The host of the server's certificate, checked with verify-full.
        (
            "url".to_string(),
            server.url().replace("127.0.0.1", "localhost"),
        ),
        ("user".to_string(), USER.to_string()),
        ("query".to_string(), "SELECT 1 AS one".to_string()),
        ("sslrootcert".to_string(), authority("ca.pem")),
    ];
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.clone())));
    options
}

#[test]
fn a_client_certificate_signs_in_where_the_server_asks_for_one() -> sparkds::Result<()> {
    let (cert, key) = client_certificate(USER);
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let read = library()?
        .batch_read()
        .options(options(&[
            ("sslcert", cert.clone()),
            ("sslkey", key.clone()),
        ]))
        .run()?;
    assert_eq!(read.num_rows(), 1);
    // Without it, the server refuses.
    let error = message(library()?.batch_read().options(options(&[])).run());
    assert!(error.contains("certificate"), "{error}");
    // One without the other is an option's error.
    let error = message(
        library()?
            .batch_read()
            .options(options(&[("sslcert", cert)]))
            .run(),
    );
    assert!(
        error.contains("options `sslcert` and `sslkey` go together"),
        "{error}"
    );
    Ok(())
}

#[test]
fn a_key_file_that_others_may_read_is_refused_with_the_fix() -> sparkds::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let (cert, key) = client_certificate(USER);
    let open = key.with_file_name("readable.key");
    std::fs::copy(&key, &open).map_err(|e| sparkds::Error::io("copy the key", e))?;
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644))
        .map_err(|e| sparkds::Error::io("chmod the key", e))?;
    let read = library()?.batch_read().options(options(&[
        ("sslcert", cert.display().to_string()),
        ("sslkey", open.display().to_string()),
    ]));
    let error = message(read.run());
    assert!(
        error.contains("has group or world access (mode 644): make it u=rw (chmod 0600)"),
        "{error}"
    );
    Ok(())
}

#[test]
fn sslrootcert_system_checks_with_the_machine_s_authorities_and_verify_full_only(
) -> sparkds::Result<()> {
    // The machine's authorities, as rustls-native-certs (and OpenSSL) read them: SSL_CERT_FILE
    // first. No other test of this process reads it.
    std::env::set_var("SSL_CERT_FILE", authority("ca.pem"));
    let (cert, key) = client_certificate(USER);
    let identity = [
        ("sslcert", cert.display().to_string()),
        ("sslkey", key.display().to_string()),
    ];
    let mut system = options(&identity);
    system.retain(|(k, _)| k != "sslrootcert");
    system.push(("sslrootcert".into(), "system".into()));
    assert_eq!(
        library()?
            .batch_read()
            .options(system.clone())
            .run()?
            .num_rows(),
        1
    );
    system.push(("sslmode".into(), "require".into()));
    let error = message(library()?.batch_read().options(system).run());
    assert!(
        error.contains(
            "option `sslrootcert` is system, which needs sslmode verify-full (got require)"
        ),
        "{error}"
    );
    Ok(())
}
