//! TLS with libpq's `sslmode`, against a server of its own with `ssl=on` and a certificate for
//! `localhost` that `openssl` makes here, signed by a certificate authority made here; and no
//! password in clear or MD5 on a connection without TLS, unless `allowPasswordWithoutTls`.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use sparkds::arrow_array::cast::AsArray;

use crate::helpers::{library, message, server};
use crate::server::{Server, Setup, PASSWORD};

/// The message of a connection that refused to send a password.
const REFUSED: &str = "the server asks for the password in clear text or as MD5 over a \
                       connection without TLS";

/// A password of the roles that the server asks for in clear and as MD5.
const WEAK: &str = "weak-pw-5e0b";

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Certificates made once: `ca.pem` and `other-ca.pem`, two authorities, and `server.crt`
/// with `server.key`, signed by the first, for `localhost` only.
fn certificates() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("sparkds-tls-")
            .tempdir()
            .expect("a directory for certificates")
            .keep();
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        for (name, subject) in [
            ("ca", "/CN=sparkds test CA"),
            ("other-ca", "/CN=another CA"),
        ] {
            let (key, pem) = (format!("{name}.key"), format!("{name}.pem"));
            let mut args = vec!["req", "-x509", "-days", "2", "-subj", subject];
            args.extend(ec);
            args.extend(["-keyout", &key, "-out", &pem]);
            openssl(&dir, &args);
        }
        let mut args = vec!["req", "-subj", "/CN=localhost", "-keyout", "server.key"];
        args.extend(ec);
        args.extend(["-out", "server.csr"]);
        openssl(&dir, &args);
        std::fs::write(dir.join("server.ext"), "subjectAltName=DNS:localhost\n")
            .expect("the extensions");
        openssl(
            &dir,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "server.ext",
                "-out",
                "server.crt",
            ],
        );
        dir
    })
}

/// A server with TLS, whose roles `clear` and `md5` it asks for their password in clear and
/// as MD5, with or without TLS.
fn tls_server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let certificates = certificates();
        let file = |name: &str| std::fs::read(certificates.join(name)).expect("a certificate");
        let server = Server::start_with(Setup {
            settings: vec![
                "ssl=on".into(),
                "ssl_cert_file={dir}/server.crt".into(),
                "ssl_key_file={dir}/server.key".into(),
            ],
            hba: vec![
                "host all clear 127.0.0.1/32 password".into(),
                "host all md5 127.0.0.1/32 md5".into(),
            ],
            files: vec![
                ("server.crt", file("server.crt"), 0o644),
                ("server.key", file("server.key"), 0o600),
            ],
            ..Setup::default()
        });
        server.admin(&format!(
            "SET password_encryption = 'md5'; \
             CREATE ROLE clear LOGIN PASSWORD '{WEAK}'; CREATE ROLE md5 LOGIN PASSWORD '{WEAK}';"
        ));
        server
    })
}

/// Whether a read of `host` on `server`, as `user`, with `more` options, had TLS: the
/// server's own answer, `pg_stat_ssl`.
fn read_ssl(
    server: &Server,
    host: &str,
    user: (&str, &str),
    more: &[(&str, &str)],
) -> sparkds::Result<bool> {
    let mut options = vec![
        (
            "url".to_string(),
            format!("postgresql://{host}:{}/sparkds", server.port),
        ),
        ("user".to_string(), user.0.to_string()),
        ("password".to_string(), user.1.to_string()),
        (
            "query".to_string(),
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()".to_string(),
        ),
    ];
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let read = library()?.batch_read().options(options).run()?;
    let batches = read.batches();
    Ok(batches[0].column(0).as_boolean().value(0))
}

fn authority(name: &str) -> String {
    certificates().join(name).display().to_string()
}

const TESTS: (&str, &str) = ("sparkds", PASSWORD);

#[test]
fn verify_full_connects_with_the_authority_and_the_host_of_the_certificate() -> sparkds::Result<()>
{
    let server = tls_server();
    let ca = authority("ca.pem");
    let full = [("sslmode", "verify-full"), ("sslrootcert", ca.as_str())];
    assert!(read_ssl(server, "localhost", TESTS, &full)?);
    // Another authority, or another name than the certificate's.
    let other = authority("other-ca.pem");
    let error = message(read_ssl(
        server,
        "localhost",
        TESTS,
        &[("sslmode", "verify-full"), ("sslrootcert", other.as_str())],
    ));
    assert!(
        error.contains("invalid peer certificate: UnknownIssuer"),
        "{error}"
    );
    let error = message(read_ssl(server, "127.0.0.1", TESTS, &full));
    assert!(
        error.contains("invalid peer certificate: certificate not valid for name"),
        "{error}"
    );
    // verify-ca checks the authority, not the name.
    let by_ca = [("sslmode", "verify-ca"), ("sslrootcert", ca.as_str())];
    assert!(read_ssl(server, "127.0.0.1", TESTS, &by_ca)?);
    Ok(())
}

