//! The supply chain of what the workflows build and publish, each property of SECURITY.md with
//! its test: no cache is restored in a tag's run; no job that holds a secret, or a token that
//! writes, builds anything; the crates.io token reaches only a script that packages and
//! publishes with `--no-verify` what a job without it verified; every tool pip installs is
//! checked against a SHA-256 recorded in the repository; nothing is downloaded unchecked.

use std::path::Path;
use std::process::Command;

use serde_norway::Value;

use crate::helpers::workflows::{parse, repository_workflows, workflow};

/// The condition of every cache step: not in a tag's run.
const NOT_ON_A_TAG: &str = "${{ !startsWith(github.ref, 'refs/tags/') }}";

/// This repository's workflows, parsed, each with its file name.
fn workflows() -> Vec<(String, Value)> {
    repository_workflows()
        .iter()
        .map(|path| {
            let name = path
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            (name, parse(&std::fs::read_to_string(path).expect("read")))
        })
        .collect()
}

/// The steps of a job (none for a job that calls a reusable workflow).
fn steps(job: &Value) -> Vec<Value> {
    job["steps"].as_sequence().cloned().unwrap_or_default()
}

/// The script of a step, empty for an action.
fn script(step: &Value) -> String {
    step["run"].as_str().unwrap_or_default().to_string()
}

/// A cache is written by the runs before, and what ran there (a dependency's build script, a
/// pull request's code on the default branch's cache) could have put anything into it: a tag's
/// run, which publishes, restores none, so that a release is built from its commit and the
/// registries alone.
#[test]
fn no_cache_is_restored_in_a_tag_s_run() {
    let mut caches = 0;
    for (name, workflow) in workflows() {
        for (job, body) in workflow["jobs"].as_mapping().expect("jobs") {
            for step in steps(body) {
                let Some(uses) = step["uses"].as_str() else {
                    continue;
                };
                if !uses.starts_with("actions/cache") {
                    continue;
                }
                caches += 1;
                assert!(
                    uses.starts_with("actions/cache@"),
                    "{name}: job {job:?} uses {uses}: only actions/cache, whose condition this \
                     test reads"
                );
                assert_eq!(
                    step["if"].as_str(),
                    Some(NOT_ON_A_TAG),
                    "{name}: job {job:?}: the cache step {:?} needs `if: {NOT_ON_A_TAG}`",
                    step["name"].as_str().unwrap_or(uses)
                );
            }
        }
    }
    assert!(caches >= 8, "the workflows cache: {caches} cache steps");
}

/// What builds or installs code: a build runs the build scripts and procedural macros of every
/// dependency (cargo), the build backend of a package (pip), or a generator (mdbook).
fn builds(script: &str) -> Option<String> {
    for line in script.lines().map(str::trim) {
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_matches('"'))
            .collect();
        let has = |word: &str| words.contains(&word);
        for (i, word) in words.iter().enumerate() {
            let next = words.get(i + 1).copied().unwrap_or_default();
            let build = match (*word, next) {
                ("cargo", "package" | "publish") => !has("--no-verify"),
                ("cargo", other) => !other.starts_with('-') && !other.is_empty(),
                (pip, "install") if pip.ends_with("pip") => {
                    !(has("--require-hashes") && has("--only-binary") && has(":all:"))
                }
                (pip, "wheel") if pip.ends_with("pip") => true,
                ("mdbook", _) => true,
                ("bash", script) if script.ends_with("install-tools.sh") => true,
                (_, _) if word.ends_with("crates.py") => next == "package",
                (_, _) if word.ends_with("jvm/build.sh") || word.ends_with("jvm/maven.sh") => true,
                _ => false,
            };
            if build {
                return Some(line.to_string());
            }
        }
    }
    None
}

/// Why a job can publish: the secrets it names, `github.token`, or a permission to write.
fn holds(job: &Value) -> Vec<String> {
    let text = serde_norway::to_string(job).expect("YAML");
    let mut held: Vec<String> = ["secrets.", "github.token", "GITHUB_TOKEN"]
        .into_iter()
        .filter(|s| text.contains(s))
        .map(str::to_string)
        .collect();
    if let Some(permissions) = job["permissions"].as_mapping() {
        for (scope, level) in permissions {
            if level.as_str() == Some("write") {
                held.push(format!("{}: write", scope.as_str().unwrap_or_default()));
            }
        }
    }
    held
}

