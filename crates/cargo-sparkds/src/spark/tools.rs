//! What `cargo sparkds spark` runs on: Java, Python and a Spark 4. Each is looked for once,
//! and each that is missing or unusable is one error that names the fix.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use sparkds::{Error, Result};

/// The pyspark that the command installs in its cache when python3 has none.
pub const PINNED_PYSPARK: &str = "4.3.0";
/// The lowest Java that Spark 4 runs on.
const JAVA_MIN: u32 = 17;
const INSTALL_JDK: &str = "install a JDK 17 or later (on Debian or Ubuntu: `apt-get install \
                           openjdk-17-jdk-headless`; on macOS: `brew install openjdk@17`) and \
                           put its bin directory on PATH, or set JAVA_HOME to it";

/// A Java tool (`java`, `javac`, `jar`): in `$JAVA_HOME/bin` when JAVA_HOME is set, as Spark's
/// launcher finds it, else on PATH.
pub fn java_tool(tool: &str) -> Result<PathBuf> {
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        let path = Path::new(&home).join("bin").join(tool);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(Error::usage(format!(
                "`{tool}` is not in JAVA_HOME ({}/bin): {INSTALL_JDK}",
                Path::new(&home).display()
            )))
        };
    }
    on_path(tool).ok_or_else(|| Error::usage(format!("`{tool}` not found on PATH: {INSTALL_JDK}")))
}

/// Checks that Java runs and is 17 or later.
pub fn check_java() -> Result<()> {
    let java = java_tool("java")?;
    let output = Command::new(&java)
        .arg("-version")
        .output()
        .map_err(|e| Error::usage(format!("cannot run {}: {e}; {INSTALL_JDK}", java.display())))?;
    let text = String::from_utf8_lossy(&output.stderr);
    match java_major(&text) {
        Some(major) if major >= JAVA_MIN => Ok(()),
        Some(major) => Err(Error::usage(format!(
            "{} is Java {major}, and Spark 4 needs Java {JAVA_MIN} or later: {INSTALL_JDK}",
            java.display()
        ))),
        None => Err(Error::usage(format!(
            "cannot read the version of {} (`java -version` printed: {}): {INSTALL_JDK}",
            java.display(),
            text.trim()
        ))),
    }
}

/// The major version in `java -version`'s output: `version "17.0.15"` is 17, `"1.8.0_392"` 8.
/// The JVM may print other lines first (`Picked up JAVA_TOOL_OPTIONS: ...`, quotes included).
fn java_major(text: &str) -> Option<u32> {
    let (_, after) = text.split_once("version \"")?;
    let quoted = after.split('"').next()?;
    let mut parts = quoted.split(['.', '-', '+', '_']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

/// `python3` on PATH, or the error that names how to install it.
pub fn python() -> Result<PathBuf> {
    on_path("python3").ok_or_else(|| {
        Error::usage(
            "`python3` not found on PATH: PySpark needs Python 3.10 or later; install it (on \
             Debian or Ubuntu: `apt-get install python3 python3-venv`; on macOS: `brew install \
             python`) and put it on PATH",
        )
    })
}

/// The first file named `tool` in an absolute directory of PATH.
pub fn on_path(tool: &str) -> Option<PathBuf> {
    let name = format!("{tool}{}", std::env::consts::EXE_SUFFIX);
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(&name))
        .find(|path| path.is_file())
}

/// A Spark installation: its home (with `jars/` and `bin/`), its version, the Python that runs
/// PySpark on it, the PYTHONPATH that Python needs to import pyspark, and where it comes from.
#[derive(Debug, Clone)]
pub struct Spark {
    pub home: PathBuf,
    pub version: String,
    pub python: PathBuf,
    pub python_path: Vec<PathBuf>,
    pub origin: String,
}

impl Spark {
    /// PYTHONPATH for the session's Python: the Spark's own entries, `extra`, then the user's.
    pub fn python_path_with(&self, extra: &[PathBuf]) -> Result<OsString> {
        let mut paths: Vec<PathBuf> = self.python_path.clone();
        paths.extend(extra.iter().cloned());
        if let Some(existing) = std::env::var_os("PYTHONPATH") {
            paths.extend(std::env::split_paths(&existing));
        }
        std::env::join_paths(paths)
            .map_err(|e| Error::usage(format!("cannot build PYTHONPATH: {e}")))
    }
}

/// Spark from SPARK_HOME, if it is set.
pub fn spark_from_home(python: &Path) -> Result<Option<Spark>> {
    let Some(home) = std::env::var_os("SPARK_HOME").filter(|h| !h.is_empty()) else {
        return Ok(None);
    };
    let home = PathBuf::from(home);
    let jars = home.join("jars");
    let version = spark_version_of_jars(&jars).ok_or_else(|| {
        Error::usage(format!(
            "SPARK_HOME is {}, which has no jars/spark-core_*.jar: set SPARK_HOME to a Spark 4 \
             distribution, or unset it to use python3's pyspark",
            home.display()
        ))
    })?;
    let lib = home.join("python").join("lib");
    let mut python_path = vec![home.join("python")];
    if let Ok(entries) = std::fs::read_dir(&lib) {
        python_path.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "zip")),
        );
    }
    Ok(Some(Spark {
        origin: format!("SPARK_HOME ({})", home.display()),
        home,
        version,
        python: python.to_path_buf(),
        python_path,
    }))
}

