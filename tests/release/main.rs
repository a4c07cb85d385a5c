//! Tests: release. The artifacts that a release publishes, built from this checkout as the
//! release workflow builds them (.github/workflows/release.yml), and used as a user uses them:
//!
//! - the JVM plugin as a Maven repository (`jvm/maven.sh`, with the suite's JNI library as a
//!   release's `--jni-dir`): its layout, POM, checksums, sources, and the JNI library inside
//!   with its recorded hash; a jar whose library is not the one it recorded is refused;
//! - its signed bundle for Maven Central (`.github/release/maven-central.sh bundle`, a key made
//!   for the test);
//! - the crates' release logic (`.github/release/crates.py`): the publishing order, the tag
//!   check, and the record of the released jars in cargo-sparkds;
//! - the release rehearsal (`rehearsal.rs`): local mirrors of every registry (crates, Maven,
//!   wheels, the git repository at its tag), and in a fresh HOME that no path of the checkout
//!   reaches, what the README tells a user after a release: `cargo install cargo-sparkds`,
//!   `cargo generate --git`, build, `show`, `check`, `cargo sparkds spark --sql` with the
//!   released plugin, `spark-submit --packages` and the bridge installed with pip, each reading
//!   examples/c_range or the generated project.
//!
//! Each step prints its time. It needs what tests/jvm needs (a JDK, python3's pyspark), `gpg`,
//! `zip` and `git`, cargo's download cache of Cargo.lock's crates (`cargo fetch --locked`), and
//! PyPI for the wheel's build backend (setuptools, as pip fetches it).

mod rehearsal;
#[path = "../support/run_dir.rs"]
mod run_dir;
#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod spark_helpers;

use spark_helpers::checkout;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use sha2::{Digest, Sha256};
use spark_helpers::{checked, Repository};

/// The platform key of this machine (the JNI library's folder in the jar).
fn platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x86_64",
        ("linux", "aarch64") => "linux-aarch64",
        ("macos", "x86_64") => "osx-x86_64",
        ("macos", "aarch64") => "osx-aarch64",
        (os, arch) => panic!("the release tests run on Linux or macOS, not {os}-{arch}"),
    }
}