/// Steps of one job share its machine: a build step could leave behind what reads a later
/// step's secret. So a job that holds a secret, `github.token`, or a permission to write builds
/// nothing, restores no cache, and takes what it publishes from jobs without them (artifacts).
/// The jobs that call a reusable workflow are checked in that workflow.
#[test]
fn no_job_that_holds_a_secret_or_a_token_that_writes_builds_anything() {
    let mut privileged = Vec::new();
    for (name, workflow) in workflows() {
        for (job, body) in workflow["jobs"].as_mapping().expect("jobs") {
            let job = job.as_str().expect("a job name");
            if body.get("uses").is_some() {
                continue;
            }
            let held = holds(body);
            if held.is_empty() {
                continue;
            }
            privileged.push(format!("{name}:{job}"));
            for step in steps(body) {
                if let Some(line) = builds(&script(&step)) {
                    panic!(
                        "{name}: job {job} holds {held:?} and builds (`{line}`): build in a job \
                         without them, and pass what it made as an artifact"
                    );
                }
                assert!(
                    !step["uses"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("actions/cache")),
                    "{name}: job {job} holds {held:?} and restores a cache"
                );
            }
        }
    }
    privileged.sort();
    assert_eq!(
        privileged,
        [
            "native-datasource.yml:release",
            "release.yml:crates",
            "release.yml:maven",
            "release.yml:pages",
            "release.yml:pypi",
            "spark-plugin-jar.yml:release",
        ],
        "the jobs that hold a secret or a token that writes"
    );
}

#[test]
fn what_counts_as_building_is_seen() {
    for line in [
        "cargo build --locked --release",
        "cargo install --locked cargo-deny@0.20.2",
        "cargo package --locked -p x",
        "cargo publish --locked -p x",
        "python3 .github/release/crates.py package",
        "python3 -m pip install pyspark==4.3.0",
        "\"$RUNNER_TEMP/uv/bin/pip\" install --require-hashes -r r.txt",
        "pip wheel --no-deps python/",
        "mdbook build book",
        "bash book/install-tools.sh",
        "bash jvm/maven.sh --out maven",
    ] {
        assert!(builds(line).is_some(), "{line}");
    }
    for line in [
        "cargo publish --locked --allow-dirty --no-verify -p x",
        "python3 .github/release/crates.py publish \"$SUMS\"",
        "\"$RUNNER_TEMP/uv/bin/pip\" install --quiet --require-hashes --only-binary :all: -r r.txt",
        "bash .github/release/maven-central.sh upload bundle.zip",
        "gh release upload \"$TAG\" package/*",
        "cargo --version",
    ] {
        assert_eq!(builds(line), None, "{line}");
    }
}

