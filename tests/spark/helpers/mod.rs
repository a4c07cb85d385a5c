//! Helpers of the spark test binary: building the libraries, and running pytest.

#[path = "../../support/checked.rs"]
mod checked;
#[path = "../../support/checkout.rs"]
pub mod checkout;
pub use checked::{checked, output_again_on_worker_timeout};

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The capabilities of the generated variant that the write tests use.
pub const WRITER_CAPABILITIES: &str = "batch_read,batch_write,streaming_write,truncate";
/// The name of the generated variant: its library is `libspark_datasource_e2e_rw.so`.
pub const WRITER_NAME: &str = "e2e_rw";

/// The checkout of the repository that this test binary belongs to.
pub struct Repository {
    root: PathBuf,
}

impl Repository {
    pub fn locate() -> Self {
        let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = tests
            .parent()
            .expect("tests/ has a parent directory")
            .to_path_buf();
        Repository { root }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// The copy of the repository that projects are generated from (template and SDK): the test
    /// runner's copy for the run (tests/support/checkout.rs), else this repository.
    pub fn generate_from(&self) -> PathBuf {
        checkout::shared_or(&self.root)
    }

    /// Builds examples/c_range with its Makefile and returns the library.
    pub fn build_c_range(&self) -> PathBuf {
        let directory = self.path("examples/c_range");
        checked(
            Command::new("make").arg("-s").arg("-C").arg(&directory),
            "make -C examples/c_range",
        );
        directory.join(library_file_name("c_range"))
    }

    /// The JVM plugin's jar: `jvm/build.sh --profile dev`, which prints the jar's path and
    /// nothing else on stdout. (The spark binary loads no jar.)
    #[allow(dead_code)]
    pub fn build_jar(&self) -> PathBuf {
        let script = self.path("jvm/build.sh");
        let output = Command::new("bash")
            .arg(&script)
            .args(["--profile", "dev"])
            .output()
            .unwrap_or_else(|error| panic!("cannot run {}: {error}", script.display()));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "jvm/build.sh failed ({}):\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let jar = PathBuf::from(stdout.trim());
        assert!(
            jar.is_file() && stdout.lines().count() == 1,
            "jvm/build.sh must print the jar's path alone, printed:\n{stdout}"
        );
        jar
    }

    /// Generates the read-write variant of the template with cargo-generate, as users do, and
    /// builds it in target/generated/projects/<name>, where only the files that differ from the
    /// last generation are written (as tests/support/template_projects.py does): an unchanged
    /// project is not rebuilt, so its library is not replaced under a Spark session of another
    /// group that loaded it. The build shares target/generated, so that its dependencies build
    /// once across runs.
    pub fn generate_and_build_writer_variant(&self) -> PathBuf {
        let destination = tempfile::tempdir().expect("create a temporary directory");
        let capabilities = format!("capabilities={WRITER_CAPABILITIES}");
        let source = self.generate_from();
        let sdk = format!("sdk=path:{}", source.display());
        checked(
            Command::new("cargo")
                .args(["generate", "--path"])
                .arg(source.join("template"))
                .args([
                    "--name",
                    WRITER_NAME,
                    "--silent",
                    "-d",
                    &sdk,
                    "-d",
                    &capabilities,
                    "--destination",
                ])
                .arg(destination.path()),
            "cargo generate (is cargo-generate installed? `cargo install cargo-generate`)",
        );
        let target = self.path("target/generated");
        let project = target.join("projects").join(WRITER_NAME);
        mirror(&destination.path().join(WRITER_NAME), &project);
        checked(
            Command::new("cargo")
                .arg("build")
                .current_dir(&project)
                .env("CARGO_TARGET_DIR", &target),
            "cargo build of the generated variant",
        );
        target.join("debug").join(library_file_name(WRITER_NAME))
    }
}

/// Makes `destination` hold the files of `source`, writing (by rename) only those whose bytes
/// differ and removing those `source` lacks; its Cargo.lock stays.
fn mirror(source: &Path, destination: &Path) {
    fn files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read a generated directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                files(root, &path, out);
            } else {
                out.push(
                    path.strip_prefix(root)
                        .expect("below the root")
                        .to_path_buf(),
                );
            }
        }
    }
    let mut wanted = Vec::new();
    files(source, source, &mut wanted);
    for relative in &wanted {
        let content = std::fs::read(source.join(relative)).expect("read a generated file");
        let target = destination.join(relative);
        if std::fs::read(&target).is_ok_and(|old| old == content) {
            continue;
        }
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("mkdir");
        let partial = target.with_extension(format!("{}.partial", std::process::id()));
        std::fs::write(&partial, &content).expect("write a generated file");
        std::fs::rename(&partial, &target).expect("rename a generated file");
    }
    let mut present = Vec::new();
    if destination.is_dir() {
        files(destination, destination, &mut present);
    }
    for relative in present {
        if !wanted.contains(&relative) && relative != Path::new("Cargo.lock") {
            std::fs::remove_file(destination.join(relative)).expect("remove a stale file");
        }
    }
}