fn jni_file_name() -> &'static str {
    if cfg!(target_os = "macos") {
        "libsparkds_jni.dylib"
    } else {
        "libsparkds_jni.so"
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `command`, printing how long `step` took; panics with its output when it fails.
fn timed(step: &str, command: &mut Command) -> Output {
    let started = Instant::now();
    let output = checked(command, step);
    println!("step `{step}`: {:.1} s", started.elapsed().as_secs_f64());
    output
}

/// The workspace's version (the root Cargo.toml's `[workspace.package]`), which this test crate
/// inherits.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// python3's pyspark: its directory (bin/spark-submit, jars/).
fn pyspark_home() -> PathBuf {
    let output = checked(
        Command::new("python3").args([
            "-c",
            "import os, pyspark; print(os.path.dirname(pyspark.__file__))",
        ]),
        "python3 -c 'import pyspark' (pip install -r tests/spark/requirements.txt)",
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// What one build of the release's artifacts left, shared by the tests.
struct Release {
    dir: tempfile::TempDir,
    repository: Repository,
    /// The local Maven repository.
    maven: PathBuf,
    /// `<group>:<artifact>:<version>` of this Spark's line.
    coordinates: String,
    /// The line `jvm/maven.sh` printed, as released-plugin.txt records it.
    record: String,
    /// c_range's library, in a directory of its own.
    c_range_dir: PathBuf,
}

impl Release {
    /// The artifact's files: `<directory>/<artifact>-<version><suffix>`.
    fn artifact(&self, suffix: &str) -> PathBuf {
        let (group, rest) = self.coordinates.split_once(':').expect("coordinates");
        let (artifact, version) = rest.split_once(':').expect("coordinates");
        self.maven
            .join(group.replace('.', "/"))
            .join(artifact)
            .join(version)
            .join(format!("{artifact}-{version}{suffix}"))
    }
}

/// Builds the Maven repository once: `jvm/maven.sh --jni-dir`, with the JNI library of the
/// suite's compilation (CARGO_CDYLIB_FILE_SPARKDS_JNI), else one built here.
fn release() -> &'static Release {
    static RELEASE: OnceLock<Release> = OnceLock::new();
    RELEASE.get_or_init(|| {
        let repository = Repository::locate();
        // Outside the checkout, since the rehearsal's user must reach no path of it; a static
        // is never dropped, so a later run removes it (and the suite, with its run's TMPDIR).
        let dir = run_dir::new_run_dir(&std::env::temp_dir(), "sparkds-release-");
        let jni = match std::env::var_os("CARGO_CDYLIB_FILE_SPARKDS_JNI") {
            Some(file) => PathBuf::from(file),
            None => {
                timed(
                    "cargo build -p sparkds-jni",
                    Command::new(env!("CARGO"))
                        .args(["build", "--locked", "-p", "sparkds-jni"])
                        .current_dir(repository.path("")),
                );
                repository.path("target/debug").join(jni_file_name())
            }
        };
        let jni_dir = dir.path().join("jni");
        std::fs::create_dir_all(jni_dir.join(platform())).expect("create jni/<platform>");
        std::fs::copy(&jni, jni_dir.join(platform()).join(jni_file_name()))
            .expect("copy the JNI library");
        let maven = dir.path().join("maven");
        let output = timed(
            "jvm/maven.sh",
            Command::new("bash")
                .arg(repository.path("jvm/maven.sh"))
                .arg("--out")
                .arg(&maven)
                .arg("--jni-dir")
                .arg(&jni_dir)
                .env("CARGO_TARGET_DIR", dir.path().join("target")),
        );
        let record = String::from_utf8_lossy(&output.stdout).trim().to_string();
        let coordinates = record
            .split_whitespace()
            .nth(1)
            .unwrap_or_else(|| panic!("jvm/maven.sh printed `{record}`"))
            .to_string();
        let c_range = repository.build_c_range();
        let c_range_dir = dir.path().join("lib");
        std::fs::create_dir_all(&c_range_dir).expect("create lib/");
        std::fs::copy(
            &c_range,
            c_range_dir.join(c_range.file_name().expect("a file name")),
        )
        .expect("copy c_range");
        Release {
            dir,
            repository,
            maven,
            coordinates,
            record,
            c_range_dir,
        }
    })
}

/// The entries of a zip archive (a jar), with their bytes.
fn entries(archive: &Path) -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(archive).expect("open an archive");
    let mut zip = zip::ZipArchive::new(file).expect("a zip archive");
    (0..zip.len())
        .map(|i| {
            let mut entry = zip.by_index(i).expect("an entry");
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).expect("read an entry");
            (entry.name().expect("an entry name").to_string(), bytes)
        })
        .filter(|(name, _)| !name.ends_with('/'))
        .collect()
}

