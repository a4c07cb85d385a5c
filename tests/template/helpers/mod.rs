//! Runs cargo-generate as users do, from a clean copy of this repository, and cargo in the
//! generated projects, with one target directory shared by all of them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The root of this repository.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The target directory that every generated project builds into, so that dependencies build
/// once: `$SPARK_DS_GENERATED_TARGET`, or `target/generated` in this repository.
pub fn shared_target() -> PathBuf {
    std::env::var_os("SPARK_DS_GENERATED_TARGET")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target").join("generated"))
}

#[path = "../../support/run_dir.rs"]
pub mod run_dir;

#[path = "../../support/checkout.rs"]
pub mod checkout;

/// A copy of the repository as a fresh clone has it: the files git tracks or would add,
/// without build output (cargo-generate copies the whole template folder it is given), outside
/// any checkout. The test runner's copy when it made one (so that the projects share the SDK's
/// builds with the other groups'), else one made once per test binary in the system's temporary
/// directory.
pub fn clean_checkout() -> &'static Path {
    static CHECKOUT: OnceLock<(PathBuf, Option<tempfile::TempDir>)> = OnceLock::new();
    let (path, _own) = CHECKOUT.get_or_init(|| {
        if let Some(shared) = checkout::shared() {
            return (shared, None);
        }
        let copy = run_dir::new_run_dir(&std::env::temp_dir(), "sparkds-checkout-");
        checkout::copy(&repo_root(), copy.path()).expect("copy the repository");
        (copy.path().to_path_buf(), Some(copy))
    });
    path
}

/// `PATH` with the directory of this workspace's `cargo-sparkds` first, built once.
pub fn path_with_sparkds() -> std::ffi::OsString {
    static PATH: OnceLock<std::ffi::OsString> = OnceLock::new();
    PATH.get_or_init(|| {
        let binary = sparkds::sparkds_binary().expect("cargo-sparkds builds");
        let dir = binary.parent().expect("a directory").to_path_buf();
        let rest = std::env::var_os("PATH").unwrap_or_default();
        std::env::join_paths(std::iter::once(dir).chain(std::env::split_paths(&rest)))
            .expect("a valid PATH")
    })
    .clone()
}

/// A `cargo generate` call, built up like its command line.
pub struct Generate {
    name: String,
    defines: Vec<(String, String)>,
    default_sdk: bool,
}

impl Generate {
    /// `cargo generate --path <checkout> --name <name> --silent`.
    pub fn named(name: &str) -> Self {
        Generate {
            name: name.to_string(),
            defines: Vec::new(),
            default_sdk: false,
        }
    }

    /// No `-d sdk=...`: the template's default answer, as a user who does not say.
    pub fn with_the_default_sdk(mut self) -> Self {
        self.default_sdk = true;
        self
    }

    /// `-d key=value`.
    pub fn define(mut self, key: &str, value: &str) -> Self {
        self.defines.push((key.to_string(), value.to_string()));
        self
    }

    fn command(&self, destination: &Path) -> Command {
        let mut command = Command::new("cargo");
        command
            .arg("generate")
            .arg("--path")
            .arg(clean_checkout())
            .args(["--name", &self.name, "--silent", "--vcs", "none"])
            .arg("--destination")
            .arg(destination);
        // The crates of the test runner's copy, which every group's projects use, else of this
        // checkout, unless the test says otherwise: one path for all projects, so the shared
        // target directory builds them once.
        if !self.default_sdk && !self.defines.iter().any(|(key, _)| key == "sdk") {
            command.arg("-d").arg(format!(
                "sdk=path:{}",
                checkout::shared_or(&repo_root()).display()
            ));
        }
        for (key, value) in &self.defines {
            command.arg("-d").arg(format!("{key}={value}"));
        }
        command
    }

    /// Generates the project; panics with cargo-generate's output if it fails.
    pub fn project(self) -> Project {
        let parent = tempfile::tempdir().expect("a temporary directory");
        let output = run(self.command(parent.path()));
        assert!(
            output.status.success(),
            "cargo generate failed:\n{}",
            printed(&output)
        );
        Project {
            dir: parent.path().join(&self.name),
            name: self.name,
            _parent: parent,
        }
    }

    /// Runs cargo-generate expecting it to refuse: returns what it printed.
    pub fn refused(self) -> String {
        let parent = tempfile::tempdir().expect("a temporary directory");
        let output = run(self.command(parent.path()));
        let printed = printed(&output);
        assert!(
            !output.status.success(),
            "cargo generate accepted:\n{printed}"
        );
        let folder = parent.path().join(&self.name);
        assert!(
            !folder.join("Cargo.toml").exists(),
            "a refused generation left a project behind"
        );
        // cargo-generate makes the folder before the hook runs: the refusal says to remove it,
        // else the next try fails with "Target directory already exists".
        if folder.exists() {
            let left = std::fs::read_dir(&folder).expect("readable").count();
            assert_eq!(left, 0, "a refused generation left files in {folder:?}");
            assert!(
                printed.contains(&format!(
                    "cargo-generate has already made the empty folder {}: remove it (rmdir {})",
                    self.name, self.name
                )) || printed.contains("is not a valid value"),
                "the refusal does not say to remove the empty folder:\n{printed}"
            );
        }
        printed
    }
}

