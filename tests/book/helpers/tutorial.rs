//! Runs the shell commands of the tutorial as a reader would: every ```` ```sh ```` block of
//! the chapters under `tutorial/`, in the order of `SUMMARY.md`, in one bash session
//! (`set -euo pipefail`), so that a `cd` in one block holds for the next ones.
//!
//! The session starts in a scratch directory that holds a clean copy of this repository named
//! `spark-datasource-template`, as `git clone` would leave it: the tutorial generates its project
//! from there with `cargo generate --path` and `-d sdk=path:...`. Blocks fenced
//! ```` ```console ```` are shown, never run: they need what this machine does not have (the
//! network beyond package registries, a Spark 4.4 cluster, an interactive terminal, a
//! `git push`), or install tools on the reader's machine, which the test provides itself
//! (`cargo sparkds` and cargo-insta, below).
//!
//! Three things differ from a reader's machine, all invisible to the commands:
//! - Each generated project's `target` directory is a symbolic link to `<repo>/target/generated`
//!   (the generated projects' target of the whole suite), made as soon as the project exists,
//!   so that runs of this test, and the other groups' generated projects, share their builds.
//! - `cargo sparkds` is this workspace's build of `cargo-sparkds` (what the tutorial's
//!   `cargo install --path .../crates/cargo-sparkds` installs), first on `PATH`.
//! - `cargo-insta` is installed under `<repo>/target/book/tools` when it is not on `PATH`
//!   (`.ci/install` installs the same release for the whole machine).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{book_target, chapters, fences, repo_root, Chapter};

/// The name the tutorial gives its project (`cargo generate --name my_source`).
pub const PROJECT: &str = "my_source";

/// Every project the tutorial generates: `my_source`, then the HTTP API chapter's `my_api`.
pub const PROJECTS: &[&str] = &[PROJECT, "my_api"];

/// The name of the clean copy of this repository in the scratch directory.
pub const CHECKOUT: &str = "spark-datasource-template";

/// A shell block of the tutorial, with where it comes from.
pub struct Block {
    pub origin: String,
    pub body: String,
}

