//! Tests: jvm. The JVM plugin (`jvm/`, with the JNI library `crates/sparkds-jni`) on real
//! Spark (the JVM of pyspark 4.3, local mode), with no Python in the data path.
//!
//! This binary builds the plugin's jar with `jvm/build.sh` (the dev profile of the JNI
//! library), the c_range example, the generated read-write variant of the Spark suite and the
//! fixture of every type (`fixtures/types`), then runs the pytest suite of `tests/jvm` once and fails with its output if any test
//! fails. It needs what `tests/spark` needs, plus a JDK (`javac` and `jar`).

#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod spark_helpers;

use std::path::{Path, PathBuf};
use std::process::Command;

use spark_helpers::{checked, Repository};

#[test]
fn the_jvm_plugin_suite_passes_on_real_spark() {
    let repository = Repository::locate();
    let jar = repository.build_jar();
    let c_range = repository.build_c_range();
    let writer = repository.generate_and_build_writer_variant();
    let types = build_types_fixture(&repository);
    run_pytest(
        &repository,
        &[
            ("SPARKDS_JVM_JAR", &jar),
            ("SPARK_E2E_C_RANGE_LIBRARY", &c_range),
            ("SPARK_E2E_WRITER_LIBRARY", &writer),
            ("SPARKDS_JVM_TYPES_LIBRARY", &types),
        ],
    );
}

/// A release packs the JNI libraries that each platform's runner built (`--jni-dir`, as the
/// workflow `.github/workflows/spark-plugin-jar.yml` does): one per platform folder, at the
/// resource path the plugin loads from; a folder that is not a platform is refused.
#[test]
fn a_release_jar_holds_the_jni_library_of_every_platform_given() {
    let repository = Repository::locate();
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let libraries = dir.path().join("jni");
    for (platform, file) in [
        ("linux-x86_64", "libsparkds_jni.so"),
        ("osx-aarch64", "libsparkds_jni.dylib"),
        ("windows-x86_64", "sparkds_jni.dll"),
    ] {
        std::fs::create_dir_all(libraries.join(platform)).expect("create a platform folder");
        std::fs::write(libraries.join(platform).join(file), platform).expect("write a library");
    }
    let release = |jni_dir: &Path| {
        Command::new("bash")
            .arg(repository.path("jvm/build.sh"))
            .args(["--profile", "jni-dir-test", "--jni-dir"])
            .arg(jni_dir)
            .env("CARGO_TARGET_DIR", dir.path().join("target"))
            .output()
            .expect("run jvm/build.sh")
    };
    let output = release(&libraries);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let jar = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    let listing = Command::new("jar")
        .arg("tf")
        .arg(&jar)
        .output()
        .expect("run jar tf");
    let entries = String::from_utf8_lossy(&listing.stdout);
    for entry in [
        "dev/sparkds/spark/native/linux-x86_64/libsparkds_jni.so",
        "dev/sparkds/spark/native/osx-aarch64/libsparkds_jni.dylib",
        "dev/sparkds/spark/native/windows-x86_64/sparkds_jni.dll",
        "dev/sparkds/spark/DefaultSource.class",
    ] {
        assert!(
            entries.lines().any(|l| l == entry),
            "{entry} not in {}:\n{entries}",
            jar.display()
        );
    }

    std::fs::create_dir_all(libraries.join("plan9-mips")).expect("create a folder");
    let refused = release(&libraries);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("plan9-mips: not a platform"),
        "{said}"
    );
}

/// The fixture of every type (`tests/jvm/fixtures/types`): a variant of the template, generated
/// as users do, whose connector is replaced by the fixture's, built in target/generated.
fn build_types_fixture(repository: &Repository) -> PathBuf {
    let destination = tempfile::tempdir().expect("create a temporary directory");
    let source = repository.generate_from();
    let sdk = format!("sdk=path:{}", source.display());
    checked(
        Command::new("cargo")
            .args(["generate", "--path"])
            .arg(source.join("template"))
            .args(["--name", TYPES_NAME, "--silent", "-d", &sdk])
            .args(["-d", "capabilities=batch_read,batch_write,truncate"])
            .args(["-d", "pushdowns=prune_columns", "--destination"])
            .arg(destination.path()),
        "cargo generate of the types fixture",
    );
    let project = destination.path().join(TYPES_NAME);
    std::fs::copy(
        repository.path("tests/jvm/fixtures/types/mod.rs"),
        project.join("src/connector/mod.rs"),
    )
    .expect("copy the fixture's connector");
    let target = repository.path("target/generated");
    checked(
        Command::new("cargo")
            .arg("build")
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", &target),
        "cargo build of the types fixture",
    );
    target
        .join("debug")
        .join(spark_helpers::library_file_name(TYPES_NAME))
}

/// The data source name of the types fixture.
const TYPES_NAME: &str = "jvm_types";

/// `python3 -m pytest tests/jvm -q` from the root of the repository, with `env`.
fn run_pytest(repository: &Repository, env: &[(&str, &Path)]) {
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let mut command = Command::new(&python);
    command
        .args(["-m", "pytest", "tests/jvm", "-q", "-p", "no:cacheprovider"])
        .current_dir(repository.path(""));
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("cannot run {python:?} -m pytest: {error}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}\n{stderr}");
    assert!(
        output.status.success(),
        "pytest tests/jvm failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
}
