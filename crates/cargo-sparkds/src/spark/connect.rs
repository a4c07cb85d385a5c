//! `cargo sparkds spark --connect`: Spark's own Connect server (`SparkConnectServer`, started
//! with the Spark's `spark-submit`) with the JVM plugin and the library, on 127.0.0.1. Its URL
//! is printed once it listens; it runs until Ctrl-C or until it ends.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use sparkds::{Error, Result};

use super::Session;

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
    // The source's options go in a file only this user reads, not on spark-submit's command
    // line, which any user of the machine sees (`ps`): an option may be a password. Spark reads
    // the file as it starts, and it is removed once the server listens.
    let options_file = session
        .scratch()?
        .join(format!("connect-{port}.properties"));
    write_private(&options_file, &properties(options))?;
    let removed = RemoveOnDrop(&options_file);
    let mut child = Command::new("bash")
        .arg(&submit)
        .args(server_args(session, jar, port, &options_file)?)
        .env("SPARK_HOME", &session.spark.home)
        .envs(session.spark_env()?)
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| Error::usage(format!("cannot run {}: {e}", submit.display())))?;
    let started = Instant::now();
    while TcpStream::connect_timeout(&address, Duration::from_millis(500)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::usage(format!(
                "the Spark Connect server ended ({status}) before it listened on port {port}: \
                 its messages are above"
            )));
        }
        if started.elapsed() > START_TIMEOUT {
            let _ = child.kill();
            return Err(Error::usage(format!(
                "the Spark Connect server did not listen on port {port} within {} s",
                START_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(removed);
    println!("Spark Connect server: sc://127.0.0.1:{port}");
    println!("  from pyspark.sql import SparkSession");
    println!("  spark = SparkSession.builder.remote(\"sc://127.0.0.1:{port}\").getOrCreate()");
    println!(
        "  spark.sql(\"SELECT * FROM native.{} LIMIT 5\").show()",
        session.name
    );
    println!("Ctrl-C stops it.");
    let status = child
        .wait()
        .map_err(|e| Error::usage(format!("cannot wait for the Spark Connect server: {e}")))?;
    Ok(ExitCode::from(
        u8::try_from(status.code().unwrap_or(0)).unwrap_or(1),
    ))
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
        ("spark.ui.enabled".into(), "false".into()),
        (
            "spark.sql.warehouse.dir".into(),
            warehouse.display().to_string(),
        ),
        ("spark.log.level".into(), "WARN".into()),
    ];
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

/// The catalog's options (`spark.sql.catalog.native.<key>`: its sources' options) as the
/// lines of a Java properties file, escaped as `java.util.Properties` reads them.
fn properties(options: &[(String, String)]) -> String {
    let mut text = String::new();
    for (key, value) in options {
        text.push_str(&escaped(&format!("spark.sql.catalog.native.{key}"), true));
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
    fn options_are_written_as_properties_that_read_back_the_same() {
        let options = vec![
            ("end".to_string(), "20".to_string()),
            ("password".to_string(), " p=a:s#s!\\w\nö\u{1}d ".to_string()),
        ];
        let text = properties(&options);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0], "spark.sql.catalog.native.end=20");
        let (key, value) = lines[1].split_once("=").expect("key=value");
        assert_eq!(key, "spark.sql.catalog.native.password");
        assert_eq!(unescaped(value), options[1].1);
        // An unescaped `=` or `:` would end the key early; a leading space would be dropped.
        assert!(value.starts_with("\\ p\\=a\\:s\\#s\\!"), "{value}");
    }
}