#[test]
fn require_and_prefer_encrypt_without_verifying_and_disable_does_not() -> sparkds::Result<()> {
    let server = tls_server();
    assert!(read_ssl(
        server,
        "127.0.0.1",
        TESTS,
        &[("sslmode", "require")]
    )?);
    assert!(
        read_ssl(server, "127.0.0.1", TESTS, &[])?,
        "prefer is the default"
    );
    assert!(!read_ssl(
        server,
        "127.0.0.1",
        TESTS,
        &[("sslmode", "disable")]
    )?);
    // `require` with a root certificate checks it, as libpq does.
    let other = authority("other-ca.pem");
    let error = message(read_ssl(
        server,
        "127.0.0.1",
        TESTS,
        &[("sslmode", "require"), ("sslrootcert", other.as_str())],
    ));
    assert!(error.contains("UnknownIssuer"), "{error}");
    Ok(())
}

#[test]
fn prefer_falls_back_to_plain_only_when_the_server_has_no_tls() -> sparkds::Result<()> {
    // The shared server runs without TLS.
    assert!(!read_ssl(
        server(),
        "127.0.0.1",
        TESTS,
        &[("sslmode", "prefer")]
    )?);
    for mode in ["require", "verify-full"] {
        let ca = authority("ca.pem");
        let error = message(read_ssl(
            server(),
            "localhost",
            TESTS,
            &[("sslmode", mode), ("sslrootcert", ca.as_str())],
        ));
        assert!(
            error.contains("server does not support TLS"),
            "{mode}: {error}"
        );
    }
    let error = message(read_ssl(
        server(),
        "localhost",
        TESTS,
        &[
            ("sslmode", "verify-full"),
            ("sslrootcert", "/nonexistent/ca.pem"),
        ],
    ));
    assert!(
        error.contains("option `sslrootcert` (/nonexistent/ca.pem), needed by sslmode"),
        "{error}"
    );
    Ok(())
}

#[test]
fn a_password_goes_in_clear_or_as_md5_only_over_tls_or_when_an_option_allows_it(
) -> sparkds::Result<()> {
    let server = tls_server();
    for role in ["clear", "md5"] {
        let user = (role, WEAK);
        let error = message(read_ssl(
            server,
            "127.0.0.1",
            user,
            &[("sslmode", "disable")],
        ));
        assert!(error.contains(REFUSED), "{role}: {error}");
        assert!(!error.contains(WEAK), "{error}");
        assert!(read_ssl(
            server,
            "127.0.0.1",
            user,
            &[("sslmode", "require")]
        )?);
        let allowed = [("sslmode", "disable"), ("allowPasswordWithoutTls", "true")];
        assert!(!read_ssl(server, "127.0.0.1", user, &allowed)?);
    }
    Ok(())
}

#[test]
fn a_server_that_asks_for_the_password_in_clear_never_gets_it() {
    // Whoever answers in the server's place: it refuses TLS, then asks for the password.
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("its address").port();
    let impersonator = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().expect("the connector connects");
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a timeout");
        let mut request = [0u8; 8];
        socket.read_exact(&mut request).expect("an SSLRequest");
        socket.write_all(b"N").expect("no TLS here");
        let mut length = [0u8; 4];
        socket.read_exact(&mut length).expect("a startup message");
        let mut startup = vec![0u8; i32::from_be_bytes(length) as usize - 4];
        socket.read_exact(&mut startup).expect("its body");
        let mut clear = vec![b'R'];
        clear.extend_from_slice(&8i32.to_be_bytes());
        clear.extend_from_slice(&3i32.to_be_bytes());
        socket.write_all(&clear).expect("the request");
        // What comes back until the connector closes, or for 3 s.
        socket
            .set_read_timeout(Some(Duration::from_secs(3)))
            .expect("a timeout");
        let mut answer = Vec::new();
        let _ = socket.read_to_end(&mut answer);
        answer
    });
    let options = [
        ("url", format!("postgresql://127.0.0.1:{port}/sparkds")),
        ("user", "sparkds".to_string()),
        ("password", PASSWORD.to_string()),
        ("dbtable", "t".to_string()),
    ];
    let error = message(library().and_then(|l| l.batch_read().options(options).run()));
    let answer = impersonator.join().expect("the impersonator ends");
    assert!(
        !answer
            .windows(PASSWORD.len())
            .any(|w| w == PASSWORD.as_bytes()),
        "the password was sent: {answer:?}"
    );
    assert!(error.contains(REFUSED), "{error}");
}
