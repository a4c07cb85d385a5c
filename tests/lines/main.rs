//! Tests: lines. The JVM plugin on every Spark line of `jvm/spark-lines.txt` older than the
//! newest (which the `jvm`, `spark` and `claims` binaries run in full on python3's pyspark):
//! for each, the plugin's jar built against that line (`jvm/build.sh --spark-line`), and the core tests
//! (`pytest -m core`) of `tests/jvm`, then those of `tests/claims` on the plugin and, from
//! Spark 4.0 on, the bridge (it needs the Python Data Source API of 4.0), under the Python of
//! the line's virtual environment, which `.ci/spark-lines` (run by `.ci/install`) makes. Two
//! lines run at a time, one Spark session per pytest run; each line's time is printed. The test
//! fails if any line fails.

#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod spark_helpers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use spark_helpers::{checked, Repository};

/// How many lines run at once: each runs one Spark JVM, on a machine of two cores.
const PARALLEL_LINES: usize = 2;

/// A line of `jvm/spark-lines.txt`: `4.0 4.0.5 2.13`.
#[derive(Clone)]
struct Line {
    name: String,
    pyspark: String,
}

#[test]
fn the_core_tests_pass_on_every_spark_line() {
    let repository = Repository::locate();
    let lines = older_lines(&repository);
    let pythons: Vec<PathBuf> = lines.iter().map(line_python).collect();

    let started = Instant::now();
    let libraries = Libraries::build(&repository);
    let jni = build_jni(&repository);
    let jars: Vec<PathBuf> = lines
        .iter()
        .map(|line| build_jar(&repository, &line.name, jni.path()))
        .collect();
    let built = format!(
        "libraries and {} jars built in {:.1} s",
        jars.len(),
        started.elapsed().as_secs_f64()
    );
    println!("{built}");
    let summaries = Mutex::new(vec![built]);

    // Each line's wrong-line test takes another line's jar: 3.5's (Scala 2.12) for the 4.x
    // lines, 4.0's (Scala 2.13) for 3.5.
    let other_jar = |index: usize| jars[if index == 0 { 1 } else { 0 }].clone();
    let next = Mutex::new(0usize);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..PARALLEL_LINES.min(lines.len()) {
            scope.spawn(|| loop {
                let index = {
                    let mut next = next.lock().expect("the line counter");
                    let index = *next;
                    *next += 1;
                    index
                };
                let Some(line) = lines.get(index) else {
                    return;
                };
                let report = run_line(
                    &repository,
                    line,
                    &pythons[index],
                    &jars[index],
                    &other_jar(index),
                    &libraries,
                );
                println!("{}", report.summary);
                summaries
                    .lock()
                    .expect("the summaries")
                    .push(report.summary);
                if let Some(failure) = report.failure {
                    failures.lock().expect("the failures").push(failure);
                }
            });
        }
    });
    // Where the time went, line by line, for the next run to read (a test's output is shown
    // only when it fails).
    let times = repository.path("target/lines");
    let summaries = summaries.into_inner().expect("the summaries").join("\n");
    let _ = std::fs::create_dir_all(&times)
        .and_then(|()| std::fs::write(times.join("times.txt"), summaries + "\n"));
    let failures = failures.into_inner().expect("the failures");
    assert!(
        failures.is_empty(),
        "{} Spark line(s) failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Every line of `jvm/spark-lines.txt` but the newest, the last.
fn older_lines(repository: &Repository) -> Vec<Line> {
    let mut lines = spark_lines(repository);
    lines.pop();
    lines
}

/// The lines of `jvm/spark-lines.txt`, oldest first.
fn spark_lines(repository: &Repository) -> Vec<Line> {
    let path = repository.path("jvm/spark-lines.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    let lines: Vec<Line> = text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(
                fields.len(),
                3,
                "{}: `{line}` is not `<line> <pyspark version> <scala version>`",
                path.display()
            );
            Line {
                name: fields[0].to_string(),
                pyspark: fields[1].to_string(),
            }
        })
        .collect();
    assert!(
        lines.len() >= 2,
        "{} lists fewer than two lines",
        path.display()
    );
    lines
}

