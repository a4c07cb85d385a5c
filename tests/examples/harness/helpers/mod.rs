//! The examples of `examples/sync.yaml`: generating each one again with cargo-generate,
//! comparing it with the example, and running cargo in it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// Set to `1` to copy what the template generates over the examples' template-owned files.
pub const RESYNC_VAR: &str = "EXAMPLES_RESYNC";

/// The command that resyncs the examples, for failure messages.
pub const RESYNC: &str = "EXAMPLES_RESYNC=1 cargo test -p template-tests --test examples";

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

/// The files of `dir` that git tracks or would add (`/`-separated, relative to `dir`): build
/// output, caches and editors' files, which `.gitignore` lists, are not part of it.
pub fn git_files(dir: &Path) -> BTreeSet<String> {
    let listed = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(dir)
        .output()
        .expect("git lists the repository's files");
    assert!(
        listed.status.success(),
        "git ls-files failed in {}",
        dir.display()
    );
    listed
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).to_string())
        .filter(|f| dir.join(f).is_file()) // deleted in the work tree
        .collect()
}

/// A copy of `template/` as a fresh clone has it, which cargo-generate copies whole: without
/// the caches and build output of a work tree (a `.ruff_cache`, a `target/`).
pub fn clean_template() -> &'static Path {
    static COPY: OnceLock<tempfile::TempDir> = OnceLock::new();
    COPY.get_or_init(|| {
        let template = repo_root().join("template");
        let copy = tempfile::tempdir().expect("a temporary directory");
        for file in git_files(&template) {
            let target = copy.path().join(&file);
            fs::create_dir_all(target.parent().expect("a parent")).expect("mkdir");
            fs::copy(template.join(&file), &target).expect("copy a file of the template");
        }
        copy
    })
    .path()
}

/// The target directory that every example builds into, so that dependencies build once:
/// `$CARGO_TARGET_DIR`, or `target/generated` in this repository, which the generated variants
/// and the Spark tests share (their package names differ from the examples').
pub fn shared_target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target").join("generated"))
}

/// One example of `examples/sync.yaml`.
#[derive(Debug, Clone)]
pub struct Example {
    pub name: String,
    pub capabilities: Vec<String>,
    pub pushdowns: Vec<String>,
    pub platforms: Vec<String>,
    /// Paths the example owns; one ending in `/` owns its directory.
    pub owns: Vec<String>,
    /// Lines the example added to Cargo.toml.
    pub dependencies: Vec<String>,
}

impl Example {
    /// The example's directory.
    pub fn dir(&self) -> PathBuf {
        examples_dir().join(&self.name)
    }

    /// Whether the example owns `relative` (a `/`-separated path in the project).
    pub fn owns(&self, relative: &str) -> bool {
        self.owns.iter().any(|owned| match owned.strip_suffix('/') {
            Some(dir) => relative.starts_with(&format!("{dir}/")),
            None => relative == owned,
        })
    }

    /// The `cargo generate` command line that generates the example, as a user types it.
    pub fn command_line(&self) -> String {
        format!(
            "cargo generate --path template --name {} --silent -d capabilities={} -d \
             pushdowns={} -d platforms={}",
            self.name,
            self.capabilities.join(","),
            self.pushdowns.join(","),
            self.platforms.join(",")
        )
    }