/// The file name of the library of data source `name` on this platform.
pub fn library_file_name(name: &str) -> String {
    if cfg!(target_os = "windows") {
        format!("spark_datasource_{name}.dll")
    } else if cfg!(target_os = "macos") {
        format!("libspark_datasource_{name}.dylib")
    } else {
        format!("libspark_datasource_{name}.so")
    }
}

/// `python3 -m pytest tests/spark -q`, from the root of the repository.
pub struct Pytest {
    root: PathBuf,
    python: OsString,
    env: Vec<(String, PathBuf)>,
    /// What pytest collects, in this order, relative to the root: directories or test modules
    /// (tests/spark when none is given).
    suites: Vec<String>,
}

impl Pytest {
    pub fn new(repository: &Repository) -> Self {
        Pytest {
            root: repository.root.clone(),
            python: std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into()),
            env: Vec::new(),
            suites: Vec::new(),
        }
    }

    /// Runs `suite` (a directory or a test module, relative to the root) rather than
    /// tests/spark; called again, runs each in this order, in one pytest process (whose
    /// session-scoped fixtures they share).
    pub fn suite(mut self, suite: &str) -> Self {
        self.suites.push(suite.to_string());
        self
    }

    pub fn env(mut self, key: &str, value: &Path) -> Self {
        self.env.push((key.to_string(), value.to_path_buf()));
        self
    }

    /// Fails, rather than skips, when the Python packages are missing: a suite that skips
    /// silently proves nothing.
    fn check_requirements(&self) {
        let output = Command::new(&self.python)
            .args([
                "-c",
                "import pyspark, pyarrow, pytest; print(pyspark.__version__)",
            ])
            .output()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot run {:?}: {error}; install Python 3, or set PYTHON",
                    self.python
                )
            });
        if !output.status.success() {
            panic!(
                "the end-to-end tests need pyspark, pyarrow and pytest: run \
                 `pip install -r tests/spark/requirements.txt`\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    pub fn run(self) {
        self.check_requirements();
        let suites = if self.suites.is_empty() {
            vec!["tests/spark".to_string()]
        } else {
            self.suites.clone()
        };
        let mut command = Command::new(&self.python);
        command
            .args(["-m", "pytest"])
            .args(&suites)
            .args(["-q", "-p", "no:cacheprovider"])
            .current_dir(&self.root);
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let output = output_again_on_worker_timeout(&mut command);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // Shown by `cargo test -- --nocapture`, and with the failure otherwise.
        println!("{stdout}\n{stderr}");
        assert!(
            output.status.success(),
            "pytest {} failed ({}):\n{stdout}\n{stderr}",
            suites.join(" "),
            output.status
        );
    }
}
