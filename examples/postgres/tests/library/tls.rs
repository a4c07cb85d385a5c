//! TLS with libpq's `sslmode`, against servers of their own with a certificate for
//! `localhost` that `openssl` makes here, signed by a certificate authority made here
//! (`certificates.rs`): TLS by default, checked with the host when an authority is given; a
//! server without TLS only with an option that says so; over TLS, SCRAM with channel binding
//! only (`channelBinding`); SCRAM with at least 4096 iterations (`minScramIterations`); and no
//! password in clear or MD5 on a connection without TLS, unless `allowPasswordWithoutTls`.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use sparkds::arrow_array::cast::AsArray;

use crate::certificates::authority;
use crate::helpers::{library, message};
use crate::server::{Server, Setup, PASSWORD};

/// The message of a connection that refused to send a password.
const REFUSED: &str = "the server asks for the password in clear text or as MD5 over a \
                       connection without TLS";

/// A password of the roles that the server asks for in clear and as MD5, lets in without one,
/// or asks for with SCRAM of few iterations.
const WEAK: &str = "weak-pw-5e0b";

/// SCRAM's iterations of the role `few_iterations`: fewer than PostgreSQL's 4096.
const FEW_ITERATIONS: u32 = 1000;

/// A server with TLS, whose roles `clear` and `md5` it asks for their password in clear and
/// as MD5, `trusted` it lets in without one, and `few_iterations` it asks for with SCRAM of
/// 1000 iterations, with or without TLS.
fn tls_server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let server = Server::start_with(Setup {
            hba: vec![
                "host all clear 127.0.0.1/32 password".into(),
                "host all md5 127.0.0.1/32 md5".into(),
                "host all trusted 127.0.0.1/32 trust".into(),
            ],
            ..Setup::default()
        });
        server.admin(&format!(
            "SET password_encryption = 'md5'; \
             CREATE ROLE clear LOGIN PASSWORD '{WEAK}'; CREATE ROLE md5 LOGIN PASSWORD '{WEAK}'; \
             CREATE ROLE trusted LOGIN; \
             CREATE ROLE few_iterations LOGIN PASSWORD '{}';",
            scram_verifier(WEAK, FEW_ITERATIONS)
        ));
        server
    })
}

/// A server without TLS.
fn plain_server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        Server::start_with(Setup {
            plain: true,
            ..Setup::default()
        })
    })
}

