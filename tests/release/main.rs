//! Tests: release. The artifacts that a release publishes, built from this checkout as the
//! release workflow builds them (.github/workflows/release.yml), then used as a user uses them,
//! from local copies of their registries, in directories outside the checkout:
//!
//! - the JVM plugin as a Maven repository (`jvm/maven.sh`, with the suite's JNI library as a
//!   release's `--jni-dir`): its layout, POM, checksums, sources, and the JNI library inside
//!   with its recorded hash; `spark-submit --packages <coordinates> --repositories file://...`
//!   (a fresh Ivy cache) and `--jars <jar>` reading examples/c_range with only the data source's
//!   library path set; a jar whose library is not the one it recorded is refused;
//! - its signed bundle for Maven Central (`.github/release/maven-central.sh bundle`, a key made
//!   for the test);
//! - the Python bridge as the wheel `spark-native-bridge`, installed into a fresh virtual
//!   environment and reading c_range with nothing of the checkout on its path;
//! - the crates' release logic (`.github/release/crates.py`): the publishing order, the tag
//!   check, and the record of the released jars in cargo-sparkds.
//!
//! Each step prints its time. It needs what tests/jvm needs (a JDK, python3's pyspark), `gpg`
//! and `zip`, and PyPI for the wheel's build backend (setuptools, as pip fetches it).

#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod spark_helpers;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Instant;

use sha2::{Digest, Sha256};
use spark_helpers::{checked, output_again_on_worker_timeout, Repository};

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
        let dir = tempfile::tempdir().expect("a temporary directory");
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

/// Runs `spark-submit <arguments> read_c_range.py` in local mode, with the data source's
/// library path and nothing else of the checkout, and returns what it printed.
fn spark_submit(step: &str, arguments: &[String]) -> String {
    let release = release();
    let work = tempfile::tempdir_in(release.dir.path()).expect("a work directory");
    let app = work.path().join("read_c_range.py");
    std::fs::write(&app, READ_C_RANGE).expect("write the app");
    let library_path = release.c_range_dir.display().to_string();
    let output = timed(
        step,
        Command::new(pyspark_home().join("bin/spark-submit"))
            .args(arguments)
            .args(["--master", "local[2]", "--conf", "spark.ui.enabled=false"])
            .arg("--conf")
            .arg(format!("spark.driver.extraLibraryPath={library_path}"))
            .arg("--conf")
            .arg(format!("spark.executor.extraLibraryPath={library_path}"))
            .args([
                "--driver-java-options",
                "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
            ])
            .arg(&app)
            .current_dir(work.path())
            // The JNI library is the jar's, never another.
            .env_remove("SPARKDS_JNI_LIBRARY")
            .env_remove("SPARK_HOME")
            .env("PYSPARK_PYTHON", "python3"),
    );
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("RESULT 1000 499500"),
        "{step}: c_range's 1000 ids were not read:\n{printed}"
    );
    printed
}

#[test]
fn spark_submit_packages_resolves_the_plugin_from_the_maven_repository_and_reads_c_range() {
    let release = release();
    let ivy = release.dir.path().join("ivy");
    let printed = spark_submit(
        "spark-submit --packages",
        &[
            "--packages".to_string(),
            release.coordinates.clone(),
            "--repositories".to_string(),
            format!("file://{}", release.maven.display()),
            "--conf".to_string(),
            format!("spark.jars.ivy={}", ivy.display()),
        ],
    );
    let (group, rest) = release.coordinates.split_once(':').expect("coordinates");
    let (artifact, version) = rest.split_once(':').expect("coordinates");
    assert!(
        printed.contains(&format!("found {group}#{artifact};{version}")),
        "Ivy did not resolve {}:\n{printed}",
        release.coordinates
    );
    // What Ivy fetched is the jar of the repository.
    let fetched = ivy
        .join("jars")
        .join(format!("{group}_{artifact}-{version}.jar"));
    assert_eq!(
        std::fs::read(&fetched).unwrap_or_else(|e| panic!("{}: {e}", fetched.display())),
        std::fs::read(release.artifact(".jar")).expect("the jar")
    );
}