#[test]
fn the_maven_artifact_of_a_spark_line_has_its_jar_sources_javadoc_pom_and_checksums() {
    let release = release();
    let version = VERSION;
    let line_of_spark = release.record.split_whitespace().next().expect("a line");
    let scala = std::fs::read_to_string(release.repository.path("jvm/spark-lines.txt"))
        .expect("spark-lines.txt")
        .lines()
        .find_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            (fields.first() == Some(&line_of_spark)).then(|| fields[2].to_string())
        })
        .expect("the line is in jvm/spark-lines.txt");
    assert_eq!(
        release.coordinates,
        format!("dev.sparkds:spark-native-datasource-{line_of_spark}_{scala}:{version}")
    );
    // The files, and each one's checksums.
    let mut listing = String::new();
    for suffix in [".jar", "-sources.jar", "-javadoc.jar", ".pom"] {
        let file = release.artifact(suffix);
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        listing.push_str(&format!(
            "{:>9} {}\n",
            bytes.len(),
            file.file_name().unwrap().to_string_lossy()
        ));
        let sums = Command::new("python3")
            .args([
                "-c",
                "import hashlib, sys; data = open(sys.argv[1], 'rb').read(); \
                 print(' '.join(hashlib.new(a, data).hexdigest() for a in sys.argv[2:]))",
            ])
            .arg(&file)
            .args(["md5", "sha1", "sha256", "sha512"])
            .output()
            .expect("python3 runs");
        let sums = String::from_utf8_lossy(&sums.stdout);
        for (algorithm, wanted) in ["md5", "sha1", "sha256", "sha512"]
            .iter()
            .zip(sums.split_whitespace())
        {
            let recorded = std::fs::read_to_string(format!("{}.{algorithm}", file.display()))
                .unwrap_or_else(|e| panic!("{}.{algorithm}: {e}", file.display()));
            assert_eq!(recorded.trim(), wanted, "{}.{algorithm}", file.display());
        }
    }
    println!("{}:\n{listing}", release.coordinates);
    // The record names the jar that is there.
    let jar_bytes = std::fs::read(release.artifact(".jar")).expect("the jar");
    assert!(release.record.ends_with(&sha256_hex(&jar_bytes)));
    // The POM has what Maven Central requires.
    let pom = std::fs::read_to_string(release.artifact(".pom")).expect("the POM");
    let (_, artifact) = release.coordinates.split_once(':').expect("coordinates");
    let artifact = artifact.split(':').next().expect("an artifact");
    for wanted in [
        "<groupId>dev.sparkds</groupId>".to_string(),
        format!("<artifactId>{artifact}</artifactId>"),
        format!("<version>{version}</version>"),
        "<name>".to_string(),
        "<description>".to_string(),
        "<url>https://sparkds.github.io/spark-datasource-template/</url>".to_string(),
        "<license>".to_string(),
        "<developer>".to_string(),
        "<connection>scm:git:https://github.com/sparkds/spark-datasource-template.git</connection>"
            .to_string(),
        format!("<tag>v{version}</tag>"),
        format!("<artifactId>spark-sql_{scala}</artifactId>"),
        "<scope>provided</scope>".to_string(),
    ] {
        assert!(pom.contains(&wanted), "the POM has no {wanted}:\n{pom}");
    }
    // The jar: the classes, the service registration, the JNI library and its hash.
    let jar = entries(&release.artifact(".jar"));
    let library = format!(
        "dev/sparkds/spark/native/{}/{}",
        platform(),
        jni_file_name()
    );
    let bytes = |name: &str| {
        jar.iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.clone())
            .unwrap_or_else(|| panic!("the jar has no {name}"))
    };
    assert_eq!(
        String::from_utf8(bytes(&format!("{library}.sha256")))
            .expect("UTF-8")
            .trim(),
        sha256_hex(&bytes(&library)),
        "the recorded hash is the library's"
    );
    bytes("dev/sparkds/spark/DefaultSource.class");
    bytes("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister");
    // The sources jar: every main source, at its package path.
    let sources = entries(&release.artifact("-sources.jar"));
    let java_files = std::fs::read_dir(
        release
            .repository
            .path("jvm/src/main/java/dev/sparkds/spark"),
    )
    .expect("jvm/src")
    .filter(|e| {
        e.as_ref()
            .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "java"))
    })
    .count();
    let packaged = sources
        .iter()
        .filter(|(n, _)| {
            n.starts_with("dev/sparkds/spark/") && !n["dev/sparkds/spark/".len()..].contains('/')
        })
        .count();
    assert_eq!(
        packaged,
        java_files,
        "the sources jar: {:?}",
        sources.iter().map(|e| &e.0).collect::<Vec<_>>()
    );
    let javadoc = entries(&release.artifact("-javadoc.jar"));
    assert!(javadoc.iter().any(|(n, _)| n == "index.html"));
}

