//! Helpers of the conformance suite: the fixtures, compiled once per test run into a temporary
//! directory under the target directory, and loaded through sparkds's host.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock, PoisonError};

use sparkds::Library;

#[allow(dead_code)]
#[path = "../../support/checked.rs"]
mod checked;
#[path = "../../support/run_dir.rs"]
mod run_dir;

use checked::checked;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A directory under the target directory for this run's fixtures.
fn build_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        run_dir::new_run_dir(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "conformance-fixtures-",
        )
    })
    .path()
}

/// The fixtures built so far, by file name: each is compiled once per run.
fn built() -> &'static Mutex<HashMap<String, PathBuf>> {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    BUILT.get_or_init(Mutex::default)
}

/// A fixture library: the C range source, good or with one fault, or the Rust one that panics.
#[must_use]
pub struct Fixture {
    fault: Option<&'static str>,
    copy: Option<&'static str>,
    language: Language,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Language {
    C,
    RustPanic,
    CppThrow,
    /// `examples/c_range`, the C example, which implements filter pushdown.
    CRange,
}

impl Fixture {
    /// The good C fixture, `fixtures/range.c`.
    pub fn good() -> Self {
        Fixture {
            fault: None,
            copy: None,
            language: Language::C,
        }
    }

    /// The C fixture compiled with `-DFAULT_<fault>`, which breaks one rule.
    pub fn with_fault(fault: &'static str) -> Self {
        Fixture {
            fault: Some(fault),
            ..Fixture::good()
        }
    }

    /// The Rust fixture whose `create` panics, `fixtures/panic.rs`.
    pub fn rust_panic() -> Self {
        Fixture {
            language: Language::RustPanic,
            ..Fixture::good()
        }
    }

    /// The C++ fixture whose stream's `get_next` throws, `fixtures/throw.cc`.
    pub fn cpp_exception() -> Self {
        Fixture {
            language: Language::CppThrow,
            ..Fixture::good()
        }
    }

    /// The C example `examples/c_range` (filter pushdown included), built as the fixtures are.
    pub fn c_range() -> Self {
        Fixture {
            language: Language::CRange,
            ..Fixture::good()
        }
    }

    /// A copy under its own file name: the loader then gives it its own globals (such as the
    /// host it logs to), apart from the tests that load the shared copy.
    pub fn own_copy(mut self, name: &'static str) -> Self {
        self.copy = Some(name);
        self
    }

    /// The path of the built library.
    pub fn path(&self) -> PathBuf {
        let stem = match (self.language, self.fault, self.copy) {
            (Language::RustPanic, _, _) => "panic".to_string(),
            (Language::CppThrow, _, _) => "throw".to_string(),
            (Language::CRange, _, _) => "c_range".to_string(),
            (Language::C, fault, copy) => {
                let mut stem = String::from("range");
                for part in [fault, copy].into_iter().flatten() {
                    stem.push('_');
                    stem.push_str(&part.to_lowercase());
                }
                stem
            }
        };
        let file = sparkds::library_file_name(&format!("spark_datasource_{stem}"));
        let mut built = built().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(path) = built.get(&file) {
            return path.clone();
        }
        let path = build_dir().join(&file);
        let fixtures = manifest_dir().join("conformance/fixtures");
        match self.language {
            Language::RustPanic => compile_rust(&fixtures.join("panic.rs"), &path),
            Language::CppThrow => compile_cpp(&fixtures.join("throw.cc"), &path),
            Language::C => compile_c(&fixtures.join("range.c"), self.fault, &path),
            Language::CRange => compile_c(
                &manifest_dir().join("../examples/c_range/c_range.c"),
                None,
                &path,
            ),
        }
        built.insert(file, path.clone());
        path
    }

    /// Loads the built library with sparkds's host.
    pub fn load(&self) -> Library {
        Library::load(self.path()).expect("the fixture loads")
    }

    /// Loads the built library, expecting an error.
    pub fn load_error(&self) -> String {
        match Library::load(self.path()) {
            Ok(_) => panic!("the fixture loaded, but an error was expected"),
            Err(e) => e.to_string(),
        }
    }
}

fn compile_c(source: &Path, fault: Option<&str>, out: &Path) {
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let mut command = Command::new(&cc);
    command
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        // Rule 6: the fixture's functions must match the header's function-pointer types.
        .arg("-Werror=incompatible-pointer-types")
        .args(["-shared", "-fPIC", "-O1", "-pthread"])
        .arg("-I")
        .arg(manifest_dir().join("../crates/spark-datasource"))
        .arg("-o")
        .arg(out)
        .arg(source);
    if let Some(fault) = fault {
        command.arg(format!("-DFAULT_{fault}"));
    }
    checked(&mut command, "the C compiler ($CC, else cc)");
}

/// Compiles the C program `fixtures/<name>` with the header and runs it: its stdout.
pub fn compile_and_run_c(name: &str) -> String {
    let source = manifest_dir().join("conformance/fixtures").join(name);
    let program = build_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let cc = std::env::var_os("CC").unwrap_or_else(|| "cc".into());
    let mut command = Command::new(&cc);
    command
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(manifest_dir().join("../crates/spark-datasource"))
        .arg("-o")
        .arg(&program)
        .arg(source);
    checked(&mut command, "the C compiler ($CC, else cc)");
    let output = Command::new(&program)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn compile_cpp(source: &Path, out: &Path) {
    let cxx = std::env::var_os("CXX").unwrap_or_else(|| "c++".into());
    let mut command = Command::new(&cxx);
    command
        .args([
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-shared",
            "-fPIC",
            "-O1",
        ])
        .arg("-I")
        .arg(manifest_dir().join("../crates/spark-datasource"))
        .arg("-o")
        .arg(out)
        .arg(source);
    checked(&mut command, "the C++ compiler ($CXX, else c++)");
}

fn compile_rust(source: &Path, out: &Path) {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut command = Command::new(rustc);
    command
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "cdylib",
            "-C",
            "opt-level=1",
        ])
        .arg("-o")
        .arg(out)
        .arg(source);
    checked(&mut command, "rustc");
}

/// The `sparkds` binary, built once per run.
pub fn sparkds_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| sparkds::sparkds_binary().expect("the sparkds binary builds"))
        .clone()
}

/// Runs the `sparkds` binary with `args`: its exit code, stdout and stderr.
pub fn sparkds(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(sparkds_binary())
        .args(args)
        .output()
        .expect("sparkds runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The error of a result that must have failed, as text.
pub fn error<T>(result: sparkds::Result<T>) -> String {
    match result {
        Ok(_) => panic!("the call succeeded, but a violation was expected"),
        Err(e) => e.to_string(),
    }
}
