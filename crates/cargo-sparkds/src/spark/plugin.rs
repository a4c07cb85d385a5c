//! Where the JVM plugin's jar comes from.
//!
//! A released command (the crate that the release workflow published, whose
//! `released-plugin.txt` records the jar of each Spark line and its SHA-256) takes the jar of the
//! found Spark's line from the Maven repository (Maven Central, or `SPARKDS_MAVEN_REPOSITORY`),
//! checks its SHA-256 against the record, and keeps it in the cache as `plugin/<sha256>.jar`:
//! nothing is compiled, whatever the project's SDK, and the jar holds the JNI library of every
//! platform. A command built from a checkout records no jar: it builds the plugin from the
//! sources it embeds, with the JNI library of the project's SDK (a path or git dependency; the
//! registry has no `sparkds-jni`), in the cache (`cache.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};
use sparkds::{Error, Result};

use super::cache::{Cache, JniSource};
use super::tools::Spark;

mod released {
    include!(concat!(env!("OUT_DIR"), "/released_plugin.rs"));
}

/// The variable that names another Maven repository than the record's: an `https://` or
/// `file://` URL, or a folder, laid out as a Maven repository (a mirror, or a release rehearsal).
pub const REPOSITORY_VARIABLE: &str = "SPARKDS_MAVEN_REPOSITORY";

/// One jar of the record: the Spark line, the Maven coordinates, the jar's path in a Maven
/// repository and its SHA-256 (lower-case hex).
type ReleasedJar<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The plugin's jar for `spark`, for the project in `project`.
///
/// # Errors
///
/// When the released command has no jar for the Spark's line, the jar cannot be fetched or is
/// not the recorded one, or (a command built from a checkout) the plugin cannot be built.
pub fn jar(cache: &Cache, spark: &Spark, project: &Path) -> Result<PathBuf> {
    if released::JARS.is_empty() {
        return cache.plugin_jar(spark, &jni_source(project)?);
    }
    let jar = released_jar_for(released::JARS, spark)?;
    let repository = std::env::var(REPOSITORY_VARIABLE)
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| released::MAVEN_REPOSITORY.to_string());
    cache.released_jar(jar.3, |partial| fetch(&repository, jar, partial))
}

/// The Spark line of a version: `4.3` of `4.3.0` (and of `4.3.0-preview1`).
fn spark_line(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// The record's jar for the line of `spark`, or the error that names the lines there are jars
/// for.
fn released_jar_for<'a>(jars: &'a [ReleasedJar<'a>], spark: &Spark) -> Result<ReleasedJar<'a>> {
    let line = spark_line(&spark.version);
    jars.iter()
        .find(|jar| jar.0 == line)
        .copied()
        .ok_or_else(|| {
            let lines: Vec<&str> = jars.iter().map(|jar| jar.0).collect();
            Error::usage(format!(
                "Spark {} from {}: cargo-sparkds {} has the JVM plugin of Spark {} only: run on \
                 a Spark of one of those lines (SPARK_HOME, or python3's pyspark), or pass \
                 --bridge to load the library through the Python bridge",
                spark.version,
                spark.origin,
                env!("CARGO_PKG_VERSION"),
                lines.join(", ")
            ))
        })
}

/// Where a Maven repository is.
#[derive(Debug, PartialEq)]
enum Location {
    Folder(PathBuf),
    Url(String),
}

/// `repository` as a folder (a `file://` URL, or a path) or an `http(s)://` URL.
fn location(repository: &str) -> Result<Location> {
    if let Some(rest) = repository.strip_prefix("file://") {
        if !rest.starts_with('/') {
            return Err(Error::usage(format!(
                "{REPOSITORY_VARIABLE}: `{}` names a host; a file URL is file:///<absolute path>",
                without_credentials(repository)
            )));
        }
        // `%20` and the like of a file URL's path; a `%` without two hex digits is kept.
        let path = percent_encoding::percent_decode_str(rest).decode_utf8_lossy();
        return Ok(Location::Folder(PathBuf::from(path.as_ref())));
    }
    if repository.starts_with("https://") || repository.starts_with("http://") {
        return Ok(Location::Url(repository.trim_end_matches('/').to_string()));
    }
    if repository.contains("://") {
        return Err(Error::usage(format!(
            "{REPOSITORY_VARIABLE}: `{}` is not an https://, http:// or file:// URL, nor a folder",
            without_credentials(repository)
        )));
    }
    Ok(Location::Folder(PathBuf::from(repository)))
}

/// A URL as it may be printed: the user and password of `https://user:token@host/` left out.
fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_end = rest.find('/').unwrap_or(rest.len());
            match rest[..host_end].rfind('@') {
                Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

/// Fetches `jar` from `repository` into `to` and checks its SHA-256 against the record.
fn fetch(repository: &str, jar: ReleasedJar, to: &Path) -> Result<()> {
    let (line, coordinates, path, sha256) = jar;
    let location = location(repository)?;
    let shown = match &location {
        Location::Folder(folder) => folder.join(path).display().to_string(),
        Location::Url(url) => without_credentials(&format!("{url}/{path}")),
    };
    eprintln!(
        "sparkds: fetching the JVM plugin of Spark {line}, {coordinates}, from {shown} (once: \
         the cache keeps it by its SHA-256, which cargo-sparkds {} records)",
        env!("CARGO_PKG_VERSION")
    );
    match &location {
        Location::Folder(folder) => {
            let file = folder.join(path);
            std::fs::copy(&file, to).map_err(|e| {
                Error::io(
                    format!(
                        "cannot read the JVM plugin {} ({REPOSITORY_VARIABLE} names that \
                         folder as a Maven repository)",
                        file.display()
                    ),
                    e,
                )
            })?;
        }
        Location::Url(url) => curl(&format!("{url}/{path}"), path, to)?,
    }
    let bytes =
        std::fs::read(to).map_err(|e| Error::io(format!("cannot read {}", to.display()), e))?;
    let got = sha256_hex(&bytes);
    if got != sha256 {
        return Err(Error::usage(format!(
            "the JVM plugin fetched from {shown} has the SHA-256 {got}, and cargo-sparkds {} \
             records {sha256} for {coordinates}: it is not the released jar, and it was not \
             kept (is {REPOSITORY_VARIABLE} a mirror of another release?)",
            env!("CARGO_PKG_VERSION")
        )));
    }
    Ok(())
}

/// Fetches `url` into `to` with curl, which uses the system's certificates and proxy settings
/// (`HTTPS_PROXY`), as pip and the JVM use theirs. The URL goes to curl on its standard input,
/// not on its command line, which any user of the machine sees (`ps`), in case it holds a
/// password.
fn curl(url: &str, path: &str, to: &Path) -> Result<()> {
    let fix = format!(
        "or fetch that file yourself into <folder>/{path} and set {REPOSITORY_VARIABLE}=<folder>"
    );
    let mut child = Command::new("curl")
        .args(["--fail", "--location", "--silent", "--show-error"])
        .args(["--retry", "2", "--config", "-", "--output"])
        .arg(to)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::usage(format!(
                "cannot run curl ({e}), which fetches the JVM plugin: install curl, {fix}"
            ))
        })?;
    let config = format!(
        "url = \"{}\"\n",
        url.replace('\\', "\\\\").replace('"', "\\\"")
    );
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write as _;
        // A write error shows as curl's own failure below.
        let _ = stdin.write_all(config.as_bytes());
    }
    let output = child
        .wait_with_output()
        .map_err(|e| Error::usage(format!("cannot wait for curl: {e}")))?;
    if output.status.success() {
        return Ok(());
    }
    Err(Error::usage(format!(
        "curl cannot fetch {}: {}; check the network (curl reads a proxy from HTTPS_PROXY), {fix}",
        without_credentials(url),
        String::from_utf8_lossy(&output.stderr).trim()
    )))
}