/// The version in the name of `spark-core_<scala>-<version>.jar` in `jars`.
fn spark_version_of_jars(jars: &Path) -> Option<String> {
    std::fs::read_dir(jars).ok()?.flatten().find_map(|entry| {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rest = name.strip_prefix("spark-core_")?.strip_suffix(".jar")?;
        Some(rest.split_once('-')?.1.to_string())
    })
}

/// The pyspark that `python` imports, if any: its package directory is a Spark home.
pub fn spark_from_python(python: &Path, origin: &str) -> Result<Option<Spark>> {
    let output = Command::new(python)
        .args([
            "-c",
            "import os, pyspark; print(pyspark.__version__); print(os.path.dirname(pyspark.__file__))",
        ])
        .output()
        .map_err(|e| Error::usage(format!("cannot run {}: {e}", python.display())))?;
    if !output.status.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines();
    match (lines.next(), lines.next()) {
        (Some(version), Some(home)) => Ok(Some(Spark {
            home: PathBuf::from(home),
            version: version.trim().to_string(),
            python: python.to_path_buf(),
            python_path: Vec::new(),
            origin: format!("{origin} ({})", python.display()),
        })),
        _ => Ok(None),
    }
}

/// Refuses a Spark that is not 4.x, and one whose home lacks `jars/`.
pub fn check_spark(spark: &Spark) -> Result<()> {
    if !spark.version.starts_with("4.") {
        return Err(Error::usage(format!(
            "Spark {} from {}: the JVM plugin and the bridge run on Spark 4; install pyspark 4 \
             (`python3 -m pip install pyspark=={PINNED_PYSPARK}`) or set SPARK_HOME to a Spark 4",
            spark.version, spark.origin
        )));
    }
    if !spark.home.join("jars").is_dir() {
        return Err(Error::usage(format!(
            "Spark {} from {} has no jars/ in {}: reinstall it, or set SPARK_HOME to a Spark 4 \
             distribution",
            spark.version,
            spark.origin,
            spark.home.display()
        )));
    }
    Ok(())
}

/// Whether `python` imports `module` with `python_path`.
pub fn imports(spark: &Spark, module: &str) -> Result<bool> {
    let status = Command::new(&spark.python)
        .args(["-c", &format!("import {module}")])
        .env("PYTHONPATH", spark.python_path_with(&[])?)
        .output()
        .map_err(|e| Error::usage(format!("cannot run {}: {e}", spark.python.display())))?
        .status;
    Ok(status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_versions_are_read_old_and_new() {
        assert_eq!(
            java_major("openjdk version \"17.0.15\" 2025-04-15"),
            Some(17)
        );
        assert_eq!(java_major("openjdk version \"21\" 2023-09-19"), Some(21));
        assert_eq!(java_major("java version \"1.8.0_392\""), Some(8));
        assert_eq!(java_major("no version here"), None);
        let picked_up = "Picked up JAVA_TOOL_OPTIONS: -Dname=\"a b\" -XX:+UseSerialGC\n\
                         openjdk version \"17.0.15\" 2025-04-15\n";
        assert_eq!(java_major(picked_up), Some(17));
    }

    #[test]
    fn the_spark_version_is_read_from_spark_core_jar() {
        let dir = tempfile_dir();
        std::fs::write(dir.join("spark-core_2.13-4.1.2.jar"), b"").expect("write");
        assert_eq!(spark_version_of_jars(&dir).as_deref(), Some("4.1.2"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sparkds-tools-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }
}
