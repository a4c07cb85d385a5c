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
        15,
        "{stdout}"
    );
    // The JNI library prints nothing on stdout: every line is the test's.
    assert!(
        stdout.lines().all(|l| l.starts_with("ok ") || l == "done"),
        "{stdout}"
    );
}