/// SHA-256 in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `sparkds-jni` from where the project's `spark-datasource` comes from, per `cargo metadata`.
fn jni_source(dir: &Path) -> Result<JniSource> {
    let metadata = crate::metadata::of(dir)?;
    let sdk = crate::metadata::package(&metadata, "spark-datasource").ok_or_else(|| {
        Error::usage(format!(
            "the project in {} does not depend on spark-datasource, whose sources build the \
             JVM plugin's JNI library: use --bridge",
            dir.display()
        ))
    })?;
    jni_source_of(
        sdk["source"].as_str(),
        Path::new(sdk["manifest_path"].as_str().unwrap_or_default()),
    )
}

/// `sparkds-jni` for an SDK from `source` (cargo metadata's: none for a path) whose manifest is
/// `manifest`, for a command that records no released plugin.
fn jni_source_of(source: Option<&str>, manifest: &Path) -> Result<JniSource> {
    match source {
        None => {
            let crates = manifest
                .parent()
                .and_then(Path::parent)
                .unwrap_or(Path::new("."));
            let jni = crates.join("sparkds-jni");
            if jni.join("Cargo.toml").is_file() {
                Ok(JniSource::Path(jni))
            } else {
                Err(Error::usage(format!(
                    "the SDK at {} has no sparkds-jni next to it ({}): point the project's \
                     spark-datasource at a checkout of spark-datasource-template, or use --bridge",
                    manifest.display(),
                    jni.display()
                )))
            }
        }
        Some(git) if git.starts_with("git+") => {
            let (location, rev) = git["git+".len()..].split_once('#').unwrap_or((git, ""));
            let url = location.split('?').next().unwrap_or(location);
            Ok(JniSource::Git {
                url: url.to_string(),
                rev: rev.to_string(),
            })
        }
        Some(other) => Err(Error::usage(format!(
            "this cargo-sparkds was built from a checkout, so it records no released JVM \
             plugin, and it builds the plugin from the JNI library of the project's SDK, which \
             comes from {other}, where sparkds-jni is not published: install the released \
             command (`cargo install --locked cargo-sparkds@{}`), depend on the SDK by path or \
             git, or pass --bridge",
            env!("CARGO_PKG_VERSION")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spark(version: &str) -> Spark {
        Spark {
            home: PathBuf::from("/spark"),
            version: version.to_string(),
            python: PathBuf::from("python3"),
            python_path: Vec::new(),
            origin: "python3's pyspark (python3)".to_string(),
        }
    }

    static JARS: &[ReleasedJar<'static>] = &[
        ("3.5", "dev.sparkds:a-3.5_2.12:0.1.0", "a.jar", "00"),
        ("4.3", "dev.sparkds:a-4.3_2.13:0.1.0", "b.jar", "11"),
    ];

    #[test]
    fn the_jar_of_the_spark_s_line_is_taken_and_another_line_is_refused_naming_the_released_ones() {
        assert_eq!(spark_line("4.3.0"), "4.3");
        assert_eq!(spark_line("4.3.0-preview1"), "4.3");
        let jar = released_jar_for(JARS, &spark("4.3.1")).expect("a jar for 4.3");
        assert_eq!(jar.1, "dev.sparkds:a-4.3_2.13:0.1.0");
        let refused = released_jar_for(JARS, &spark("4.4.0"))
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            refused.as_deref(),
            Some(
                format!(
                    "Spark 4.4.0 from python3's pyspark (python3): cargo-sparkds {} has the JVM \
                     plugin of Spark 3.5, 4.3 only: run on a Spark of one of those lines \
                     (SPARK_HOME, or python3's pyspark), or pass --bridge to load the library \
                     through the Python bridge",
                    env!("CARGO_PKG_VERSION")
                )
                .as_str()
            )
        );
    }

    #[test]
    fn a_repository_is_a_url_a_file_url_or_a_folder() {
        assert_eq!(
            location("https://repo1.maven.org/maven2/").ok(),
            Some(Location::Url("https://repo1.maven.org/maven2".to_string()))
        );
        assert_eq!(
            location("file:///tmp/a%20mirror").ok(),
            Some(Location::Folder(PathBuf::from("/tmp/a mirror")))
        );
        assert_eq!(
            location("/tmp/maven").ok(),
            Some(Location::Folder(PathBuf::from("/tmp/maven")))
        );
        let ftp = location("ftp://user:secret@host/maven")
            .err()
            .map(|e| e.to_string());
        assert!(
            ftp.as_deref()
                .is_some_and(|e| e.contains("`ftp://***@host/maven`") && !e.contains("secret")),
            "{ftp:?}"
        );
        assert!(location("file://host/maven").is_err());
    }

    #[test]
    fn a_jar_that_is_not_the_recorded_one_is_refused_and_the_recorded_one_is_kept() {
        let dir = tempfile::tempdir().expect("a directory");
        let folder = dir.path().join("maven");
        std::fs::create_dir_all(folder.join("dev")).expect("mkdir");
        std::fs::write(folder.join("dev/a.jar"), b"the jar").expect("write");
        let to = dir.path().join("fetched");
        let recorded = sha256_hex(b"the jar");
        let jar: ReleasedJar = ("4.3", "dev.sparkds:a:0.1.0", "dev/a.jar", &recorded);
        fetch(folder.to_str().expect("UTF-8"), jar, &to).expect("the recorded jar");
        assert_eq!(std::fs::read(&to).expect("fetched"), b"the jar");
        std::fs::write(folder.join("dev/a.jar"), b"another jar").expect("write");
        let refused = fetch(folder.to_str().expect("UTF-8"), jar, &to)
            .err()
            .map(|e| e.to_string());
        assert!(
            refused.as_deref().is_some_and(|e| e.contains(&format!(
                "has the SHA-256 {}, and cargo-sparkds {} records {recorded} for dev.sparkds:a:0.1.0",
                sha256_hex(b"another jar"),
                env!("CARGO_PKG_VERSION")
            ))),
            "{refused:?}"
        );
    }

    #[test]
    fn a_printed_url_has_no_credentials() {
        assert_eq!(
            without_credentials("https://me:token@maven.example.com/repo/a@b.jar"),
            "https://***@maven.example.com/repo/a@b.jar"
        );
        assert_eq!(
            without_credentials("https://maven.example.com/a@b"),
            "https://maven.example.com/a@b"
        );
    }

    #[test]
    fn the_jni_library_comes_from_where_the_sdk_comes_from() {
        let git = jni_source_of(
            Some("git+https://example.com/sdk.git?tag=v0.1.0#0123abcd"),
            Path::new("/x/Cargo.toml"),
        );
        assert!(matches!(
            git,
            Ok(JniSource::Git { ref url, ref rev }) if url == "https://example.com/sdk.git" && rev == "0123abcd"
        ));
        let registry = jni_source_of(
            Some("registry+https://github.com/rust-lang/crates.io-index"),
            Path::new("/x/Cargo.toml"),
        );
        assert!(registry.err().is_some_and(|e| e
            .to_string()
            .contains("install the released command (`cargo install --locked cargo-sparkds@")));
        let missing = jni_source_of(
            None,
            Path::new("/nonexistent/crates/spark-datasource/Cargo.toml"),
        );
        assert!(missing
            .err()
            .is_some_and(|e| e.to_string().contains("sparkds-jni")));
    }
}