/// All that a command printed, standard output then standard error.
fn printed(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn run(mut command: Command) -> Output {
    command.output().unwrap_or_else(|e| {
        panic!("cannot run {command:?}: {e} (install cargo-generate: see the README)")
    })
}

/// A generated project in a temporary directory.
pub struct Project {
    pub name: String,
    pub dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl Project {
    /// Runs `cargo <args>` in the project with the shared target directory and returns what it
    /// printed on standard output; panics with all its output when it fails.
    pub fn cargo(&self, args: &[&str]) -> String {
        let output = self.cargo_output(args);
        let printed = printed(&output);
        assert!(
            output.status.success(),
            "`cargo {}` failed in the generated project {}:\n{printed}",
            args.join(" "),
            self.name
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Runs `cargo <args>` in the project like [`Project::cargo`], and returns what it printed
    /// on standard output and on standard error.
    pub fn cargo_printed(&self, args: &[&str]) -> (String, String) {
        let output = self.cargo_output(args);
        assert!(
            output.status.success(),
            "`cargo {}` failed in the generated project {}:\n{}",
            args.join(" "),
            self.name,
            printed(&output)
        );
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// Runs `cargo <args>` expecting it to fail: returns what it printed.
    pub fn cargo_fails(&self, args: &[&str]) -> String {
        let output = self.cargo_output(args);
        let printed = printed(&output);
        assert!(
            !output.status.success(),
            "`cargo {}` succeeded in {}:\n{printed}",
            args.join(" "),
            self.name
        );
        printed
    }

    /// Runs cargo in the project, with `cargo sparkds` (the command of this workspace) on the
    /// `PATH`, as a user who installed it has it.
    fn cargo_output(&self, args: &[&str]) -> Output {
        let once = || {
            Command::new(env!("CARGO"))
                .args(args)
                .current_dir(&self.dir)
                .env("PATH", path_with_sparkds())
                .env("CARGO_TARGET_DIR", shared_target())
                // Snapshots must match as generated: never write new ones here.
                .env("INSTA_UPDATE", "no")
                .env_remove("RUSTFLAGS")
                .output()
                .expect("cargo runs")
        };
        let mut output = once();
        // The registry's index, served through caches, can lag behind the view that wrote the
        // lock file a moment before (a version the lock names missing from the candidates):
        // that is the registry's, not the project's, so the command runs again, twice at most.
        for wait in [5, 20] {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let lagging = stderr.contains("failed to select a version for the requirement")
                && stderr.contains("(locked to");
            if output.status.success() || !lagging {
                break;
            }
            eprintln!(
                "{}: `cargo {}`: the registry's index lacks a locked version; again in {wait} s",
                self.name,
                args.join(" ")
            );
            std::thread::sleep(std::time::Duration::from_secs(wait));
            output = once();
        }
        output
    }

    /// Replaces `from` with `to` in a file of the project, as a user edits it.
    pub fn edit(&self, relative: &str, from: &str, to: &str) {
        let text = self.read(relative);
        assert!(text.contains(from), "{relative} has no `{from}`");
        std::fs::write(self.dir.join(relative), text.replace(from, to)).expect("write");
    }

    /// The files of the project, one per line, sorted (the workflows too: which ones a project
    /// carries depends on where its SDK comes from).
    pub fn tree(&self) -> String {
        let mut files = Vec::new();
        collect(&self.dir, &self.dir, &mut files);
        files.sort();
        files.dedup();
        files.join("\n")
    }

    /// The content of a generated file.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.dir.join(relative))
            .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
    }

    /// The library that `cargo build` made.
    pub fn built_library(&self) -> PathBuf {
        self.built_library_in("debug")
    }

    /// The library that cargo built into the folder of a profile (`debug` for `dev`).
    pub fn built_library_in(&self, folder: &str) -> PathBuf {
        let file = if cfg!(target_os = "windows") {
            format!("spark_datasource_{}.dll", self.name)
        } else if cfg!(target_os = "macos") {
            format!("libspark_datasource_{}.dylib", self.name)
        } else {
            format!("libspark_datasource_{}.so", self.name)
        };
        shared_target().join(folder).join(file)
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("an entry").path();
        let relative = path
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        if relative == "target" || relative == "Cargo.lock" || relative == ".git" {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, out);
        } else {
            out.push(relative);
        }
    }
}