    /// Generates the example with cargo-generate into a new temporary directory, from the
    /// template of this checkout, as a user does.
    pub fn generate(&self) -> Generated {
        let parent = tempfile::tempdir().expect("a temporary directory");
        let output = Command::new("cargo")
            .arg("generate")
            .arg("--path")
            .arg(clean_template())
            .args(["--name", &self.name, "--silent", "--vcs", "none"])
            .arg("--destination")
            .arg(parent.path())
            .arg("-d")
            .arg(format!("capabilities={}", self.capabilities.join(",")))
            .arg("-d")
            .arg(format!("pushdowns={}", self.pushdowns.join(",")))
            .arg("-d")
            .arg(format!("platforms={}", self.platforms.join(",")))
            .output()
            .expect(
                "cargo generate runs (is cargo-generate installed? `cargo install cargo-generate`)",
            );
        assert!(
            output.status.success(),
            "`{}` failed:\n{}{}",
            self.command_line(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Generated {
            dir: parent.path().join(&self.name),
            _parent: parent,
        }
    }

    /// The example's Cargo.toml without the lines it added: what the template generated.
    pub fn cargo_toml_without_additions(&self, text: &str) -> String {
        let mut remaining: Vec<&str> = self.dependencies.iter().map(String::as_str).collect();
        text.lines()
            .filter(
                |line| match remaining.iter().position(|added| added == line) {
                    Some(i) => {
                        remaining.remove(i);
                        false
                    }
                    None => true,
                },
            )
            .map(|line| format!("{line}\n"))
            .collect()
    }
}

impl Example {
    /// The generated `text` of Cargo.toml with the example's lines added at the end of its
    /// `[dependencies]` table: what the example's Cargo.toml is after a resync.
    pub fn cargo_toml_with_additions(&self, text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        let start = lines
            .iter()
            .position(|l| l.trim() == "[dependencies]")
            .expect("the generated Cargo.toml has [dependencies]");
        let mut end = lines[start + 1..]
            .iter()
            .position(|l| l.starts_with('['))
            .map_or(lines.len(), |i| start + 1 + i);
        while end > start + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        let mut out: Vec<&str> = lines[..end].to_vec();
        out.extend(self.dependencies.iter().map(String::as_str));
        out.extend(&lines[end..]);
        out.iter().map(|line| format!("{line}\n")).collect()
    }
}

/// A project that cargo-generate generated, removed when dropped.
pub struct Generated {
    pub dir: PathBuf,
    _parent: tempfile::TempDir,
}

/// The examples that `examples/sync.yaml` lists.
pub fn examples() -> Vec<Example> {
    let path = examples_dir().join("sync.yaml");
    let text = fs::read_to_string(&path).expect("examples/sync.yaml is readable");
    let yaml: Value = serde_norway::from_str(&text).expect("examples/sync.yaml is valid YAML");
    let list = |entry: &Value, key: &str| -> Vec<String> {
        entry[key]
            .as_array()
            .unwrap_or_else(|| panic!("examples/sync.yaml: `{key}` must be a list"))
            .iter()
            .map(|v| {
                v.as_str()
                    .unwrap_or_else(|| panic!("examples/sync.yaml: `{key}` holds strings"))
                    .to_string()
            })
            .collect()
    };
    yaml["examples"]
        .as_array()
        .expect("examples/sync.yaml has a list `examples`")
        .iter()
        .map(|entry| Example {
            name: entry["name"]
                .as_str()
                .expect("each example has a `name`")
                .to_string(),
            capabilities: list(entry, "capabilities"),
            pushdowns: list(entry, "pushdowns"),
            platforms: list(entry, "platforms"),
            owns: list(entry, "owns"),
            dependencies: list(entry, "dependencies"),
        })
        .collect()
}

/// The files under `root`, as `/`-separated relative paths, without build output.
pub fn files(root: &Path) -> BTreeSet<String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeSet<String>) {
        for entry in fs::read_dir(dir).expect("a readable directory") {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().to_string());
            if matches!(name.as_deref(), Some("target" | "__pycache__")) {
                continue;
            }
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let relative = path
                    .strip_prefix(root)
                    .expect("under the root")
                    .to_string_lossy()
                    .replace('\\', "/");
                // Editors' and insta's leftovers are not part of an example.
                if !relative.ends_with(".snap.new") && !relative.ends_with(".pending-snap") {
                    out.insert(relative);
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

/// Runs `cargo <args>` in `dir` with the shared target directory; the failure message holds
/// cargo's output.
pub fn cargo(dir: &Path, args: &[&str]) -> Result<(), String> {
    let output = Command::new("cargo")
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target())
        // Snapshots are compared, never written, as in CI.
        .env("INSTA_UPDATE", "no")
        .env("CI", "true")
        .env_remove(RESYNC_VAR)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "`cargo {}` failed in {}:\n{}{}",
        args.join(" "),
        dir.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}