#[test]
fn spark_submit_jars_with_the_released_jar_reads_c_range() {
    let release = release();
    spark_submit(
        "spark-submit --jars",
        &[
            "--jars".to_string(),
            release.artifact(".jar").display().to_string(),
        ],
    );
}

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
    let output = timed(
        "java LoadJni",
        Command::new("java")
            .args([
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                &classpath,
            ])
            .arg(&source)
            .args(jars)
            .env_remove("SPARKDS_JNI_LIBRARY")
            .current_dir(work.path()),
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
    assert!(!order
        .iter()
        .any(|n| n == "sparkds-jni" || n == "template-tests"));
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

/// The wheel `spark-native-bridge`, built from python/ as the release workflow builds it,
/// installed with pip into a fresh virtual environment (pyspark and pyarrow from the
/// machine's), reads c_range with nothing of the checkout on its path.
#[test]
fn the_bridge_s_wheel_installs_into_a_fresh_environment_and_reads_c_range() {
    let release = release();
    let version = VERSION;
    let work = tempfile::tempdir_in(release.dir.path()).expect("a work directory");
    // Built from a copy of python/: setuptools writes build/ and *.egg-info beside the sources.
    let python = work.path().join("python");
    checked(
        Command::new("cp")
            .arg("-R")
            .arg(release.repository.path("python"))
            .arg(&python),
        "cp -R python",
    );
    let wheels = work.path().join("wheels");
    timed(
        "pip wheel python/",
        Command::new("python3")
            .args(["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir"])
            .arg(&wheels)
            .arg(&python),
    );
    let wheel = wheels.join(format!("spark_native_bridge-{version}-py3-none-any.whl"));
    let contents = entries(&wheel);
    let mut listing = String::new();
    for (name, bytes) in &contents {
        listing.push_str(&format!("{:>9} {name}\n", bytes.len()));
    }
    println!(
        "{} ({} bytes):\n{listing}",
        wheel.file_name().unwrap().to_string_lossy(),
        std::fs::metadata(&wheel).expect("the wheel").len()
    );
    let modules: Vec<&String> = contents
        .iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with("spark_native_bridge/"))
        .collect();
    let sources = std::fs::read_dir(release.repository.path("python/spark_native_bridge"))
        .expect("python/spark_native_bridge")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "py"))
        })
        .count();
    assert_eq!(modules.len(), sources, "{listing}");
    let metadata = contents
        .iter()
        .find(|(n, _)| n.ends_with(".dist-info/METADATA"))
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .expect("METADATA");
    for wanted in [
        "Name: spark-native-bridge".to_string(),
        format!("Version: {version}"),
        "License-Expression: Apache-2.0".to_string(),
        "Requires-Dist: pyarrow>=11".to_string(),
    ] {
        assert!(
            metadata.contains(&wanted),
            "METADATA has no {wanted}:\n{metadata}"
        );
    }
    // A fresh environment that sees the machine's pyspark and pyarrow, and pip's install of
    // the wheel alone (--no-index: nothing else is fetched), by the machine's pip (`--python`),
    // which spares the environment a pip of its own.
    let venv = work.path().join("venv");
    timed(
        "python3 -m venv",
        Command::new("python3")
            .args(["-m", "venv", "--system-site-packages", "--without-pip"])
            .arg(&venv),
    );
    let venv_python = venv.join("bin/python3");
    timed(
        "pip install spark-native-bridge",
        Command::new("python3")
            .args(["-m", "pip", "--python"])
            .arg(&venv_python)
            .args(["install", "--quiet", "--no-index", "--find-links"])
            .arg(&wheels)
            .arg(format!("spark-native-bridge=={version}"))
            .env_remove("PYTHONPATH"),
    );
    let app = work.path().join("read_through_the_bridge.py");
    std::fs::write(&app, READ_THROUGH_THE_BRIDGE).expect("write the app");
    let c_range = std::fs::read_dir(&release.c_range_dir)
        .expect("lib/")
        .next()
        .expect("c_range's library")
        .expect("an entry")
        .path();
    // Spark's Python workers may miss their 10 s to connect back on a loaded machine: that
    // failure alone is run once more (tests/support/checked.rs).
    let started = Instant::now();
    let output = output_again_on_worker_timeout(
        Command::new(&venv_python)
            .arg(&app)
            .arg(&c_range)
            .current_dir(work.path())
            .env_remove("PYTHONPATH")
            .env_remove("SPARK_HOME")
            // Spark's Python workers run the environment's interpreter, which has the bridge.
            .env("PYSPARK_PYTHON", &venv_python),
    );
    println!(
        "step `a read through the installed bridge`: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("RESULT 1000 499500 from {}", venv.display())),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