/// The Python program that spark-submit runs: it reads c_range through the plugin and prints
/// the count and the sum of its ids.
const READ_C_RANGE: &str = r#"
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
df = spark.read.format("native").option("source", "c_range").option("end", 1000).load()
row = df.selectExpr("count(*) AS n", "sum(id) AS total").first()
print(f"RESULT {row.n} {row.total}")
spark.stop()
"#;

/// A Java program that loads the plugin's JNI library from each jar it is given, each in a class
/// loader of its own (as a JVM ties a library to one loader), and prints one line per jar:
/// whether it could, or why not.
const LOAD_JNI: &str = r#"
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Paths;

public class LoadJni {
  public static void main(String[] jars) throws Exception {
    for (String jar : jars) {
      URL[] path = {Paths.get(jar).toUri().toURL()};
      try (URLClassLoader loader = new URLClassLoader(path, LoadJni.class.getClassLoader())) {
        Class<?> library = Class.forName("dev.sparkds.spark.JniLibrary", true, loader);
        library.getMethod("ensureLoaded").invoke(null);
        System.out.println("LOADED");
      } catch (java.lang.reflect.InvocationTargetException e) {
        System.out.println("REFUSED " + e.getCause().getMessage());
      }
    }
  }
}
"#;

/// Copies `jar` to `copy`, with `replace` deciding each entry's bytes (None leaves it out).
fn rewrite_jar(jar: &Path, copy: &Path, replace: impl Fn(&str, Vec<u8>) -> Option<Vec<u8>>) {
    let mut writer = zip::ZipWriter::new(std::fs::File::create(copy).expect("create a jar"));
    for (name, bytes) in entries(jar) {
        if let Some(bytes) = replace(&name, bytes) {
            writer
                .start_file(name, zip::write::SimpleFileOptions::default())
                .expect("an entry");
            writer.write_all(&bytes).expect("write an entry");
        }
    }
    writer.finish().expect("finish the jar");
}

