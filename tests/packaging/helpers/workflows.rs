//! The workflows under test: this repository's `.github/workflows/` (the reusable workflows that
//! generated projects call, its release and its tests), the template's `ci.yml` as cargo-generate
//! renders it with the template's hook (a short caller of the reusable workflows, at the commit
//! that `template/hooks/workflows.rhai` pins), and the tools that read them (a YAML parser,
//! actionlint, the matrix step run with Python).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_norway::Value;

use super::repo_root;

/// The repository and tag of the answer `sdk=git:...` on github.com.
pub const SDK_GIT: &str = "https://github.com/example-owner/spark-datasource-template.git";
pub const SDK_TAG: &str = "v0.1.0";

/// One answer `sdk`, with where CI installs `cargo-sparkds` from for it (the input
/// `sparkds-install` of the generated `ci.yml`).
#[derive(Debug, Clone)]
pub struct Sdk {
    pub answer: String,
    pub sparkds_install: String,
}

/// The canonical repository: `repository` of `[workspace.package]` in the root Cargo.toml.
pub fn canonical_repository() -> String {
    let text = std::fs::read_to_string(repo_root().join("Cargo.toml")).expect("read Cargo.toml");
    text.lines()
        .find_map(|line| line.strip_prefix("repository = "))
        .map(|value| value.trim_matches('"').to_string())
        .expect("the root Cargo.toml records the repository in [workspace.package]")
}

/// The file of the template's hook that pins the reusable workflows.
pub const PIN_FILE: &str = "template/hooks/workflows.rhai";

/// The value of `export const <name> = "...";` in [`PIN_FILE`].
pub fn pinned(name: &str) -> String {
    let text = std::fs::read_to_string(repo_root().join(PIN_FILE)).expect("read the pin file");
    let prefix = format!("export const {name} = \"");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix)?.strip_suffix("\";"))
        .unwrap_or_else(|| panic!("{PIN_FILE} has no line `export const {name} = \"...\";`"))
        .to_string()
}

/// The version of the template, which its hook sets (`variable::set("template_version", ...)`).
pub fn template_version() -> String {
    let hook = std::fs::read_to_string(repo_root().join("template/hooks/validate.rhai"))
        .expect("read the hook");
    hook.lines()
        .find_map(|line| {
            line.strip_prefix("variable::set(\"template_version\", \"")?
                .strip_suffix("\");")
        })
        .expect("the hook sets template_version")
        .to_string()
}

/// What every generated `ci.yml` calls, whatever its `sdk`: `<owner>/<name>/.github/workflows/
/// <file>@<pinned commit>`, with the template's release as the comment (`# v0.1.0`).
pub fn pinned_call(file: &str) -> (String, String) {
    let canonical = canonical_repository();
    let repository = canonical
        .strip_prefix("https://github.com/")
        .expect("the canonical repository is on github.com");
    (
        format!("{repository}/.github/workflows/{file}@{}", pinned("COMMIT")),
        format!("v{}", template_version()),
    )
}

/// Every form of the answer `sdk`: a tag of a repository on github.com, a crates.io version, a
/// checkout, and a tag of a repository elsewhere.
pub fn sdk_forms() -> Vec<Sdk> {
    let version = template_version();
    vec![
        Sdk {
            answer: format!("git:{SDK_GIT}#{SDK_TAG}"),
            sparkds_install: format!("--git {SDK_GIT} --tag {SDK_TAG} cargo-sparkds"),
        },
        Sdk {
            answer: "version:0.1.0".to_string(),
            sparkds_install: "cargo-sparkds@0.1.0".to_string(),
        },
        // A checkout, which no runner has: CI installs the template's release.
        Sdk {
            answer: "path:/opt/checkouts/spark-datasource-template".to_string(),
            sparkds_install: format!("cargo-sparkds@{version}"),
        },
        Sdk {
            answer: "git:https://example.org/spark-datasource-template.git#v0.1.0".to_string(),
            sparkds_install:
                "--git https://example.org/spark-datasource-template.git --tag v0.1.0 cargo-sparkds"
                    .to_string(),
        },
    ]
}

