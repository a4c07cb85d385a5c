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
    let mut child = Command::new("bash")
        .arg(&submit)
        .args(server_args(session, jar, port, options)?)
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

/// spark-submit's arguments: the server's class, the master and the configuration.
fn server_args(
    session: &Session<'_>,
    jar: &Path,
    port: u16,
    options: &[(String, String)],
) -> Result<Vec<String>> {
    let library_dir = session
        .library
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let warehouse = session.scratch()?.join("warehouse");
    let mut conf = vec![
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
    conf.extend(
        options
            .iter()
            .map(|(key, value)| (format!("spark.sql.catalog.native.{key}"), value.clone())),
    );
    let mut args = vec![
        "--class".to_string(),
        "org.apache.spark.sql.connect.service.SparkConnectServer".to_string(),
        "--master".to_string(),
        session.master.to_string(),
    ];
    for (key, value) in conf {
        args.push("--conf".to_string());
        args.push(format!("{key}={value}"));
    }
    Ok(args)
}
