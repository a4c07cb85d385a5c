//! The examples of `examples/`: where they are, what cargo knows of them, and running cargo,
//! make and the sparkds command on them.

mod export_line;

pub use export_line::exported_names;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The root of this repository.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The directory of the examples.
pub fn examples_dir() -> PathBuf {
    repo_root().join("examples")
}

/// The directories of `examples/`, each example's own, in order.
pub fn example_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(examples_dir())
        .expect("examples/ is readable")
        .map(|entry| entry.expect("an entry of examples/").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// A Rust example: a directory of `examples/` with a Cargo.toml.
#[derive(Debug, Clone)]
pub struct RustExample {
    /// The directory's name, as `examples/<dir>`.
    pub dir: String,
    /// The path of its Cargo.toml.
    pub manifest: PathBuf,
}

/// The Rust examples, found on disk rather than in the workspace: an example that the
/// workspace forgot is found too.
pub fn rust_examples() -> Vec<RustExample> {
    example_dirs()
        .into_iter()
        .filter(|dir| dir.join("Cargo.toml").is_file())
        .map(|dir| RustExample {
            dir: dir
                .file_name()
                .expect("a directory has a name")
                .to_string_lossy()
                .to_string(),
            manifest: dir.join("Cargo.toml"),
        })
        .collect()
}

/// `cargo metadata` of the repository's workspace, without its dependencies: the members,
/// their manifests, features and dependencies as declared.
pub fn metadata() -> &'static Value {
    static METADATA: OnceLock<Value> = OnceLock::new();
    METADATA.get_or_init(|| {
        let output = Command::new(cargo_program())
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .current_dir(repo_root())
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "`cargo metadata` failed in the repository's root:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
    })
}

/// The package of the workspace whose manifest is `manifest`, if the workspace has one.
pub fn package(manifest: &Path) -> Option<&'static Value> {
    let manifest = manifest.canonicalize().expect("the manifest exists");
    metadata()["packages"]
        .as_array()
        .expect("cargo metadata lists packages")
        .iter()
        .find(|package| {
            package["manifest_path"]
                .as_str()
                .and_then(|path| Path::new(path).canonicalize().ok())
                .is_some_and(|path| path == manifest)
        })
}

/// The package name of a Rust example, which must be a workspace member.
pub fn package_name(example: &RustExample) -> String {
    let package = package(&example.manifest).unwrap_or_else(|| {
        panic!(
            "examples/{} is not a member of the workspace: add \"examples/{}\" to `members` in \
             the root Cargo.toml",
            example.dir, example.dir
        )
    });
    package["name"]
        .as_str()
        .expect("a package has a name")
        .to_string()
}

/// The target directory of the cargo commands that these tests run: `<target>/generated`, in
/// the target directory of this test (`$CARGO_TARGET_DIR` too), where the generated projects of
/// the other tests build: the examples reuse most of their dependencies (the same versions,
/// features and profile), and stay apart from the workspace's own builds, whose features cargo
/// unifies across every member (a build of one example there would relink its library).
pub fn examples_target() -> PathBuf {
    let profile = sparkds::profile_dir().expect("the test binary has a directory");
    profile
        .parent()
        .expect("a profile directory is inside the target directory")
        .join("generated")
}

/// The cargo that runs this test, else `cargo`.
fn cargo_program() -> std::ffi::OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Runs `cargo <args>` in the repository's root with the examples' target directory; the
/// failure message holds cargo's output.
pub fn cargo(args: &[&str]) -> Result<(), String> {
    let output = Command::new(cargo_program())
        .args(args)
        .current_dir(repo_root())
        .env("CARGO_TARGET_DIR", examples_target())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    checked(&format!("cargo {}", args.join(" ")), output).map(drop)
}

/// `output` when the command succeeded, else a message with what it printed.
pub fn checked(command: &str, output: Output) -> Result<Output, String> {
    if output.status.success() {
        return Ok(output);
    }
    Err(format!(
        "`{command}` failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// The files and directories under `root`, relative and `/`-separated, without build output.
pub fn entries(root: &Path) -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("a readable directory") {
            let path = entry.expect("a directory entry").path();
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            let relative = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            out.push(relative);
            if path.is_dir() {
                walk(&path, root, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}