/// The Python of the line's virtual environment, checked to hold the line's pyspark.
fn line_python(line: &Line) -> PathBuf {
    let directory = std::env::var_os("SPARKDS_LINES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set"))
                .join(".cache/sparkds/spark-lines")
        });
    let python = directory.join(&line.name).join("bin/python");
    let output = Command::new(&python)
        .args([
            "-c",
            "import pyspark, pyarrow, pytest; print(pyspark.__version__)",
        ])
        .output();
    let found = match &output {
        Ok(output) if output.status.success() => {
            String::from_utf8_lossy(&output.stdout).trim().to_string()
        }
        _ => String::new(),
    };
    assert_eq!(
        found,
        line.pyspark,
        "{} has no pyspark {} (with pyarrow and pytest): run .ci/spark-lines (or .ci/install), \
         which makes it",
        python.display(),
        line.pyspark
    );
    python
}

/// The libraries of the core tests, built once for every line, as copies in a directory of
/// their own: a later build into the shared target directory must not replace a library that a
/// session loaded (the plugin rightly refuses the new build).
struct Libraries {
    env: Vec<(&'static str, PathBuf)>,
    _copies: tempfile::TempDir,
}

impl Libraries {
    fn build(repository: &Repository) -> Self {
        let c_range = repository.build_c_range();
        let writer = repository.generate_and_build_writer_variant();
        // The fixtures that tests/jvm's session puts in its library path, generated as its
        // conftest does.
        let script = "import sys; sys.path.insert(0, 'tests/support'); \
             from template_projects import generate_and_build as g; \
             print(g('e2e_filters', ['pushdowns=push_limit,prune_columns,push_filters'])); \
             print(g('jvm_types', ['capabilities=batch_read,batch_write,truncate', \
             'pushdowns=prune_columns'], connector='tests/jvm/fixtures/types/mod.rs'))";
        let output = checked(
            Command::new("python3")
                .args(["-c", script])
                .current_dir(repository.path("")),
            "building the filters and types fixtures",
        );
        let built = String::from_utf8_lossy(&output.stdout);
        let mut built = built.lines().map(PathBuf::from);
        let filters = built.next().expect("the filters library's path");
        let types = built.next().expect("the types library's path");
        let copies = tempfile::tempdir().expect("create a temporary directory");
        let copy = |built: PathBuf| {
            let copied = copies
                .path()
                .join(built.file_name().expect("a library file name"));
            std::fs::copy(&built, &copied)
                .unwrap_or_else(|error| panic!("copy {}: {error}", built.display()));
            copied
        };
        Libraries {
            env: vec![
                ("SPARK_E2E_C_RANGE_LIBRARY", copy(c_range)),
                ("SPARK_E2E_WRITER_LIBRARY", copy(writer)),
                ("SPARK_E2E_FILTERS_LIBRARY", copy(filters)),
                ("SPARKDS_JVM_TYPES_LIBRARY", copy(types)),
            ],
            _copies: copies,
        }
    }
}

/// The JNI library of the dev profile, built once (or the test runner's build of it,
/// `CARGO_CDYLIB_FILE_SPARKDS_JNI`, as `jvm/build.sh` takes it) and staged as
/// `<dir>/<platform>/<file>` for `jvm/build.sh --jni-dir`, as the release workflow stages each
/// platform's.
fn build_jni(repository: &Repository) -> tempfile::TempDir {
    let given = sparkds::given_cdylib("sparkds-jni");
    if given.is_none() {
        checked(
            Command::new("cargo")
                .args(["build", "--locked", "-p", "sparkds-jni"])
                .current_dir(repository.path("")),
            "cargo build -p sparkds-jni",
        );
    }
    let (os, file) = if cfg!(target_os = "macos") {
        ("osx", "libsparkds_jni.dylib")
    } else if cfg!(target_os = "windows") {
        ("windows", "sparkds_jni.dll")
    } else {
        ("linux", "libsparkds_jni.so")
    };
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository.path("target"));
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let platform = dir.path().join(format!("{os}-{}", std::env::consts::ARCH));
    std::fs::create_dir_all(&platform).expect("create the platform folder");
    let built = given.unwrap_or_else(|| target.join("debug").join(file));
    std::fs::copy(&built, platform.join(file))
        .unwrap_or_else(|error| panic!("stage the JNI library {}: {error}", built.display()));
    dir
}