/// Runs LoadJni, with Spark's jars on its class path, on `jars`: one JVM for them all.
fn load_jni(jars: &[&Path]) -> Vec<String> {
    let release = release();
    let work = tempfile::tempdir_in(release.dir.path()).expect("a work directory");
    let source = work.path().join("LoadJni.java");
    std::fs::write(&source, LOAD_JNI).expect("write LoadJni.java");
    let classpath = format!("{}/jars/*", pyspark_home().display());
    // A temporary directory of the JVM's own, to see what the plugin leaves in it.
    let tmpdir = work.path().join("java.io.tmpdir");
    std::fs::create_dir(&tmpdir).expect("create java.io.tmpdir");
    let output = timed(
        "java LoadJni",
        Command::new("java")
            .args(["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"])
            .arg(format!("-Djava.io.tmpdir={}", tmpdir.display()))
            .args(["-cp", &classpath])
            .arg(&source)
            .args(jars)
            .env_remove("SPARKDS_JNI_LIBRARY")
            .current_dir(work.path()),
    );
    // Loaded or refused, the copy of the JNI library is removed (on Linux and macOS): a copy
    // left for every refusal would fill the disk of a machine that retries.
    let left: Vec<_> = std::fs::read_dir(&tmpdir)
        .expect("list java.io.tmpdir")
        .flatten()
        .map(|e| e.file_name())
        .filter(|name| name.to_string_lossy().starts_with("sparkds_jni_"))
        .collect();
    assert!(
        left.is_empty(),
        "the plugin left {left:?} in java.io.tmpdir"
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The plugin loads the copy it extracted only when its bytes have the SHA-256 that the jar
/// records: a library changed in the jar, or a jar without the record, is refused with both
/// hashes or with the fix.
#[test]
fn the_plugin_loads_its_jni_library_only_when_the_copy_has_the_recorded_hash() {
    let release = release();
    let jar = release.artifact(".jar");
    let library = format!(
        "dev/sparkds/spark/native/{}/{}",
        platform(),
        jni_file_name()
    );
    let changed = release.dir.path().join("changed.jar");
    rewrite_jar(&jar, &changed, |name, mut bytes| {
        if name == library {
            bytes.push(0);
        }
        Some(bytes)
    });
    let unrecorded = release.dir.path().join("unrecorded.jar");
    rewrite_jar(&jar, &unrecorded, |name, bytes| {
        (!name.ends_with(".sha256")).then_some(bytes)
    });
    let said = load_jni(&[&jar, &changed, &unrecorded]);
    let [whole, changed, unrecorded] = said.as_slice() else {
        panic!("one line per jar: {said:?}");
    };
    assert_eq!(whole, "LOADED");
    let recorded = entries(&jar)
        .into_iter()
        .find(|(n, _)| *n == format!("{library}.sha256"))
        .map(|(_, b)| String::from_utf8(b).expect("UTF-8").trim().to_string())
        .expect("the record");
    assert!(
        changed.starts_with("REFUSED ")
            && changed.contains(&format!(", but the jar records {recorded} for /{library}")),
        "{changed}"
    );
    assert!(
        unrecorded.starts_with("REFUSED ")
            && unrecorded.contains("this jar has no SHA-256 for its JNI library"),
        "{unrecorded}"
    );
}

#[test]
fn the_maven_central_bundle_signs_every_artifact() {
    let release = release();
    let work = tempfile::tempdir_in(release.dir.path()).expect("a work directory");
    // A copy of the repository: the bundle writes signatures beside the artifacts.
    let repository = work.path().join("maven");
    checked(
        Command::new("cp")
            .arg("-R")
            .arg(&release.maven)
            .arg(&repository),
        "cp -R maven",
    );
    let gnupg = work.path().join("gnupg");
    std::fs::create_dir(&gnupg).expect("create GNUPGHOME");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700))
            .expect("chmod GNUPGHOME");
    }
    timed(
        "gpg --quick-gen-key",
        Command::new("gpg")
            .args(["--batch", "--passphrase", "", "--quick-gen-key"])
            .args([
                "release test <release-test@invalid>",
                "ed25519",
                "sign",
                "1d",
            ])
            .env("GNUPGHOME", &gnupg),
    );
    let zip_file = work.path().join("bundle.zip");
    timed(
        "maven-central.sh bundle",
        Command::new("bash")
            .arg(release.repository.path(".github/release/maven-central.sh"))
            .arg("bundle")
            .arg(&repository)
            .arg(&zip_file)
            .env("GNUPGHOME", &gnupg),
    );
    let bundled: Vec<String> = entries(&zip_file).into_iter().map(|(n, _)| n).collect();
    let artifacts: Vec<&String> = bundled
        .iter()
        .filter(|n| n.ends_with(".jar") || n.ends_with(".pom"))
        .collect();
    assert_eq!(artifacts.len(), 4, "{bundled:?}");
    for artifact in artifacts {
        for extra in [".asc", ".md5", ".sha1", ".sha256", ".sha512"] {
            assert!(
                bundled.contains(&format!("{artifact}{extra}")),
                "the bundle has no {artifact}{extra}: {bundled:?}"
            );
        }
        checked(
            Command::new("gpg")
                .args(["--batch", "--verify"])
                .arg(repository.join(format!("{artifact}.asc")))
                .arg(repository.join(artifact))
                .env("GNUPGHOME", &gnupg),
            "gpg --verify",
        );
    }
}

