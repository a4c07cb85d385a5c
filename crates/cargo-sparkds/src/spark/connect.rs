//! `cargo sparkds spark --connect`: Spark's own Connect server (`SparkConnectServer`, started
//! with the Spark's `spark-submit`) with the JVM plugin and the library, on 127.0.0.1. Its URL
//! is printed once it listens; it runs until Ctrl-C or until it ends.
//!
//! Any user of the machine can connect to 127.0.0.1: the server takes only clients that give
//! a token made for this run (Spark Connect's `spark.connect.authenticate.token`), which the
//! server reads from a file only this user reads and the user gets in the printed URL. The
//! server is ready when the child itself listens on the port: a connection that succeeds may
//! reach another process that took the port first. The URL names `localhost`, which a client
//! may try as `[::1]` first: the command holds `[::1]:PORT` while the server runs, so that no
//! one else listens there ([`network::hold_ipv6_loopback`]). Like every session of the command,
//! the server binds to 127.0.0.1 only and authenticates its executors ([`network`]).

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use sparkds::{Error, Result};

use super::listener::{listener, Listener};
use super::network;
use super::signals::Guard;
use super::Session;

/// Spark's `spark.redaction.regex` for the server and the sessions: Spark's default, and `url`,
/// which Spark redacts in options (`spark.sql.redaction.options.regex`) but not in its
/// configuration, where the catalog's options are (`spark.sql.catalog.native.url`): its value
/// would reach the event log and the environment page. It matches the keys that
/// [`sparkds::redact::is_secret_key`] calls secret.
pub const REDACTION_REGEX: &str = "(?i)secret|password|token|access[.]?key|url";

/// How long the server may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(300);

/// Starts the server and waits for it to end.
pub(super) fn serve(
    session: &Session<'_>,
    jar: &Path,
    port: u16,
    options: &[(String, String)],
) -> Result<ExitCode> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    if TcpListener::bind(address).is_err() {
        return Err(Error::usage(format!(
            "port {port} of 127.0.0.1 is in use: pass another with --connect PORT"
        )));
    }
    // Held until the server ends: a client of `localhost` would give [::1]'s listener the token.
    let ipv6_hold = network::hold_ipv6_loopback(port)?;
    let submit = session.spark.home.join("bin").join("spark-submit");
    let has_server = std::fs::read_dir(session.spark.home.join("jars"))
        .map(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("spark-connect_")
            })
        })
        .unwrap_or(false);
    if !has_server || !submit.is_file() {
        return Err(Error::usage(format!(
            "Spark {} from {} has no Spark Connect server (jars/spark-connect_*.jar and \
             bin/spark-submit): use pyspark 4.3 or later, or a Spark distribution that has it",
            session.spark.version, session.spark.origin
        )));
    }
    // The token, the authentication secret of the server's processes and the source's options
    // go in a file only this user reads, not on spark-submit's command line, which any user of
    // the machine sees (`ps`): an option may be a password. Spark reads the file as it starts;
    // it is removed once the server listens, when the command ends, and on Ctrl-C.
    let token = network::random_secret("the Spark Connect server's token")?;
    let secret = network::random_secret("the Spark Connect server's authentication secret")?;
    let options_file = session
        .scratch()?
        .join(format!("connect-{port}.properties"));
    let signals = Guard::install(true)?;
    signals.remove_on_signal(&options_file);
    let removed = RemoveOnDrop(&options_file);
    write_private(&options_file, &properties(options, &token, &secret))?;
    let mut child = Command::new("bash")
        .arg(&submit)
        .args(server_args(session, jar, port, &options_file)?)
        .env("SPARK_HOME", &session.spark.home)
        .envs(session.spark_env()?)
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| Error::usage(format!("cannot run {}: {e}", submit.display())))?;
    signals.child(child.id());
    let ready = wait_until_listening(&mut child, port, &signals);
    let status = match ready {
        Ok(()) => {
            drop(removed);
            print_url(session, port, &token);
            child.wait()
        }
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            signals.child(0);
            return Err(e);
        }
    };
    signals.child(0);
    drop(ipv6_hold);
    let status = status
        .map_err(|e| Error::usage(format!("cannot wait for the Spark Connect server: {e}")))?;
    Ok(ExitCode::from(
        u8::try_from(status.code().unwrap_or(0)).unwrap_or(1),
    ))
}