/// The release publishes the crates from a job that holds the crates.io token and builds
/// nothing: its one script, `crates.py publish`, run here with a stand-in for cargo that
/// records each call, packages the crates without building them (`cargo package
/// --no-verify`), refuses any package that is not byte for byte one that `crates.py package`
/// verified in the job without the token, and publishes each with `--no-verify`.
#[test]
fn the_crates_token_reaches_only_a_script_that_publishes_what_was_verified_without_building() {
    let release = workflow("release.yml");
    let job = &release["jobs"]["crates"];
    let with_token: Vec<String> = steps(job)
        .iter()
        .filter(|s| {
            serde_norway::to_string(s)
                .expect("YAML")
                .contains("secrets.")
        })
        .map(script)
        .collect();
    assert_eq!(
        with_token,
        ["python3 .github/release/crates.py publish \"$RUNNER_TEMP/verified/target/package/SHA256SUMS\""],
        "the one step of the job `crates` that holds the token"
    );
    assert_eq!(
        job["needs"],
        parse("[crate-packages, maven]"),
        "it publishes what `crate-packages` verified"
    );
    let packaging = script(
        steps(&release["jobs"]["crate-packages"])
            .iter()
            .find(|s| script(s).contains("crates.py package"))
            .expect("`crate-packages` runs crates.py package"),
    );
    assert!(holds(&release["jobs"]["crate-packages"]).is_empty());
    assert!(packaging.contains("crates.py package"));

    let dir = tempfile::TempDir::new().expect("temp dir");
    let stand_in = StandIn::new(dir.path());
    let sums = stand_in.target.join("package/SHA256SUMS");

    let order = stand_in.order();
    let packaged = stand_in.run(&["package"], "");
    assert!(packaged.status.success(), "{packaged:?}");
    let calls = stand_in.calls();
    let mut package = vec!["package", "--locked", "--allow-dirty"];
    for name in &order {
        package.extend(["-p", name.as_str()]);
    }
    assert_eq!(
        calls,
        [package.join(" ")],
        "`crates.py package` builds each crate from its package (cargo package verifies)"
    );
    let listed = std::fs::read_to_string(&sums).expect("SHA256SUMS");
    assert_eq!(listed.lines().count(), order.len(), "{listed}");

    let published = stand_in.run(&["publish", sums.to_str().expect("a path")], "");
    assert!(published.status.success(), "{published:?}");
    let mut no_verify = vec!["package", "--locked", "--allow-dirty", "--no-verify"];
    for name in &order {
        no_verify.extend(["-p", name.as_str()]);
    }
    let mut wanted = vec![no_verify.join(" ")];
    for name in &order {
        wanted.push(format!(
            "publish --locked --allow-dirty --no-verify -p {name}"
        ));
    }
    assert_eq!(stand_in.calls(), wanted);
    // The dry run of a pull request: the same comparison, and no publication.
    let dry = stand_in.run(
        &["publish", "--dry-run", sums.to_str().expect("a path")],
        "",
    );
    assert!(dry.status.success(), "{dry:?}");
    assert_eq!(stand_in.calls(), wanted[..1]);

    // A package that differs from the verified one is refused before anything is published.
    std::fs::write(&sums, listed.replacen(&listed[..64], &"0".repeat(64), 1)).expect("write");
    let refused = stand_in.run(&["publish", sums.to_str().expect("a path")], "");
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("the packages made here are not those that were verified"),
        "{refused:?}"
    );
    assert!(
        !stand_in.calls().iter().any(|c| c.starts_with("publish")),
        "{:?}",
        stand_in.calls()
    );
    // And a tree with another change than the record of the released jars.
    std::fs::write(&sums, &listed).expect("write");
    let refused = stand_in.run(
        &["publish", sums.to_str().expect("a path")],
        " M crates/sparkds/src/lib.rs",
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("the tree has changes besides"),
        "{refused:?}"
    );
    assert!(stand_in.calls().is_empty(), "{:?}", stand_in.calls());
}

/// `cargo` and `git` stand-ins on `PATH` for `crates.py`: cargo answers `metadata` as cargo
/// does, writes a package per `-p` for `package`, and records every call but `metadata`; git
/// prints the status it is given.
struct StandIn {
    bin: std::path::PathBuf,
    log: std::path::PathBuf,
    target: std::path::PathBuf,
}

