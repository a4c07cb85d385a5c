//! The real JNI boundary: the plugin's `Native` class, compiled with `javac` against the Arrow
//! jars that pyspark ships, calls this crate's cdylib in a JVM (tests/java/Smoke.java).

use std::path::PathBuf;
use std::process::Command;

use crate::helpers::{build_dir, c_range, fixture, repo_root};

/// The directory of pyspark's jars, where Arrow Java comes from.
fn pyspark_jars() -> PathBuf {
    let output = Command::new("python3")
        .args([
            "-c",
            "import pyspark, os; print(os.path.dirname(pyspark.__file__))",
        ])
        .output()
        .expect("python3 runs (install python3 and pyspark, as .ci/install does)");
    assert!(
        output.status.success(),
        "pyspark is not installed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()).join("jars")
}

#[test]
fn the_native_class_drives_the_jni_library_in_a_jvm() {
    let jni = sparkds::cdylib("sparkds_jni").expect("cargo test builds the JNI library");
    let classes = build_dir().join("java-classes");
    let _ = std::fs::remove_dir_all(&classes);
    std::fs::create_dir_all(&classes).expect("a class directory");
    let tests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/java");
    let jars = format!("{}/*", pyspark_jars().display());
    let javac = Command::new("javac")
        .args(["--release", "17", "-nowarn", "-d"])
        .arg(&classes)
        .arg("-cp")
        .arg(&jars)
        .arg(repo_root().join("jvm/src/main/java/dev/sparkds/spark/jni/Native.java"))
        .arg(tests.join("dev/sparkds/spark/JniLibrary.java"))
        .arg(tests.join("dev/sparkds/spark/NativeLog.java"))
        .arg(tests.join("dev/sparkds/spark/NativeDataSourceException.java"))
        .arg(tests.join("Smoke.java"))
        .output()
        .expect("javac runs (install a JDK, openjdk-17-jdk-headless)");
    assert!(
        javac.status.success(),
        "javac failed:\n{}",
        String::from_utf8_lossy(&javac.stderr)
    );
    let java = Command::new("java")
        .arg(format!("-Dsparkds.jni.library={}", jni.display()))
        // Arrow Java reads off-heap memory through these.
        .arg("--add-opens=java.base/java.nio=ALL-UNNAMED")
        .arg("-cp")
        .arg(format!(
            "{}{}{jars}",
            classes.display(),
            if cfg!(windows) { ";" } else { ":" }
        ))
        .arg("Smoke")
        .arg(c_range())
        .arg(fixture(None))
        .output()
        .expect("java runs");
    let stdout = String::from_utf8_lossy(&java.stdout);
    assert!(
        java.status.success() && stdout.ends_with("done\n"),
        "the smoke test failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&java.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        18,
        "{stdout}"
    );
    // The JNI library prints nothing on stdout: every line is the test's.
    assert!(
        stdout.lines().all(|l| l.starts_with("ok ") || l == "done"),
        "{stdout}"
    );
}

/// The names of the native methods that `Native.java` declares.
fn declared_native_methods() -> Vec<String> {
    let source = std::fs::read_to_string(
        repo_root().join("jvm/src/main/java/dev/sparkds/spark/jni/Native.java"),
    )
    .expect("Native.java");
    source
        .split("static native ")
        .skip(1)
        .map(|rest| {
            let head = rest.split('(').next().unwrap_or_default();
            head.split_whitespace()
                .last()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn the_cdylib_exports_every_native_method_of_native_java_and_nothing_else() {
    use object::Object;
    let jni = sparkds::cdylib("sparkds_jni").expect("cargo test builds the JNI library");
    let bytes = std::fs::read(&jni).expect("the JNI library");
    let file = object::File::parse(&*bytes).expect("a shared library");
    let mut exported: Vec<String> = file
        .exports()
        .into_iter()
        .flatten()
        .filter_map(|export| match export.ok()?.name() {
            object::read::NameOrOrdinal::Name(name) => {
                Some(String::from_utf8_lossy(name).into_owned())
            }
            object::read::NameOrOrdinal::Ordinal(_) => None,
        })
        .filter(|name| name.starts_with("Java_") || name.starts_with("JNI_"))
        .collect();
    exported.sort();
    let mut expected: Vec<String> = declared_native_methods()
        .iter()
        .map(|m| format!("Java_dev_sparkds_spark_jni_Native_{m}"))
        .chain(["JNI_OnLoad".to_string()])
        .collect();
    expected.sort();
    assert_eq!(expected.len(), 36, "{expected:?}");
    assert_eq!(exported, expected);
}