/// The ```` ```sh ```` blocks of the tutorial chapters, in order.
pub fn blocks() -> Vec<Block> {
    chapters()
        .into_iter()
        .filter(|chapter| chapter.path.starts_with("tutorial"))
        .flat_map(|chapter| {
            fences(&chapter.text)
                .into_iter()
                .filter(|fence| fence.info == "sh")
                .map(move |fence| Block {
                    origin: format!("{}:{}", chapter.path.display(), fence.line),
                    body: fence.body,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The bash script of `blocks`: each block is announced on standard error with the seconds since
/// the script started, then run, then the project's target directory is linked if the project
/// was just generated.
pub fn script(blocks: &[Block]) -> String {
    let mut script = String::from(
        "set -euo pipefail\n\
         book_link_target() {\n  \
           local name project\n  \
           for name in $BOOK_PROJECTS; do\n    \
             project=\"$BOOK_SCRATCH/$name\"\n    \
             if [ -d \"$project\" ] && [ ! -e \"$project/target\" ]; then\n      \
               ln -s \"$BOOK_PROJECT_TARGET\" \"$project/target\"\n    \
             fi\n  \
           done\n\
         }\n\
         cd \"$BOOK_SCRATCH\"\n",
    );
    for block in blocks {
        script.push_str(&format!(
            "echo \">>> book block {} at $SECONDS s\" >&2\n{}book_link_target\n",
            block.origin, block.body
        ));
    }
    script.push_str("echo \">>> book tutorial finished at $SECONDS s\" >&2\n");
    script
}

/// Where the tutorial runs, holding a copy of the repository as a fresh clone has it, named
/// [`CHECKOUT`], whose `target` is a link to this repository's (so that the checkout's own
/// builds reuse this repository's, as on a reader's machine after the first run): the
/// directory of the test runner's copy
/// ([`super::checkout`]), so that the project's build shares the SDK's crates with the other
/// groups' projects, or else a new temporary directory.
pub enum Scratch {
    Shared(PathBuf),
    Own(tempfile::TempDir),
}

impl Scratch {
    pub fn make() -> Self {
        if let Some(shared) = super::checkout::shared() {
            let parent = shared
                .parent()
                .expect("the copy has a parent")
                .to_path_buf();
            // The projects left by an earlier run of this test against the same copy.
            for project in PROJECTS {
                let _ = std::fs::remove_dir_all(parent.join(project));
            }
            return Scratch::Shared(parent);
        }
        let scratch = tempfile::tempdir().expect("a temporary directory");
        let checkout = scratch.path().join(CHECKOUT);
        super::checkout::copy(&repo_root(), &checkout).expect("copy the repository");
        #[cfg(unix)]
        std::os::unix::fs::symlink(repo_root().join("target"), checkout.join("target"))
            .expect("link the checkout's target directory");
        Scratch::Own(scratch)
    }

    pub fn path(&self) -> &Path {
        match self {
            Scratch::Shared(path) => path,
            Scratch::Own(dir) => dir.path(),
        }
    }
}

/// The directory of this workspace's `cargo-sparkds`, built now if it is not fresh: the command
/// that the tutorial installs with `cargo install --path .../crates/cargo-sparkds`.
pub fn cargo_sparkds_dir() -> PathBuf {
    let binary = sparkds::sparkds_binary()
        .unwrap_or_else(|e| panic!("cannot build cargo-sparkds for the tutorial: {e}"));
    binary
        .parent()
        .expect("cargo-sparkds has a directory")
        .to_path_buf()
}

/// A directory to put on `PATH` so that `cargo insta` runs: none when it already does,
/// else `<repo>/target/book/tools/bin`, where it is installed once.
pub fn cargo_insta_path() -> Option<PathBuf> {
    let works = |path: Option<&Path>| {
        let mut command = Command::new("cargo");
        command.args(["insta", "--version"]);
        if let Some(path) = path {
            command.env("PATH", prepend_path(path));
        }
        command.output().is_ok_and(|o| o.status.success())
    };
    if works(None) {
        return None;
    }
    let root = book_target().join("tools");
    let bin = root.join("bin");
    if !works(Some(&bin)) {
        let status = Command::new("cargo")
            .args([
                "install",
                "cargo-insta@1.49.0",
                "--locked",
                "--quiet",
                "--root",
            ])
            .arg(&root)
            .env_remove("CARGO_TARGET_DIR")
            .status()
            .expect("cargo install runs");
        assert!(status.success(), "cannot install cargo-insta");
    }
    Some(bin)
}

/// `PATH` with `dir` first.
pub fn prepend_path(dir: &Path) -> std::ffi::OsString {
    prepend_paths(&[dir.to_path_buf()])
}

/// `PATH` with `dirs` first, in their order.
pub fn prepend_paths(dirs: &[PathBuf]) -> std::ffi::OsString {
    let mut paths = dirs.to_vec();
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(paths).expect("a valid PATH")
}

/// A compile error that a chapter quotes: a ```` ```text ```` block with the export line it
/// shows (`12 | spark_datasource::export!(...);`) and the lines of rustc's output it quotes.
pub struct QuotedError {
    pub origin: String,
    /// The export line, as the block shows it.
    pub export_line: String,
    /// The lines of the block that rustc must print: `error...`, `--> ...`, `= note: ...` and
    /// the numbered source line, trimmed.
    pub lines: Vec<String>,
}

/// The compile errors of the export line that the book quotes, in every chapter.
pub fn quoted_compile_errors() -> Vec<QuotedError> {
    chapters()
        .iter()
        .flat_map(|chapter: &Chapter| {
            fences(&chapter.text)
                .into_iter()
                .filter(|fence| fence.info == "text")
                .filter_map(|fence| {
                    let export_line = fence.body.lines().find_map(source_export_line)?;
                    let lines = fence
                        .body
                        .lines()
                        .map(str::trim)
                        .filter(|line| {
                            line.starts_with("error")
                                || line.starts_with("-->")
                                || line.starts_with("= note:")
                                || source_export_line(line).is_some()
                        })
                        .map(str::to_string)
                        .collect();
                    Some(QuotedError {
                        origin: format!("{}:{}", chapter.path.display(), fence.line),
                        export_line,
                        lines,
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The export line of a numbered source line of rustc's output, `12 | spark_datasource::...`.
fn source_export_line(line: &str) -> Option<String> {
    let (number, code) = line.trim().split_once(" | ")?;
    (number.chars().all(|c| c.is_ascii_digit()) && code.starts_with("spark_datasource::export!("))
        .then(|| code.to_string())
}

/// Builds the library of `project` with each quoted export line in place of its own, and checks
/// that rustc fails with the quoted lines; then puts the project's own `src/lib.rs` back.
pub fn check_quoted_compile_errors(project: &Path) {
    let errors = quoted_compile_errors();
    assert!(
        !errors.is_empty(),
        "the book quotes no compile error of the export line"
    );
    let lib = project.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).expect("the project's src/lib.rs");
    let mut problems = Vec::new();
    for error in &errors {
        let edited: String = original
            .lines()
            .map(|line| {
                if line.starts_with("spark_datasource::export!(") {
                    error.export_line.as_str()
                } else {
                    line
                }
            })
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::write(&lib, edited).expect("write src/lib.rs");
        let output = Command::new("cargo")
            .args(["build", "--lib", "--color", "never"])
            .current_dir(project)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .output()
            .expect("cargo runs");
        let printed = String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            problems.push(format!(
                "{}: `{}` builds, but the book says it fails",
                error.origin, error.export_line
            ));
            continue;
        }
        let printed_lines: Vec<&str> = printed.lines().map(str::trim).collect();
        for line in &error.lines {
            if !printed_lines.contains(&line.as_str()) {
                problems.push(format!(
                    "{}: rustc did not print `{line}`; it printed:\n{printed}",
                    error.origin
                ));
            }
        }
    }
    std::fs::write(&lib, original).expect("restore src/lib.rs");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