impl StandIn {
    fn new(dir: &Path) -> StandIn {
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let write = |name: &str, text: String| {
            let path = bin.join(name);
            std::fs::write(&path, text).expect("write");
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        };
        write(
            "cargo",
            format!(
                r#"#!/usr/bin/env bash
set -euo pipefail
if [ "$1" = metadata ]; then exec "{cargo}" "$@"; fi
echo "$*" >> "$STAND_IN_LOG"
if [ "$1" = package ]; then
  mkdir -p "$CARGO_TARGET_DIR/package"
  while [ $# -gt 0 ]; do
    if [ "$1" = -p ]; then
      echo "the package of $2" > "$CARGO_TARGET_DIR/package/$2-$STAND_IN_VERSION.crate"
      shift
    fi
    shift
  done
fi
"#
            ),
        );
        write(
            "git",
            "#!/usr/bin/env bash\nprintf '%s' \"$STAND_IN_STATUS\"\n".to_string(),
        );
        StandIn {
            bin,
            log: dir.join("calls"),
            target: dir.join("target"),
        }
    }

    /// Runs `crates.py ARGS` from the repository root, with `git status` printing `status`.
    fn run(&self, args: &[&str], status: &str) -> std::process::Output {
        let _ = std::fs::remove_file(&self.log);
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let root = crate::helpers::repo_root();
        Command::new("python3")
            .arg(root.join(".github/release/crates.py"))
            .args(args)
            .current_dir(&root)
            .env("PATH", path)
            .env("STAND_IN_LOG", &self.log)
            .env("STAND_IN_STATUS", status)
            // The workspace's version, which every published crate has (crates.py checks it).
            .env("STAND_IN_VERSION", env!("CARGO_PKG_VERSION"))
            .env("CARGO_TARGET_DIR", &self.target)
            .output()
            .expect("python3 runs")
    }

    /// The cargo calls of the last run.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The publishing order, as `crates.py order` prints it.
    fn order(&self) -> Vec<String> {
        let output = self.run(&["order"], "");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// A requirements file (`pip install --require-hashes -r`): each requirement pinned with `==`
/// and at least one `--hash=sha256:` of 64 hex digits. Returns the pinned `name==version`s.
fn hashed_requirements(text: &str, what: &str) -> Vec<String> {
    let joined = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("\\\n", " ");
    let mut pinned = Vec::new();
    for line in joined.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let requirement = words.next().expect("a requirement");
        assert!(
            requirement.contains("=="),
            "{what}: `{requirement}` is not pinned with =="
        );
        let hashes: Vec<&str> = words
            .map(|w| {
                w.strip_prefix("--hash=sha256:")
                    .unwrap_or_else(|| panic!("{what}: `{w}` is not --hash=sha256:<hex>"))
            })
            .collect();
        assert!(!hashes.is_empty(), "{what}: {requirement} has no hash");
        for hash in hashes {
            assert!(
                hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()),
                "{what}: {requirement}: `{hash}` is not a SHA-256"
            );
        }
        pinned.push(requirement.to_string());
    }
    pinned
}

/// The text of a here-document `cat > FILE <<'EOF' ... EOF` of a script, by FILE's suffix.
fn here_document(script: &str, file: &str) -> Option<String> {
    let mut lines = script.lines();
    lines.find(|l| l.contains("<<'EOF'") && l.contains(file))?;
    Some(
        lines
            .take_while(|l| l.trim() != "EOF")
            .map(|l| l.trim_start().to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// Every `pip install` and `pip wheel` of the workflows installs only what a requirements file
/// pins with its SHA-256 (`--require-hashes`), wheels only (`--only-binary :all:`) or without
/// build isolation (whose build tools pip would fetch unchecked), after the hashed setuptools.
/// The files are in `.github/requirements/`, or written by the step itself where the caller's
/// checkout has no file of this repository; the zig requirements of the two workflows that
/// link against the glibc baseline are the same.
#[test]
fn pip_installs_only_what_a_requirements_file_pins_with_its_sha256() {
    let root = crate::helpers::repo_root();
    let mut zig = Vec::new();
    let mut installs = 0;
    for (name, workflow) in workflows() {
        for (job, body) in workflow["jobs"].as_mapping().expect("jobs") {
            for step in steps(body) {
                let script = script(&step);
                for line in script.lines().filter(|l| {
                    l.contains("pip\" install")
                        || l.contains("pip install")
                        || l.contains("pip wheel")
                        || l.contains("pip\" wheel")
                }) {
                    installs += 1;
                    let words: Vec<&str> = line.split_whitespace().collect();
                    let where_ = format!("{name}: job {job:?}: `{}`", line.trim());
                    if words.contains(&"wheel") {
                        assert!(
                            words.contains(&"--no-build-isolation") && words.contains(&"--no-deps"),
                            "{where_}: build with the hashed setuptools, without build isolation"
                        );
                        continue;
                    }
                    assert!(
                        words.contains(&"--require-hashes"),
                        "{where_}: --require-hashes"
                    );
                    assert!(
                        (words.contains(&"--only-binary") && words.contains(&":all:"))
                            || words.contains(&"--no-build-isolation"),
                        "{where_}: wheels only, or no build isolation"
                    );
                    let file = words
                        .iter()
                        .position(|w| *w == "-r")
                        .and_then(|i| words.get(i + 1))
                        .unwrap_or_else(|| panic!("{where_}: -r <requirements file>"))
                        .trim_matches('"');
                    let text = if let Some(temp) = file.strip_prefix("$RUNNER_TEMP/") {
                        here_document(&script, temp)
                            .unwrap_or_else(|| panic!("{where_}: the step writes {file}"))
                    } else if file.contains('$') {
                        // One file per Spark line: the test below reads them all.
                        assert_eq!(file, ".github/requirements/pyspark-$LINE.txt", "{where_}");
                        continue;
                    } else {
                        std::fs::read_to_string(root.join(file))
                            .unwrap_or_else(|e| panic!("{where_}: {file}: {e}"))
                    };
                    let pinned = hashed_requirements(&text, &where_);
                    if file.ends_with("zig-requirements.txt") {
                        zig.push((name.clone(), text.clone(), pinned));
                    }
                }
            }
        }
    }
    assert!(installs >= 6, "{installs} pip commands");
    let files: Vec<&String> = zig.iter().map(|(name, _, _)| name).collect();
    assert_eq!(files, ["native-datasource.yml", "spark-plugin-jar.yml"]);
    assert_eq!(
        zig[0].1, zig[1].1,
        "the zig requirements of native-datasource.yml and spark-plugin-jar.yml are the same"
    );
    assert_eq!(zig[0].2, ["ziglang==0.14.1", "cargo-zigbuild==0.20.1"]);
}

/// The release compiles the JVM plugin against each Spark line's pyspark, a source distribution
/// whose SHA-256 `.github/requirements/pyspark-<line>.txt` records: one file per line of
/// `jvm/spark-lines.txt`, of the release that line names, and no other.
#[test]
fn every_spark_line_s_pyspark_is_pinned_with_its_sha256() {
    let root = crate::helpers::repo_root();
    let lines: Vec<(String, String)> = std::fs::read_to_string(root.join("jvm/spark-lines.txt"))
        .expect("read jvm/spark-lines.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut words = l.split_whitespace();
            (
                words.next().expect("a line").to_string(),
                words.next().expect("a pyspark release").to_string(),
            )
        })
        .collect();
    let mut files: Vec<String> = std::fs::read_dir(root.join(".github/requirements"))
        .expect(".github/requirements")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|f| f.starts_with("pyspark-"))
        .collect();
    files.sort();
    let wanted: Vec<String> = lines
        .iter()
        .map(|(line, _)| format!("pyspark-{line}.txt"))
        .collect();
    assert_eq!(
        files, wanted,
        "one .github/requirements/pyspark-<line>.txt per line of jvm/spark-lines.txt: pin a new \
         line's pyspark with the SHA-256 PyPI lists for its source distribution"
    );
    for (line, release) in &lines {
        let file = format!(".github/requirements/pyspark-{line}.txt");
        let text = std::fs::read_to_string(root.join(&file)).expect("read");
        assert_eq!(
            hashed_requirements(&text, &file),
            [format!("pyspark=={release}")],
            "{file}: the release jvm/spark-lines.txt names for {line}"
        );
    }
}

/// Nothing is downloaded by a step but through a client that checks what it fetched (cargo
/// against the registry's index and Cargo.lock, pip against the hashes above, the actions and
/// their runtime): no `curl` or `wget` in a workflow.
#[test]
fn no_step_downloads_a_file_unchecked() {
    for (name, workflow) in workflows() {
        for (job, body) in workflow["jobs"].as_mapping().expect("jobs") {
            for step in steps(body) {
                for line in script(&step).lines() {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    assert!(
                        !words.iter().any(|w| *w == "curl" || *w == "wget"),
                        "{name}: job {job:?}: `{}` downloads a file: check it against a SHA-256 \
                         recorded here (sha256sum --check), and change this test",
                        line.trim()
                    );
                }
            }
        }
    }
}

/// `cargo install` of a workflow takes an exact version with `--locked`: crates.io's index
/// holds the checksum of the package, and the Cargo.lock inside it those of every dependency,
/// which cargo checks before it builds. (The generated workflow's `sparkds-install` is checked
/// with its inputs.)
#[test]
fn cargo_installs_an_exact_version_locked() {
    let mut seen = 0;
    for (name, workflow) in workflows() {
        for (job, body) in workflow["jobs"].as_mapping().expect("jobs") {
            for step in steps(body) {
                for line in script(&step)
                    .lines()
                    .filter(|l| l.contains("cargo install"))
                {
                    seen += 1;
                    assert!(line.contains("--locked"), "{name}: {job:?}: {line}");
                    let exact = line.contains("\"cargo-deny@$CARGO_DENY_VERSION\"")
                        || line.contains("$SPARKDS_INSTALL");
                    assert!(
                        exact,
                        "{name}: job {job:?}: `{}` names no exact version",
                        line.trim()
                    );
                }
            }
        }
    }
    assert!(seen >= 3, "{seen}");
    let deny = workflow("rust-checks.yml");
    let version = deny["jobs"]["deny"]["env"]["CARGO_DENY_VERSION"]
        .as_str()
        .expect("CARGO_DENY_VERSION");
    assert!(
        version.split('.').count() == 3 && version.split('.').all(|p| p.parse::<u32>().is_ok()),
        "{version}"
    );
}