/// `crates.py record-plugin`: the lines jvm/maven.sh printed, one per Spark line, become the
/// record that cargo-sparkds's build reads; a missing line or another version is refused.
#[test]
fn the_release_records_every_line_s_jar_in_cargo_sparkds() {
    let release = release();
    let version = VERSION;
    let work = tempfile::tempdir_in(release.dir.path()).expect("a work directory");
    let record = work.path().join("released-plugin.txt");
    std::fs::copy(
        release
            .repository
            .path("crates/cargo-sparkds/released-plugin.txt"),
        &record,
    )
    .expect("copy the record");
    let lines: Vec<String> =
        std::fs::read_to_string(release.repository.path("jvm/spark-lines.txt"))
            .expect("spark-lines.txt")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| l.split_whitespace().next().expect("a line").to_string())
            .collect();
    let record_plugin = |files: &[PathBuf]| {
        Command::new("python3")
            .arg(release.repository.path(".github/release/crates.py"))
            .arg("record-plugin")
            .args(files)
            .env("SPARKDS_PLUGIN_RECORD", &record)
            .current_dir(release.repository.path(""))
            .output()
            .expect("python3 runs")
    };
    // One file per line, as each job of the workflow writes it; this line's is the real one.
    let mut files = Vec::new();
    for line in &lines {
        let text = if release.record.starts_with(&format!("{line} ")) {
            release.record.clone()
        } else {
            format!(
                "{line} dev.sparkds:spark-native-datasource-{line}_2.13:{version} {}",
                sha256_hex(line.as_bytes())
            )
        };
        let file = work.path().join(format!("plugin-{line}.txt"));
        std::fs::write(&file, format!("{text}\n")).expect("write a line's record");
        files.push(file);
    }
    let output = record_plugin(&files[1..]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("record one jar for each"),
        "{output:?}"
    );
    let output = record_plugin(&files);
    assert!(output.status.success(), "{output:?}");
    let written = std::fs::read_to_string(&record).expect("the record");
    let entries: Vec<&str> = written.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(entries.len(), lines.len(), "{written}");
    assert!(entries.contains(&release.record.as_str()), "{written}");
    // Written twice, the record is the same: the entries are replaced, the comments kept.
    let output = record_plugin(&files);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(&record).expect("the record"),
        written
    );
}

/// The crates publish in an order where each comes after every crate it depends on, and a tag
/// releases only the workspace's version.
#[test]
fn the_crates_publish_in_dependency_order_from_their_version_s_tag() {
    let repository = Repository::locate();
    let run = |args: &[&str]| {
        Command::new("python3")
            .arg(repository.path(".github/release/crates.py"))
            .args(args)
            .current_dir(repository.path(""))
            .output()
            .expect("python3 runs")
    };
    let output = run(&["order"]);
    assert!(output.status.success(), "{output:?}");
    let order: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let position = |name: &str| {
        order
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("{name} is not published: {order:?}"))
    };
    // What each crate's manifest depends on, by path, among the published ones.
    for name in &order {
        let manifest =
            std::fs::read_to_string(repository.path(&format!("crates/{name}/Cargo.toml")))
                .expect("a manifest");
        let dependencies = manifest
            .split("[dependencies]")
            .nth(1)
            .and_then(|rest| rest.split("\n[").next())
            .unwrap_or_default();
        for other in &order {
            if dependencies.contains(&format!("\n{other} = {{ path")) {
                assert!(
                    position(other) < position(name),
                    "{other} must be published before {name}: {order:?}"
                );
            }
        }
    }
    assert!(!order.iter().any(|n| n == "sparkds-jni" || n == "suite"));
    let version = VERSION;
    assert!(run(&["check-tag", &format!("v{version}")]).status.success());
    let refused = run(&["check-tag", "v99.0.0"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains(&format!("the tag v99.0.0 is not v{version}")),
        "{refused:?}"
    );
}

/// The Python program that reads c_range through the bridge installed from the wheel.
const READ_THROUGH_THE_BRIDGE: &str = r#"
import sys
import spark_native_bridge
from pyspark.sql import SparkSession
assert spark_native_bridge.__file__.startswith(sys.prefix), spark_native_bridge.__file__
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .getOrCreate())
spark_native_bridge.register(spark, sys.argv[1])
row = spark.read.format("c_range").option("end", 1000).load().selectExpr(
    "count(*) AS n", "sum(id) AS total").first()
print(f"RESULT {row.n} {row.total} from {spark_native_bridge.__file__}")
spark.stop()
"#;