/// Waits until `child` listens on `port` of 127.0.0.1.
///
/// # Errors
///
/// When the child ends first, another process listens on the port, a signal came, or the
/// server takes longer than [`START_TIMEOUT`].
fn wait_until_listening(child: &mut std::process::Child, port: u16, signals: &Guard) -> Result<()> {
    let started = Instant::now();
    loop {
        match listener(port, child.id()) {
            Listener::Child => return Ok(()),
            Listener::Other => {
                return Err(Error::usage(format!(
                    "another process listens on port {port} of 127.0.0.1, not the Spark \
                     Connect server that this command started: the server was stopped and its \
                     URL, which holds its token, not printed; pass another port with --connect \
                     PORT"
                )))
            }
            Listener::Nobody => {}
        }
        if signals.received() {
            return Err(Error::usage(
                "stopped before the Spark Connect server listened",
            ));
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::usage(format!(
                "the Spark Connect server ended ({status}) before it listened on port {port}: \
                 its messages are above"
            )));
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(Error::usage(format!(
                "the Spark Connect server did not listen on port {port} within {} s",
                START_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The URL with the token, and how to use it. `localhost`, not 127.0.0.1: PySpark's client
/// sends a token without TLS only to `localhost` (to 127.0.0.1 it would speak TLS, which the
/// server does not); the command holds `[::1]` of the port, where the client may go first.
fn print_url(session: &Session<'_>, port: u16, token: &str) {
    let url = format!("sc://localhost:{port}/;token={token}");
    println!("Spark Connect server: {url}");
    println!(
        "  (the token is this run's: keep the URL to yourself; clients without it are refused)"
    );
    println!("  from pyspark.sql import SparkSession");
    println!("  spark = SparkSession.builder.remote(\"{url}\").getOrCreate()");
    println!(
        "  spark.sql(\"SELECT * FROM native.{} LIMIT 5\").show()",
        session.name
    );
    println!("Ctrl-C stops it.");
}

/// spark-submit's arguments: the server's class, the master and the configuration, with the
/// source's options in `options_file` (read as well as Spark's own `spark-defaults.conf`).
fn server_args(
    session: &Session<'_>,
    jar: &Path,
    port: u16,
    options_file: &Path,
) -> Result<Vec<String>> {
    let library_dir = session
        .library
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let warehouse = session.scratch()?.join("warehouse");
    let conf = vec![
        ("spark.jars".to_string(), jar.display().to_string()),
        ("spark.driver.extraLibraryPath".into(), library_dir.clone()),
        ("spark.executor.extraLibraryPath".into(), library_dir),
        (
            "spark.sql.catalog.native".into(),
            "dev.sparkds.spark.NativeCatalog".into(),
        ),
        (
            "spark.connect.grpc.binding.address".into(),
            "127.0.0.1".into(),
        ),
        ("spark.connect.grpc.binding.port".into(), port.to_string()),
        // A taken port fails the start, rather than moving the server to another port.
        ("spark.connect.grpc.port.maxRetries".into(), "0".into()),
        ("spark.redaction.regex".into(), REDACTION_REGEX.into()),
        ("spark.ui.enabled".into(), "false".into()),
        (
            "spark.sql.warehouse.dir".into(),
            warehouse.display().to_string(),
        ),
        ("spark.log.level".into(), "WARN".into()),
    ];
    let conf = conf.into_iter().chain(
        network::configuration()
            .into_iter()
            .map(|(key, value)| (key.to_string(), value.to_string())),
    );
    let mut args = vec![
        "--class".to_string(),
        "org.apache.spark.sql.connect.service.SparkConnectServer".to_string(),
        "--master".to_string(),
        session.master.to_string(),
        "--properties-file".to_string(),
        options_file.display().to_string(),
        // Without it, a properties file replaces spark-defaults.conf (Spark 4.0 and later).
        "--load-spark-defaults".to_string(),
    ];
    for (key, value) in conf {
        args.push("--conf".to_string());
        args.push(format!("{key}={value}"));
    }
    Ok(args)
}

/// The server's token (`spark.connect.authenticate.token`), the authentication secret of its
/// processes (`spark.authenticate.secret`) and the catalog's options
/// (`spark.sql.catalog.native.<key>`: its sources' options) as a Java properties file.
fn properties(options: &[(String, String)], token: &str, secret: &str) -> String {
    let mut entries = vec![
        (
            "spark.connect.authenticate.token".to_string(),
            token.to_string(),
        ),
        network::secret_configuration(secret),
    ];
    entries.extend(
        options
            .iter()
            .map(|(key, value)| (format!("spark.sql.catalog.native.{key}"), value.clone())),
    );
    properties_text(&entries)
}

/// `entries` as the lines of a Java properties file, escaped as `java.util.Properties` reads
/// them.
pub(super) fn properties_text(entries: &[(String, String)]) -> String {
    let mut text = String::new();
    for (key, value) in entries {
        text.push_str(&escaped(key, true));
        text.push('=');
        text.push_str(&escaped(value, false));
        text.push('\n');
    }
    text
}

/// `text` as a key (`key`) or a value of a properties file: the characters that end a key or
/// start a comment, backslashes, line breaks and other control characters escaped; a space
/// escaped in a key and at the start of a value, where the reader would drop it.
fn escaped(text: &str, key: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{c}' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            ' ' if key || i == 0 => out.push_str("\\ "),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Writes `text` to a new file at `path` that only this user may read.
fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let _ = std::fs::remove_file(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// Removes a file when dropped: on every way out of `serve`.
struct RemoveOnDrop<'a>(&'a Path);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `java.util.Properties.load` reads from a line, for the escapes `escaped` writes.
    fn unescaped(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('f') => out.push('\u{c}'),
                Some('u') => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let code = u32::from_str_radix(&hex, 16).expect("four hex digits");
                    out.push(char::from_u32(code).expect("a character"));
                }
                Some(other) => out.push(other),
                None => {}
            }
        }
        out
    }

    #[test]
    fn the_redaction_regex_finds_the_keys_that_the_host_calls_secret() {
        // What `(?i)a|b|...` finds in a key, for this regex's plain alternatives.
        let words: Vec<String> = REDACTION_REGEX
            .trim_start_matches("(?i)")
            .split('|')
            .map(|w| w.replace("[.]?", "."))
            .collect();
        let finds = |key: &str| {
            let key = key.to_ascii_lowercase();
            words.iter().any(|w| {
                key.contains(w.as_str()) || (w.contains('.') && key.contains(&w.replace('.', "")))
            })
        };
        for key in [
            "url",
            "jdbcUrl",
            "client_secret",
            "db.password",
            "refresh_token",
            "fs.s3a.access.key",
            "accessKey",
            "end",
            "path",
            "batch_rows",
        ] {
            assert_eq!(finds(key), sparkds::redact::is_secret_key(key), "{key}");
        }
    }

    #[test]
    fn options_are_written_as_properties_that_read_back_the_same() {
        let options = vec![
            ("end".to_string(), "20".to_string()),
            ("password".to_string(), " p=a:s#s!\\w\nö\u{1}d ".to_string()),
        ];
        let text = properties(&options, "0a1b", "2c3d");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], "spark.connect.authenticate.token=0a1b");
        assert_eq!(lines[1], "spark.authenticate.secret=2c3d");
        assert_eq!(lines[2], "spark.sql.catalog.native.end=20");
        let (key, value) = lines[3].split_once("=").expect("key=value");
        assert_eq!(key, "spark.sql.catalog.native.password");
        assert_eq!(unescaped(value), options[1].1);
        // An unescaped `=` or `:` would end the key early; a leading space would be dropped.
        assert!(value.starts_with("\\ p\\=a\\:s\\#s\\!"), "{value}");
    }
}
