//! The options of the JVMs that the groups start (Spark's drivers and executors, the Connect
//! server, javac), given to them in `JAVA_TOOL_OPTIONS` unless it is set already. Each lives
//! seconds to minutes on small data, and the suite is bound by processor time:
//!
//! - C1 alone and the serial collector: the optimising compiler (C2) and the parallel collector
//!   spend more than they save there (the jvm group alone on two cores: 238 processor-seconds
//!   with them, 157 without).
//! - A class-data-sharing archive of the classes that a session of python3's pyspark loads (the
//!   JDK's dynamic archive, made once by a small session and kept in `target/suite/classes`): a
//!   JVM with that class path maps them instead of loading and verifying them again, which took
//!   a small session from 14-16 processor-seconds to 8-9. A JVM with another class path (another
//!   Spark line, the launcher, javac) cannot use it and starts as before, silently
//!   (`-Xlog:cds*=off`: the JDK would otherwise print a warning where scripts read the output).
//!
//! Users' Spark never sees these: only the test groups' environment carries them.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SHORT_LIVED: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

/// The groups' `JAVA_TOOL_OPTIONS`, with the archive when there is one.
pub fn tool_options(archive: Option<&Path>) -> String {
    match archive {
        Some(archive) => format!(
            "{SHORT_LIVED} -XX:SharedArchiveFile={} -Xlog:cds*=off",
            archive.display()
        ),
        None => SHORT_LIVED.to_string(),
    }
}

/// Adds `-Djava.io.tmpdir=<tmp>` to the `JAVA_TOOL_OPTIONS` that `env` holds (those of
/// `tool_options`): where the JVMs extract their native libraries and Spark keeps its scratch
/// files, which a killed JVM leaves behind. The JVM reads the option up to a space, so a path
/// with one is not given.
pub fn add_tmpdir(env: &mut [(String, String)], tmp: &Path) {
    let tmp = tmp.display().to_string();
    if tmp.contains(char::is_whitespace) {
        return;
    }
    if let Some((_, options)) = env.iter_mut().find(|(key, _)| key == "JAVA_TOOL_OPTIONS") {
        *options = format!("{options} -Djava.io.tmpdir={tmp}");
    }
}

/// The archive of python3's pyspark in `directory`, made now when this pyspark, its jars and
/// this Java have none yet. `Err` says why there is none (no pyspark, no Java, a path the JVM
/// cannot take, the session failed); the groups then run without it.
pub fn spark_archive(directory: &Path) -> Result<PathBuf, String> {
    let identity = spark_identity()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    identity.hash(&mut hasher);
    let version = identity.lines().next().unwrap_or("spark");
    let archive = directory.join(format!("spark-{version}-{:016x}.jsa", hasher.finish()));
    if archive.is_file() {
        return Ok(archive);
    }
    // The JVM reads the option up to a space: a path with one cannot be given.
    if archive.display().to_string().contains(char::is_whitespace) {
        return Err(format!("{} has a space", archive.display()));
    }
    std::fs::create_dir_all(directory)
        .map_err(|e| format!("cannot create {}: {e}", directory.display()))?;
    let partial = directory.join(format!("partial-{}.jsa", std::process::id()));
    let scratch = directory.join(format!("scratch-{}", std::process::id()));
    // Only the driver dumps (spark.driver.extraJavaOptions), not the launcher JVM before it.
    let output = Command::new("python3")
        .args(["-c", SESSION])
        .arg(format!(
            "-XX:ArchiveClassesAtExit={} -Xlog:cds*=off",
            partial.display()
        ))
        .arg(&scratch)
        .env("JAVA_TOOL_OPTIONS", SHORT_LIVED)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let _ = std::fs::remove_dir_all(&scratch);
    let made = std::fs::metadata(&partial).is_ok_and(|m| m.len() > 0);
    if !output.status.success() || !made {
        let _ = std::fs::remove_file(&partial);
        let said = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = said.lines().rev().take(5).collect();
        return Err(format!(
            "the session that makes it ended with {} ({}):\n{}",
            output.status,
            if made {
                "archive written"
            } else {
                "no archive"
            },
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    std::fs::rename(&partial, &archive)
        .map_err(|e| format!("cannot rename {}: {e}", partial.display()))?;
    remove_other_archives(directory, &archive);
    Ok(archive)
}

/// The archives of another pyspark or Java (180 MB each) go when a new one is made.
fn remove_other_archives(directory: &Path, kept: &Path) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path != kept && name.starts_with("spark-") && name.ends_with(".jsa") {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// What the archive depends on: pyspark's version (first line) and folder, the names and sizes
/// of its jars, and `java -version`. Another of any of them makes another archive.
fn spark_identity() -> Result<String, String> {
    let pyspark = Command::new("python3")
        .args(["-c", LIST_JARS])
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !pyspark.status.success() {
        return Err("python3 has no pyspark".to_string());
    }
    let java = Command::new("java")
        .arg("-version")
        .env_remove("JAVA_TOOL_OPTIONS")
        .output()
        .map_err(|e| format!("cannot run java: {e}"))?;
    Ok(format!(
        "{}{}",
        String::from_utf8_lossy(&pyspark.stdout),
        String::from_utf8_lossy(&java.stderr)
    ))
}

/// Prints pyspark's version, its folder, and each jar with its size.
const LIST_JARS: &str = "\
import os, pyspark
home = os.path.dirname(os.path.abspath(pyspark.__file__))
print(pyspark.__version__)
print(home)
jars = os.path.join(home, 'jars')
for name in sorted(os.listdir(jars)):
    print(name, os.path.getsize(os.path.join(jars, name)))
";

/// A small session that loads the classes most groups' sessions load: SQL, a shuffle, Parquet
/// written and read, a Python data source (the bridge is one). Arguments: the driver's extra
/// Java options, a scratch folder. It ends when the driver's JVM has ended.
const SESSION: &str = "\
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master('local[2]')
         .config('spark.ui.enabled', 'false')
         .config('spark.sql.shuffle.partitions', '2')
         .config('spark.driver.extraJavaOptions', sys.argv[1])
         .getOrCreate())
spark.range(100).selectExpr('id', 'cast(id as string) AS s').write.parquet(sys.argv[2])
spark.read.parquet(sys.argv[2]).filter('id > 3').groupBy('s').count().collect()
spark.sql('SELECT 1 AS one').collect()
try:
    from pyspark.sql.datasource import DataSource, DataSourceReader
except ImportError:
    DataSource = None
if DataSource is not None:
    class Reader(DataSourceReader):
        def read(self, partition):
            yield (1, 'a')
    class Source(DataSource):
        @classmethod
        def name(cls):
            return 'suite_classes'
        def schema(self):
            return 'id int, label string'
        def reader(self, schema):
            return Reader()
    spark.dataSource.register(Source)
    spark.read.format('suite_classes').load().collect()
# The JVM writes the archive as it exits, which it does when its standard input closes: wait
# for that, so that the archive is whole when this script ends.
from pyspark import SparkContext
driver = SparkContext._gateway.proc
spark.stop()
driver.stdin.close()
driver.wait(timeout=600)
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_and_its_silence_are_added_to_the_short_lived_options() {
        assert_eq!(tool_options(None), SHORT_LIVED);
        assert_eq!(
            tool_options(Some(Path::new("/t/suite/classes/spark-4.3.0-0a.jsa"))),
            "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
             -XX:SharedArchiveFile=/t/suite/classes/spark-4.3.0-0a.jsa -Xlog:cds*=off"
        );
    }
}