/// The SCRAM-SHA-256 verifier of `password` with `iterations`, as PostgreSQL stores it
/// (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, RFC 5802): PostgreSQL 15
/// makes verifiers of 4096 iterations only (16 has `scram_iterations`), and takes one made
/// elsewhere as a role's password. Computed by Python's hashlib, the password on its input.
fn scram_verifier(password: &str, iterations: u32) -> String {
    const SCRIPT: &str = "import base64, hashlib, hmac, sys\n\
        password, iterations = sys.stdin.read().split('\\n')[:2]\n\
        salt = b'sparkds-few-salt'\n\
        salted = hashlib.pbkdf2_hmac('sha256', password.encode(), salt, int(iterations))\n\
        client = hmac.new(salted, b'Client Key', 'sha256').digest()\n\
        server = hmac.new(salted, b'Server Key', 'sha256').digest()\n\
        b64 = lambda b: base64.b64encode(b).decode()\n\
        print(f'SCRAM-SHA-256${iterations}:{b64(salt)}${b64(hashlib.sha256(client).digest())}:{b64(server)}')\n";
    let mut python = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    if let Some(mut input) = python.stdin.take() {
        write!(input, "{password}\n{iterations}\n").expect("python3 reads its input");
    }
    let output = python.wait_with_output().expect("python3 ends");
    assert!(output.status.success(), "python3 made no verifier");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
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
fn with_an_authority_and_no_sslmode_the_certificate_and_its_host_are_checked() -> sparkds::Result<()>
{
    let server = tls_server();
    let ca = authority("ca.pem");
    let given = [("sslrootcert", ca.as_str())];
    assert!(read_ssl(server, "localhost", TESTS, &given)?);
    let error = message(read_ssl(server, "127.0.0.1", TESTS, &given));
    assert!(error.contains("certificate not valid for name"), "{error}");
    Ok(())
}

#[test]
fn require_encrypts_by_default_without_verifying_and_disable_does_not() -> sparkds::Result<()> {
    let server = tls_server();
    assert!(read_ssl(server, "127.0.0.1", TESTS, &[])?, "TLS by default");
    for mode in ["require", "prefer"] {
        assert!(read_ssl(server, "127.0.0.1", TESTS, &[("sslmode", mode)])?);
    }
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
fn a_server_without_tls_is_refused_unless_an_option_allows_plain_text() -> sparkds::Result<()> {
    let server = plain_server();
    let ca = authority("ca.pem");
    for (more, mode) in [
        (vec![], "require"),
        (vec![("sslrootcert", ca.as_str())], "verify-full"),
        (
            vec![("sslmode", "verify-ca"), ("sslrootcert", ca.as_str())],
            "verify-ca",
        ),
    ] {
        let error = message(read_ssl(server, "localhost", TESTS, &more));
        assert!(
            error.contains(&format!(
                "the server has no TLS, and sslmode {mode} connects only with TLS"
            )),
            "{error}"
        );
        assert!(
            error.contains("set the option `sslmode` to disable"),
            "{error}"
        );
    }
    // Plain text when an option says so; `prefer` only because the server has no TLS.
    for mode in ["disable", "allow", "prefer"] {
        assert!(!read_ssl(server, "127.0.0.1", TESTS, &[("sslmode", mode)])?);
    }
    let error = message(read_ssl(
        server,
        "localhost",
        TESTS,
        &[
            ("sslmode", "verify-full"),
            ("sslrootcert", "/nonexistent/ca.pem"),
        ],
    ));
    assert!(
        error.contains("option `sslrootcert` (/nonexistent/ca.pem), needed by sslmode verify-full"),
        "{error}"
    );
    Ok(())
}

#[test]
fn a_unix_socket_connects_without_tls_whatever_sslmode_says() -> sparkds::Result<()> {
    // PostgreSQL offers no TLS on a Unix socket, and libpq ignores sslmode there.
    let server = tls_server();
    // The directory of the server's socket, as the host of a URL.
    let host = server.dir.display().to_string().replace('/', "%2F");
    assert!(!read_ssl(server, &host, TESTS, &[])?);
    Ok(())
}

#[test]
fn over_tls_only_scram_with_channel_binding_is_accepted_unless_an_option_says_otherwise(
) -> sparkds::Result<()> {
    let server = tls_server();
    for role in ["clear", "md5", "trusted"] {
        let user = (role, WEAK);
        let error = message(read_ssl(server, "127.0.0.1", user, &[]));
        assert!(
            error.contains("on a TLS connection, where only SCRAM-SHA-256-PLUS (channel binding)"),
            "{role}: {error}"
        );
        assert!(error.contains("`channelBinding`"), "{error}");
        assert!(!error.contains(WEAK), "{error}");
        assert!(read_ssl(
            server,
            "127.0.0.1",
            user,
            &[("channelBinding", "prefer")]
        )?);
    }
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
        let allowed = [("sslmode", "disable"), ("allowPasswordWithoutTls", "true")];
        assert!(!read_ssl(server, "127.0.0.1", user, &allowed)?);
    }
    Ok(())
}

#[test]
fn scram_with_fewer_iterations_than_postgresqls_default_is_refused() -> sparkds::Result<()> {
    let server = tls_server();
    let user = ("few_iterations", WEAK);
    for more in [vec![], vec![("sslmode", "disable")]] {
        let error = message(read_ssl(server, "127.0.0.1", user, &more));
        assert!(
            error.contains(&format!(
                "the server asks for SCRAM-SHA-256 with {FEW_ITERATIONS} iterations, fewer \
                 than the 4096 that the option `minScramIterations` requires"
            )),
            "{more:?}: {error}"
        );
        assert!(!error.contains(WEAK), "{error}");
    }
    // The verifier is right: with a lower bound that admits it, the role connects.
    assert!(read_ssl(
        server,
        "127.0.0.1",
        user,
        &[("minScramIterations", &FEW_ITERATIONS.to_string())]
    )?);
    Ok(())
}

/// The `SSLRequest` message: its length and code.
const SSL_REQUEST: [u8; 8] = [0, 0, 0, 8, 4, 210, 22, 47];

/// Answers `connections` connections on `listener` in the server's place: each time it
/// refuses TLS, then asks for the password in clear text. Returns everything the connector
/// sent after its `SSLRequest`s, until it closed each connection or for 3 s.
fn impersonate(listener: TcpListener, connections: usize) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut received = Vec::new();
        for _ in 0..connections {
            let Ok((mut socket, _)) = listener.accept() else {
                break;
            };
            let _ = socket.set_read_timeout(Some(Duration::from_secs(3)));
            // An `SSLRequest` (refused), or the startup message of a connection without TLS.
            let mut first = [0u8; 8];
            if socket.read_exact(&mut first).is_err() {
                continue;
            }
            if first == SSL_REQUEST
                && (socket.write_all(b"N").is_err() || socket.read_exact(&mut first).is_err())
            {
                continue;
            }
            received.extend_from_slice(&first);
            let length = i32::from_be_bytes([first[0], first[1], first[2], first[3]]);
            let mut startup = vec![0u8; (length as usize).saturating_sub(8)];
            if socket.read_exact(&mut startup).is_ok() {
                received.extend_from_slice(&startup);
                let mut clear = vec![b'R'];
                clear.extend_from_slice(&8i32.to_be_bytes());
                clear.extend_from_slice(&3i32.to_be_bytes());
                let _ = socket.write_all(&clear);
            }
            let _ = socket.read_to_end(&mut received);
        }
        received
    })
}

#[test]
fn a_server_that_asks_for_the_password_in_clear_never_gets_it() {
    for (mode, connections, expected) in [
        // By default, whoever answers "no TLS" gets no startup message at all.
        (
            None,
            1,
            "the server has no TLS, and sslmode require connects only with TLS",
        ),
        // With plain text allowed, it gets no password: `prefer` connects again without TLS
        // once the server said it has none.
        (Some("prefer"), 2, REFUSED),
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = listener.local_addr().expect("its address").port();
        let impersonator = impersonate(listener, connections);
        let mut options = vec![
            ("url", format!("postgresql://127.0.0.1:{port}/sparkds")),
            ("user", "sparkds".to_string()),
            ("password", PASSWORD.to_string()),
            ("dbtable", "t".to_string()),
        ];
        options.extend(mode.map(|mode| ("sslmode", mode.to_string())));
        let error = message(library().and_then(|l| l.batch_read().options(options).run()));
        let received = impersonator.join().expect("the impersonator ends");
        assert!(
            !received
                .windows(PASSWORD.len())
                .any(|w| w == PASSWORD.as_bytes()),
            "the password was sent: {received:?}"
        );
        assert_eq!(received.is_empty(), mode.is_none(), "{received:?}");
        assert!(error.contains(expected), "{mode:?}: {error}");
    }
}