/// Every platform, in the template's order.
pub const ALL_PLATFORMS: [&str; 5] = [
    "linux-x86_64",
    "linux-aarch64",
    "osx-x86_64",
    "osx-aarch64",
    "windows-x86_64",
];

/// The platform choices the workflow tests render: all, one, the two macOS builds (cross-built on
/// one kind of runner), and mixes.
pub const PLATFORM_CHOICES: [&[&str]; 5] = [
    &ALL_PLATFORMS,
    &["linux-x86_64"],
    &["osx-x86_64", "osx-aarch64"],
    &["linux-aarch64", "windows-x86_64"],
    &["linux-x86_64", "osx-aarch64"],
];

/// The template workflow.
pub fn template_workflow() -> PathBuf {
    repo_root().join("template/.github/workflows/ci.yml.liquid")
}

/// The workflows of this repository, `.github/workflows/*.yml`: the only copy of each.
pub fn repository_workflows() -> Vec<PathBuf> {
    let dir = repo_root().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect(".github/workflows exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    files.sort();
    files
}

/// The workflow `name` of `.github/workflows/`, parsed.
pub fn workflow(name: &str) -> Value {
    let path = repo_root().join(".github/workflows").join(name);
    parse(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {name}: {e}")))
}

/// Whether cargo-generate can be run here.
pub fn cargo_generate_available() -> bool {
    Command::new("cargo")
        .args(["generate", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Generates a project with cargo-generate, exactly as a user does, into `dir`, and returns its
/// directory.
pub fn generate_with_cargo_generate(
    dir: &Path,
    crate_name: &str,
    platforms: &[&str],
    sdk: &Sdk,
) -> PathBuf {
    let output = Command::new("cargo")
        .args(["generate", "--silent", "--vcs", "none", "--path"])
        .arg(repo_root().join("template"))
        .args(["--name", crate_name, "--destination"])
        .arg(dir)
        .arg("-d")
        .arg(format!("sdk={}", sdk.answer))
        .arg("-d")
        .arg(format!("platforms={}", platforms.join(",")))
        .output()
        .unwrap_or_else(|e| {
            panic!("cargo generate runs (.ci/install installs cargo-generate): {e}")
        });
    assert!(
        output.status.success(),
        "cargo generate -d sdk={} failed (.ci/install installs cargo-generate):\n{}",
        sdk.answer,
        String::from_utf8_lossy(&output.stderr)
    );
    dir.join(crate_name)
}

/// The template's `ci.yml` as cargo-generate renders it, with the template's hook, for a project
/// named `crate_name` with `platforms` and `sdk`.
pub fn render(crate_name: &str, platforms: &[&str], sdk: &Sdk) -> String {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let project = generate_with_cargo_generate(dir.path(), crate_name, platforms, sdk);
    std::fs::read_to_string(project.join(".github/workflows/ci.yml")).expect("read ci.yml")
}

/// The template workflow rendered for a project from a tag on github.com.
pub fn render_from_git(crate_name: &str, platforms: &[&str]) -> String {
    render(crate_name, platforms, &sdk_forms()[0])
}

/// Parses a workflow.
pub fn parse(yaml: &str) -> Value {
    serde_norway::from_str(yaml).expect("the workflow is valid YAML")
}

/// The `actionlint` command, installed by `ci-templates/install-actionlint.sh` (idempotent: it
/// only fetches the package the first time).
pub fn actionlint() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Ok(path) = std::env::var("ACTIONLINT") {
            return PathBuf::from(path);
        }
        let output = Command::new("bash")
            .arg(repo_root().join("ci-templates/install-actionlint.sh"))
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "ci-templates/install-actionlint.sh failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
    })
    .clone()
}

/// Runs actionlint on `files` and returns its report, empty when they are clean.
pub fn lint(files: &[PathBuf]) -> String {
    let output = Command::new(actionlint())
        .args(files)
        .output()
        .expect("actionlint runs");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.status.success() || !report.is_empty(),
        "actionlint failed without a report"
    );
    report
}

/// Runs the `matrix` step of the `plan` job with Python, as the runner does, and returns its
/// output `matrix` (or the error it exits with).
pub fn run_matrix_step(
    workflow: &Value,
    data_source: &str,
    platforms_json: &str,
) -> Result<Value, String> {
    let steps = workflow["jobs"]["plan"]["steps"]
        .as_sequence()
        .expect("the plan job has steps");
    let step = steps
        .iter()
        .find(|s| s["id"].as_str() == Some("matrix"))
        .expect("the plan job has a step with id `matrix`");
    assert_eq!(step["shell"].as_str(), Some("python"));
    let script = step["run"].as_str().expect("the matrix step runs a script");
    let dir = tempfile::TempDir::new().expect("temp dir");
    let github_output = dir.path().join("output");
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .env("DATA_SOURCE", data_source)
        .env("PLATFORMS", platforms_json)
        .env("GITHUB_OUTPUT", &github_output)
        .output()
        .expect("python3 runs");
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    let written = std::fs::read_to_string(&github_output).expect("the step writes its output");
    let matrix = written
        .strip_prefix("matrix=")
        .expect("the output is `matrix=<json>`")
        .trim();
    Ok(serde_norway::from_str(matrix).expect("the matrix is JSON"))
}

/// One pinned action of `ci-templates/actions.lock`: `owner/name@commit`, the release tag of
/// that commit, the `runs.using` of its `action.yml` there, and for a composite action the
/// actions its steps use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedAction {
    pub reference: String,
    pub tag: String,
    pub runs_using: String,
    pub uses: Vec<String>,
}