/// `jvm/build.sh --profile dev --jni-dir <jni> --spark-line <line>`, which prints the jar's
/// path alone.
fn build_jar(repository: &Repository, line: &str, jni: &Path) -> PathBuf {
    let output = checked(
        Command::new("bash")
            .arg(repository.path("jvm/build.sh"))
            .args(["--profile", "dev", "--spark-line", line, "--jni-dir"])
            .arg(jni),
        &format!("jvm/build.sh --spark-line {line}"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let jar = PathBuf::from(stdout.trim());
    assert!(
        jar.is_file()
            && stdout.lines().count() == 1
            && jar.ends_with(format!("spark-native-datasource-spark-{line}.jar")),
        "jvm/build.sh --spark-line {line} must print the line's jar alone, printed:\n{stdout}"
    );
    jar
}

struct Report {
    summary: String,
    failure: Option<String>,
}

/// The core suites of one line, each in a pytest run (a Spark session) of its own.
fn run_line(
    repository: &Repository,
    line: &Line,
    python: &Path,
    jar: &Path,
    other_jar: &Path,
    libraries: &Libraries,
) -> Report {
    let started = Instant::now();
    // The claims run on the plugin and, from Spark 4.0 (the Python Data Source API), on the
    // bridge, in one session: tests/claims/conftest.py skips the bridge on 3.5.
    let suites = ["tests/jvm", "tests/claims"];
    let mut parts = Vec::new();
    let mut failure = None;
    for suite in suites {
        let suite_started = Instant::now();
        let mut command = Command::new(python);
        command
            .args(["-m", "pytest", "-m", "core", "-q", "-p", "no:cacheprovider"])
            .args(core_modules(repository, suite))
            .current_dir(repository.path(""))
            // The line's own Spark, started by its pyspark with its Python.
            .env_remove("SPARK_HOME")
            .env_remove("PYSPARK_PYTHON")
            .env_remove("PYSPARK_DRIVER_PYTHON")
            .env("SPARKDS_JVM_JAR", jar)
            .env("SPARKDS_JVM_OTHER_LINE_JAR", other_jar)
            .env("SPARKDS_CLAIMS_RUNTIMES", "plugin,bridge");
        for (key, value) in &libraries.env {
            command.env(key, value);
        }
        let output = spark_helpers::output_again_on_worker_timeout(&mut command);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let outcome = stdout
            .lines()
            .rev()
            .find(|l| l.contains(" in ") && (l.contains("passed") || l.contains("failed")))
            .unwrap_or("no summary")
            .trim()
            .to_string();
        parts.push(format!(
            "{suite} {outcome} ({:.1} s)",
            suite_started.elapsed().as_secs_f64()
        ));
        if !output.status.success() && failure.is_none() {
            failure = Some(format!(
                "Spark {} (pyspark {}): pytest {suite} -m core failed ({}):\n{stdout}\n{}",
                line.name,
                line.pyspark,
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    Report {
        summary: format!(
            "Spark {} (pyspark {}) in {:.1} s: {}",
            line.name,
            line.pyspark,
            started.elapsed().as_secs_f64(),
            parts.join("; ")
        ),
        failure,
    }
}

/// The test modules of `suite` that hold core tests: only those are collected, since the
/// others may import what an older pyspark lacks (the filter classes of Spark 4.1, say).
fn core_modules(repository: &Repository, suite: &str) -> Vec<String> {
    let directory = repository.path(suite);
    let mut modules: Vec<String> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", directory.display()))
        .map(|entry| entry.expect("a directory entry").file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .filter(|name| name.starts_with("test_") && name.ends_with(".py"))
        .filter(|name| {
            std::fs::read_to_string(directory.join(name))
                .is_ok_and(|text| text.contains("@pytest.mark.core"))
        })
        .map(|name| format!("{suite}/{name}"))
        .collect();
    modules.sort();
    assert!(!modules.is_empty(), "{suite} has no core test");
    modules
}

/// `jvm/build.sh --spark-line` with a line the plugin is not built for names the lines.
#[test]
fn build_sh_refuses_a_line_it_has_no_jar_for() {
    let repository = Repository::locate();
    let output = Command::new("bash")
        .arg(repository.path("jvm/build.sh"))
        .args(["--spark-line", "3.4"])
        .output()
        .expect("run jvm/build.sh");
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--spark-line 3.4: the plugin is built for Spark 3.5, 4.0, 4.1, 4.2, 4.3"),
        "{said}"
    );
    assert!(
        output.stdout.is_empty(),
        "nothing but a jar's path on stdout"
    );
}

/// The release workflow's matrix is `jvm/spark-lines.txt`: its step `lines` run here gives a
/// jar job per line of the file, with the line's pyspark.
#[test]
fn the_release_workflow_builds_a_jar_for_every_line() {
    let repository = Repository::locate();
    let path = repository.path(".github/workflows/spark-plugin-jar.yml");
    let text = std::fs::read_to_string(&path).expect("read the workflow");
    let workflow: serde_norway::Value = serde_norway::from_str(&text).expect("parse the workflow");
    let steps = workflow["jobs"]["lines"]["steps"]
        .as_sequence()
        .expect("the job `lines` has steps");
    let script = steps
        .iter()
        .find(|step| step["id"].as_str() == Some("lines"))
        .and_then(|step| step["run"].as_str())
        .expect("the step `lines` has a script");
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let output_file = dir.path().join("output");
    checked(
        Command::new("bash")
            .args(["-euo", "pipefail", "-c", script])
            .current_dir(repository.path(""))
            .env("GITHUB_OUTPUT", &output_file),
        "the workflow's step `lines`",
    );
    let written = std::fs::read_to_string(&output_file).expect("read the step's output");
    let matrix = written
        .strip_prefix("matrix=")
        .expect("the step writes matrix=");
    let matrix: serde_json::Value = serde_json::from_str(matrix.trim()).expect("a JSON matrix");
    let expected = spark_lines(&repository);
    let found: Vec<(String, String)> = matrix["include"]
        .as_array()
        .expect("an include list")
        .iter()
        .map(|entry| {
            (
                entry["line"].as_str().unwrap_or_default().to_string(),
                entry["pyspark"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|line| (line.name, line.pyspark))
        .collect();
    assert_eq!(found, expected);
}

/// The one failure the Spark suites run again: a Python worker that did not connect back in
/// time (a loaded machine), once; any other failure stands at once.
#[test]
fn a_run_that_lost_a_python_worker_runs_once_more_and_no_other_failure_does() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let runs = dir.path().join("runs");
    // Fails with `message` on its first run, succeeds on the next; counts its runs.
    let script = |message: &str| {
        format!(
            "echo run >> {runs}; [ $(wc -l < {runs}) -ge 2 ] && exit 0; echo '{message}'; exit 1",
            runs = runs.display()
        )
    };
    let count = || {
        let n = std::fs::read_to_string(&runs).map_or(0, |t| t.lines().count());
        let _ = std::fs::remove_file(&runs);
        n
    };
    let lost = spark_helpers::output_again_on_worker_timeout(
        Command::new("sh").args(["-c", &script("E   Python worker failed to connect back.")]),
    );
    assert!(lost.status.success());
    assert_eq!(count(), 2);
    let other = spark_helpers::output_again_on_worker_timeout(
        Command::new("sh").args(["-c", &script("E   AssertionError: 3 != 4")]),
    );
    assert!(!other.status.success());
    assert_eq!(count(), 1);
}