/// The runtimes an action may declare: Node 24, or a composite or container action (whose own
/// steps are checked where they are listed).
pub const ALLOWED_RUNTIMES: [&str; 3] = ["node24", "composite", "docker"];

/// The pinned actions of `ci-templates/actions.lock`, by `owner/name@commit`.
pub fn actions_lock() -> BTreeMap<String, PinnedAction> {
    let path = repo_root().join("ci-templates/actions.lock");
    let text = std::fs::read_to_string(&path).expect("read ci-templates/actions.lock");
    let mut actions = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [reference, tag, runs_using, rest @ ..] = fields.as_slice() else {
            panic!(
                "actions.lock:{}: `action@commit tag runs.using [uses=...]`, found: {line}",
                number + 1
            );
        };
        let uses = rest
            .iter()
            .map(|field| {
                field
                    .strip_prefix("uses=")
                    .unwrap_or_else(|| {
                        panic!("actions.lock:{}: unknown field `{field}`", number + 1)
                    })
                    .to_string()
            })
            .collect();
        let action = PinnedAction {
            reference: reference.to_string(),
            tag: tag.to_string(),
            runs_using: runs_using.trim_matches(['\'', '"']).to_string(),
            uses,
        };
        assert!(
            actions.insert(reference.to_string(), action).is_none(),
            "actions.lock:{}: {reference} is listed twice",
            number + 1
        );
    }
    actions
}

/// Whether `reference` is `owner/name[/path]@<40 hex digits>`.
pub fn is_pinned_to_a_commit(reference: &str) -> bool {
    reference.rsplit_once('@').is_some_and(|(action, sha)| {
        action.contains('/') && sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit())
    })
}

/// Every `uses:` line of a workflow: the reference and the comment after it (`# v1.2.3`).
pub fn uses_lines(workflow: &str) -> Vec<(String, String)> {
    workflow
        .lines()
        .filter_map(|line| {
            let action = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses: ")?;
            let (reference, comment) = action.split_once(" # ").unwrap_or((action, ""));
            Some((reference.trim().to_string(), comment.trim().to_string()))
        })
        .collect()
}

/// The workflows that ship: this repository's, and the template's, rendered for each form of the
/// answer `sdk`, each with a name for messages.
pub fn shipped_workflows() -> Vec<(String, String)> {
    let mut sources: Vec<(String, String)> = repository_workflows()
        .iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(p).expect("read"),
            )
        })
        .collect();
    for sdk in sdk_forms() {
        sources.push((
            format!("template ci.yml for sdk={}", sdk.answer),
            render("rust_range", &ALL_PLATFORMS, &sdk),
        ));
    }
    sources
}
