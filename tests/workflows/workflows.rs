//! The reusable workflows of `.github/workflows/` and the template's caller of them: the
//! generated workflow is a short caller of the reusable ones, of the canonical repository at the
//! commit the template pins, whatever its `sdk`, with inputs they declare and the permissions
//! their jobs need; each workflow exists once; the matrix has exactly the chosen platforms;
//! everything lints clean with actionlint; every action is pinned to the commit of a release
//! recorded in `ci-templates/actions.lock` as running on Node 24, every cargo command is
//! `--locked`, caches are keyed as they should be, and the release path (tag check, notes, dry
//! run, attestation condition) does what the book says. Dependabot is configured here and in
//! generated projects.

use std::collections::BTreeMap;

use serde_norway::Value;
use tempfile::TempDir;

use crate::helpers::workflows::{
    actions_lock, canonical_repository, generate_with_cargo_generate, is_pinned_to_a_commit, lint,
    parse, pinned, pinned_call, render, render_from_git, repository_workflows, run_matrix_step,
    sdk_forms, shipped_workflows, template_workflow, uses_lines, workflow, PinnedAction,
    ALLOWED_RUNTIMES, ALL_PLATFORMS, PIN_FILE, PLATFORM_CHOICES,
};

#[test]
fn the_build_matrix_has_exactly_the_chosen_platforms() {
    let native = workflow("native-datasource.yml");
    let mut snapshot = String::new();
    for platforms in PLATFORM_CHOICES {
        let workflow = parse(&render_from_git("rust_range", platforms));
        let rendered = workflow["jobs"]["native"]["with"]["platforms"]
            .as_str()
            .expect("the input platforms");
        let chosen: Vec<String> = serde_json::from_str(rendered).expect("platforms is JSON");
        assert_eq!(chosen, platforms.to_vec());
        let matrix =
            run_matrix_step(&native, "rust_range", rendered).expect("the matrix step succeeds");
        let include = matrix["include"].as_sequence().expect("an include list");
        let built: Vec<&str> = include
            .iter()
            .filter_map(|e| e["platform"].as_str())
            .collect();
        let mut wanted = platforms.to_vec();
        wanted.sort();
        assert_eq!(
            built, wanted,
            "one matrix entry per chosen platform, no more"
        );
        snapshot.push_str(&format!("# platforms: {rendered}\n"));
        snapshot.push_str(&serde_norway::to_string(&matrix).expect("YAML"));
        snapshot.push('\n');
    }
    insta::assert_snapshot!("build_matrix", snapshot);
}

#[test]
fn the_matrix_step_refuses_an_unknown_platform() {
    let error = run_matrix_step(
        &workflow("native-datasource.yml"),
        "rust_range",
        r#"["linux-x86_64", "linux-ppc64le"]"#,
    )
    .expect_err("linux-ppc64le is not a platform");
    assert_eq!(
        error,
        "::error::unknown or no platforms ['linux-ppc64le']: use some of linux-x86_64, linux-aarch64, osx-x86_64, osx-aarch64, windows-x86_64"
    );
}

#[test]
fn generated_workflows_lint_clean_for_every_platform_choice_and_sdk() {
    let dir = TempDir::new().expect("temp dir");
    let mut files = Vec::new();
    for (i, platforms) in PLATFORM_CHOICES.iter().enumerate() {
        for (j, sdk) in sdk_forms().iter().enumerate() {
            let path = dir.path().join(format!("ci-{i}-{j}.yml"));
            std::fs::write(&path, render("rust_range", platforms, sdk)).expect("write");
            files.push(path);
        }
    }
    assert_eq!(lint(&files), "");
}

#[test]
fn this_repository_s_workflows_lint_clean() {
    let files = repository_workflows();
    for name in [
        "native-datasource.yml",
        "rust-checks.yml",
        "spark-plugin-jar.yml",
        "release.yml",
        "tests.yml",
    ] {
        assert!(
            files.iter().any(|f| f.ends_with(name)),
            "{name} is among {files:?}"
        );
    }
    assert_eq!(lint(&files), "");
}

#[test]
fn the_generated_workflow_stays_short() {
    for sdk in sdk_forms() {
        let lines = render("rust_range", &ALL_PLATFORMS, &sdk).lines().count();
        assert!(
            lines < 100,
            "sdk={}: the generated ci.yml has {lines} lines: it only calls the reusable workflows",
            sdk.answer
        );
    }
}

/// Each workflow is in one place: `.github/workflows/`, where GitHub calls a reusable workflow of
/// another repository (and follows no link). The template carries only the caller of the
/// reusable workflows, no file of the repository has jobs outside `.github/workflows/`, and a
/// generated project holds its `ci.yml` and the template's Dependabot configuration, nothing
/// else under `.github/`.
#[test]
fn each_workflow_exists_once_in_github_workflows() {
    let root = crate::helpers::repo_root();
    let names = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        names(&root.join("template/.github/workflows")),
        ["ci.yml.liquid"]
    );
    assert!(
        !root.join("ci-templates/workflows").exists(),
        "ci-templates/ holds no workflow: .github/workflows/ is the only copy"
    );
    let listed = std::process::Command::new("git")
        .args(["ls-files", "--cached", "--others", "--exclude-standard"])
        .args(["*.yml", "*.yaml", "*.yml.liquid"])
        .current_dir(&root)
        .output()
        .expect("git runs");
    assert!(listed.status.success(), "git ls-files: {listed:?}");
    let elsewhere: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|f| {
            !f.starts_with(".github/workflows/") && *f != "template/.github/workflows/ci.yml.liquid"
        })
        .filter(|f| {
            let text = std::fs::read_to_string(root.join(f)).unwrap_or_default();
            text.lines().any(|l| l.starts_with("jobs:"))
        })
        .map(str::to_string)
        .collect();
    assert!(
        elsewhere.is_empty(),
        "workflows outside .github/workflows/: {elsewhere:?}"
    );

    let dir = TempDir::new().expect("temp dir");
    let project =
        generate_with_cargo_generate(dir.path(), "rust_range", &ALL_PLATFORMS, &sdk_forms()[2]);
    assert_eq!(
        names(&project.join(".github")),
        ["dependabot.yml", "workflows"]
    );
    assert_eq!(names(&project.join(".github/workflows")), ["ci.yml"]);
    assert_eq!(
        std::fs::read_to_string(project.join(".github/dependabot.yml")).expect("read"),
        std::fs::read_to_string(root.join("template/.github/dependabot.yml")).expect("read"),
        "the generated project has the template's Dependabot configuration, as it is"
    );
}

/// The generated workflow calls `rust-checks.yml` and `native-datasource.yml` of the canonical
/// repository at the pinned commit, with the template's release as the comment that Dependabot
/// reads, whatever the `sdk`, and has no job of its own.
#[test]
fn the_generated_workflow_calls_the_canonical_repository_at_the_pinned_commit_whatever_its_sdk() {
    for sdk in sdk_forms() {
        let source = render("rust_range", &ALL_PLATFORMS, &sdk);
        let workflow = parse(&source);
        let jobs = workflow["jobs"].as_mapping().expect("jobs");
        let calls: Vec<(String, String)> = jobs
            .iter()
            .map(|(name, job)| {
                assert!(
                    job.get("steps").is_none() && job.get("runs-on").is_none(),
                    "sdk={}: job {name:?} runs no steps of its own",
                    sdk.answer
                );
                (
                    name.as_str().expect("a job name").to_string(),
                    job["uses"].as_str().expect("a call").to_string(),
                )
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("checks".to_string(), pinned_call("rust-checks.yml").0),
                ("native".to_string(), pinned_call("native-datasource.yml").0),
            ],
            "sdk={}",
            sdk.answer
        );
        assert_eq!(
            uses_lines(&source),
            ["rust-checks.yml", "native-datasource.yml"].map(pinned_call),
            "sdk={}: each call ends with the comment of its release",
            sdk.answer
        );
    }
}

/// What a called workflow's jobs ask, at most: `write` above `read` above `none`.
fn permission_rank(level: &str) -> u8 {
    match level {
        "none" => 0,
        "read" => 1,
        "write" => 2,
        other => panic!("unknown permission level {other}"),
    }
}

/// A called workflow's jobs get at most the permissions of the caller's job: the caller's job
/// grants exactly the highest that any of them asks, scope by scope.
#[test]
fn each_call_grants_the_permissions_the_called_jobs_need_and_no_more() {
    let caller = parse(&render_from_git("rust_range", &ALL_PLATFORMS));
    for (job, file) in [
        ("checks", "rust-checks.yml"),
        ("native", "native-datasource.yml"),
    ] {
        let called = workflow(file);
        let mut needed: BTreeMap<String, String> = BTreeMap::new();
        for (_, body) in called["jobs"].as_mapping().expect("jobs") {
            for (scope, level) in body["permissions"].as_mapping().expect("permissions") {
                let scope = scope.as_str().expect("a scope").to_string();
                let level = level.as_str().expect("a level").to_string();
                let higher = needed
                    .get(&scope)
                    .is_none_or(|had| permission_rank(had) < permission_rank(&level));
                if higher {
                    needed.insert(scope, level);
                }
            }
        }
        let granted: BTreeMap<String, String> = caller["jobs"][job]["permissions"]
            .as_mapping()
            .expect("the caller's job has permissions")
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().expect("a scope").to_string(),
                    v.as_str().expect("a level").to_string(),
                )
            })
            .collect();
        assert_eq!(granted, needed, "job {job} calling {file}");
    }
}

/// The generated workflow gives each called workflow only inputs it declares, of their type,
/// every required one, and the constants it repeats are the inputs' defaults: a C project
/// calling the reusable workflow builds like a generated project. CI installs `cargo-sparkds`
/// from where the `sdk` says, of an exact version (crates.io's index holds the checksum of the
/// package, and the Cargo.lock inside it those of its dependencies), or the template's release
/// for a checkout, which no runner has.
#[test]
fn the_generated_workflow_gives_inputs_the_called_workflows_declare() {
    for sdk in sdk_forms() {
        let caller = parse(&render(
            "rust_range",
            &["linux-x86_64", "osx-aarch64"],
            &sdk,
        ));
        assert!(
            caller["jobs"]["checks"].get("with").is_none(),
            "rust-checks.yml has no inputs"
        );
        assert!(workflow("rust-checks.yml")["on"]["workflow_call"]
            .get("inputs")
            .is_none());

        let declared = workflow("native-datasource.yml")["on"]["workflow_call"]["inputs"]
            .as_mapping()
            .expect("inputs")
            .clone();
        let given = caller["jobs"]["native"]["with"]
            .as_mapping()
            .expect("the call gives inputs")
            .clone();
        for (name, input) in &declared {
            if input["required"].as_bool() == Some(true) {
                assert!(
                    given.contains_key(name),
                    "the required input {name:?} is given"
                );
            }
        }
        for (name, value) in &given {
            let name = name.as_str().expect("an input name");
            let input = declared
                .get(name)
                .unwrap_or_else(|| panic!("native-datasource.yml declares no input {name:?}"));
            match input["type"].as_str() {
                Some("boolean") => assert!(value.is_bool(), "{name} is a boolean: {value:?}"),
                Some("string") => assert!(value.is_string(), "{name} is a string: {value:?}"),
                other => panic!("{name}: an input of type {other:?}"),
            }
            let value = value
                .as_str()
                .map(str::to_string)
                .or_else(|| value.as_bool().map(|b| b.to_string()))
                .expect("a value");
            let wanted = match name {
                "data-source" => "rust_range".to_string(),
                "platforms" => r#"["linux-x86_64", "osx-aarch64"]"#.to_string(),
                "sparkds-install" => sdk.sparkds_install.clone(),
                // A boolean input's default is the text the expression gives: `false`.
                _ => {
                    let default = &input["default"];
                    default
                        .as_str()
                        .map(str::to_string)
                        .or_else(|| default.as_bool().map(|b| b.to_string()))
                        .unwrap_or_else(|| panic!("input {name} has a default"))
                }
            };
            assert_eq!(value, wanted, "sdk={}: input {name}", sdk.answer);
        }
    }
}

/// The hook calls the workflows of the canonical repository, the one the root Cargo.toml records.
#[test]
fn the_hook_calls_the_repository_that_cargo_toml_records() {
    assert_eq!(
        pinned("REPOSITORY"),
        canonical_repository(),
        "{PIN_FILE}: REPOSITORY must be the repository of the root Cargo.toml"
    );
}

#[test]
fn liquid_in_the_template_workflow_stays_in_the_values_block() {
    let source = std::fs::read_to_string(template_workflow()).expect("read");
    let (values, body) = source
        .split_once("{% raw %}\n")
        .expect("the body starts with {% raw %}");
    let body = body
        .strip_suffix("{% endraw %}\n")
        .expect("the body ends with {% endraw %}");
    assert!(
        !body.contains("{% raw") && !body.contains("endraw"),
        "one raw block holds the whole body"
    );
    let (header, block) = values
        .split_once("\n# ---- Values of this project")
        .expect("a values block");
    for line in header.lines() {
        assert!(
            line.starts_with('#') || line.starts_with("{%-"),
            "only comments come before the values block, found: {line}"
        );
    }
    let block = block
        .strip_suffix("# ---- End of the values: nothing below is rendered ------------------------------------------\n")
        .expect("the values block ends with its comment");
    for line in block.lines().skip(1) {
        assert!(
            line.starts_with("jobs:") || line.starts_with("  "),
            "only the calls and their values are in the values block, found: {line}"
        );
    }
}

#[test]
fn every_action_is_a_recorded_release_pinned_by_commit_and_every_job_has_permissions() {
    let lock = actions_lock();
    for (name, source) in shipped_workflows() {
        let workflow = parse(&source);
        // A job that calls a reusable workflow names it by the commit the template pins, or
        // as a workflow of this repository (`./.github/workflows/...`): other tests check those.
        let calls: Vec<&str> = workflow["jobs"]
            .as_mapping()
            .expect("jobs")
            .values()
            .filter_map(|job| job["uses"].as_str())
            .collect();
        for (reference, comment) in uses_lines(&source) {
            if calls.contains(&reference.as_str()) {
                continue;
            }
            assert!(
                is_pinned_to_a_commit(&reference),
                "{name}: `{reference}` must be pinned to a full commit SHA"
            );
            let pinned = lock.get(&reference).unwrap_or_else(|| {
                panic!(
                    "{name}: `{reference}` is not in ci-templates/actions.lock: record its \
                     release tag and runs.using there"
                )
            });
            assert_eq!(
                comment, pinned.tag,
                "{name}: `{reference}` needs the comment `# {}`, its release tag",
                pinned.tag
            );
        }
        assert_eq!(
            workflow["permissions"],
            parse("{}"),
            "{name}: top-level permissions must be empty"
        );
        for (job, body) in workflow["jobs"].as_mapping().expect("jobs") {
            assert!(
                body.get("permissions").is_some(),
                "{name}: job {job:?} needs its own permissions"
            );
        }
    }
}

#[test]
fn every_recorded_action_runs_on_node_24_or_is_composite_of_such() {
    let lock = actions_lock();
    for action in lock.values() {
        if let Err(problem) = check_pinned_action(action, &lock) {
            panic!("ci-templates/actions.lock: {problem}");
        }
    }
}

#[test]
fn an_action_on_node_20_is_refused() {
    let lock = actions_lock();
    let old = PinnedAction {
        reference: "actions/upload-artifact@330a01c490aca151604b8cf639adc76d48f6c5d4".to_string(),
        tag: "v5.0.0".to_string(),
        runs_using: "node20".to_string(),
        uses: Vec::new(),
    };
    assert_eq!(
        check_pinned_action(&old, &lock),
        Err(
            "actions/upload-artifact@330a01c490aca151604b8cf639adc76d48f6c5d4 (v5.0.0) runs on \
             node20: pin a release whose action.yml has `runs.using: node24` (GitHub is retiring \
             Node 20)"
                .to_string()
        )
    );
    let composite = PinnedAction {
        reference: "actions/attest-build-provenance@e8998f949152b193b063cb0ec769d69d929409be"
            .to_string(),
        tag: "v2.4.0".to_string(),
        runs_using: "composite".to_string(),
        uses: vec!["actions/attest@ce27ba3b4a9a139d9a20a4a07d69fabb52f1e5bc".to_string()],
    };
    assert_eq!(
        check_pinned_action(&composite, &lock),
        Err(
            "actions/attest-build-provenance@e8998f949152b193b063cb0ec769d69d929409be (v2.4.0) \
             uses actions/attest@ce27ba3b4a9a139d9a20a4a07d69fabb52f1e5bc, which is not listed"
                .to_string()
        )
    );
}

/// Whether a pinned action of `actions.lock` may run: pinned to a commit of a release, on Node
/// 24, and if composite, using only listed actions.
fn check_pinned_action(
    action: &PinnedAction,
    lock: &BTreeMap<String, PinnedAction>,
) -> Result<(), String> {
    let PinnedAction {
        reference,
        tag,
        runs_using,
        uses,
    } = action;
    if !is_pinned_to_a_commit(reference) {
        return Err(format!("{reference} is not `owner/name@<commit SHA>`"));
    }
    if !tag.starts_with('v') {
        return Err(format!("{reference}: `{tag}` is not a release tag"));
    }
    if !ALLOWED_RUNTIMES.contains(&runs_using.as_str()) {
        return Err(format!(
            "{reference} ({tag}) runs on {runs_using}: pin a release whose action.yml has \
             `runs.using: node24` (GitHub is retiring Node 20)"
        ));
    }
    if runs_using != "composite" && !uses.is_empty() {
        return Err(format!(
            "{reference} ({tag}) is not composite, yet lists uses="
        ));
    }
    match uses.iter().find(|nested| !lock.contains_key(*nested)) {
        Some(nested) => Err(format!(
            "{reference} ({tag}) uses {nested}, which is not listed"
        )),
        None => Ok(()),
    }
}

#[test]
fn every_cargo_build_install_test_and_deny_is_locked() {
    const COMMANDS: [&str; 6] = [
        "cargo build",
        "cargo zigbuild",
        "cargo install",
        "cargo test",
        "cargo clippy",
        "cargo deny",
    ];
    for (name, source) in shipped_workflows() {
        for line in source.lines().filter(|l| !l.trim_start().starts_with('#')) {
            for command in COMMANDS {
                for (at, _) in line.match_indices(command) {
                    // A command starts a line of a script, or follows `run:`: elsewhere it is
                    // prose (a name, a description).
                    let before = line[..at].trim();
                    if !(before.is_empty() || before.ends_with("run:") || before.ends_with("&&")) {
                        continue;
                    }
                    let rest = &line[at..];
                    let end = rest.find(['&', ';', '|']).unwrap_or(rest.len());
                    assert!(
                        rest[..end].contains(" --locked"),
                        "{name}: `{}` must pass --locked: a build from a stale Cargo.lock \
                         must fail, not update it",
                        rest[..end].trim()
                    );
                }
            }
        }
    }
}

/// Runs the `run:` script of the step `name` of `job` with bash, as the runner does, and returns
/// what it printed; it must succeed.
fn run_step(
    workflow: &Value,
    job: &str,
    name: &str,
    dir: &std::path::Path,
    env: &[(&str, String)],
) -> String {
    let output = step_output(workflow, job, name, dir, env);
    assert!(
        output.status.success(),
        "step {name:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs the `run:` script of the step `name` of `job` with bash, as the runner does.
fn step_output(
    workflow: &Value,
    job: &str,
    name: &str,
    dir: &std::path::Path,
    env: &[(&str, String)],
) -> std::process::Output {
    let step = workflow["jobs"][job]["steps"]
        .as_sequence()
        .expect("steps")
        .iter()
        .find(|s| s["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("job {job} has a step {name:?}"));
    let script = step["run"].as_str().expect("a run step");
    let cwd = match step["working-directory"].as_str() {
        Some(sub) => dir.join(sub),
        None => dir.to_path_buf(),
    };
    std::process::Command::new("bash")
        .args(["-e", "-c", script])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("bash runs")
}

#[test]
fn the_build_and_package_steps_package_and_verify_a_library_built_here() {
    use crate::helpers::{host_library_name, host_platform, sparkds, CLibrary};

    let workflow = workflow("native-datasource.yml");
    let dir = TempDir::new().expect("temp dir");
    let build = dir.path().join("build");
    std::fs::create_dir_all(&build).expect("mkdir");
    CLibrary::new("demo").build(&build);
    // The jobs run the sparkds installed at $RUNNER_TEMP/sparkds/bin.
    let runner_temp = dir.path().join("runner");
    let bin = runner_temp.join("sparkds/bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::fs::copy(
        sparkds().get_program(),
        bin.join(format!("cargo-sparkds{}", std::env::consts::EXE_SUFFIX)),
    )
    .expect("copy sparkds");
    let env = [
        ("RUNNER_TEMP", runner_temp.display().to_string()),
        ("DATA_SOURCE", "demo".to_string()),
        ("VERSION", "0.3.0".to_string()),
        ("GLIBC", "2.28".to_string()),
        ("ALLOW", String::new()),
        ("LIBRARY_PATH", "build/{library}".to_string()),
        ("SPARKDS_PLATFORM", host_platform().to_string()),
        ("SPARKDS_TARGET", "unused".to_string()),
        ("SPARKDS_LIBRARY", host_library_name("demo")),
    ];
    run_step(
        &workflow,
        "build",
        "Stage the library as dist/<platform>/<file>",
        dir.path(),
        &env,
    );
    run_step(&workflow, "package", "Package", dir.path(), &env);
    run_step(&workflow, "package", "Verify", dir.path(), &env);
    run_step(&workflow, "package", "Checksum", dir.path(), &env);
    let checksum = std::fs::read_to_string(dir.path().join("package/demo-0.3.0.sparkpkg.sha256"))
        .expect("the checksum file");
    let package =
        std::fs::read(dir.path().join("package/demo-0.3.0.sparkpkg")).expect("the package");
    assert_eq!(
        checksum,
        format!(
            "{}  demo-0.3.0.sparkpkg\n",
            crate::helpers::sha256_hex(&package)
        )
    );
}

/// A git repository in `dir` with the commits `first` (tagged `v0.1.0`), `second` and a merge.
fn repository_with_a_release(dir: &std::path::Path) {
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=test", "-c", "user.email=test@example.org"])
            .args(["-c", "init.defaultBranch=main", "-c", "tag.gpgSign=false"])
            .args(["-c", "commit.gpgSign=false"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    git(&["init", "--quiet"]);
    git(&["commit", "--quiet", "--allow-empty", "-m", "first"]);
    git(&["tag", "v0.1.0"]);
    git(&["checkout", "--quiet", "-b", "topic"]);
    git(&["commit", "--quiet", "--allow-empty", "-m", "second: a fix"]);
    git(&["checkout", "--quiet", "main"]);
    git(&["merge", "--quiet", "--no-ff", "-m", "merge topic", "topic"]);
    git(&["commit", "--quiet", "--allow-empty", "-m", "third"]);
}

/// The environment of the release job: a pull request's (dry run) or a tag's, with a `gh` on
/// `PATH` that fails, so that a step that would publish is seen.
fn release_env(
    dir: &std::path::Path,
    dry_run: bool,
    ref_name: &str,
) -> Vec<(&'static str, String)> {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        "#!/bin/sh\necho \"gh $*: publishing in a test\" >&2\nexit 3\n",
    )
    .expect("write gh");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let runner_temp = dir.join("runner");
    std::fs::create_dir_all(&runner_temp).expect("mkdir");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![
        ("PATH", path),
        ("DRY_RUN", dry_run.to_string()),
        ("VERSION", "0.2.0".to_string()),
        ("DATA_SOURCE", "demo".to_string()),
        ("GITHUB_REF_NAME", ref_name.to_string()),
        ("GITHUB_REPOSITORY", "owner/demo".to_string()),
        ("GITHUB_ENV", dir.join("github_env").display().to_string()),
        ("RUNNER_TEMP", runner_temp.display().to_string()),
    ]
}

#[test]
fn the_release_dry_run_writes_the_notes_from_the_commits_since_the_last_tag_and_publishes_nothing()
{
    let workflow = workflow("native-datasource.yml");
    assert_eq!(
        workflow["jobs"]["release"]["if"].as_str(),
        Some("startsWith(github.ref, 'refs/tags/v') || github.event_name == 'pull_request'"),
        "the release job runs on tags, and as a dry run on every pull request"
    );
    let dir = TempDir::new().expect("temp dir");
    repository_with_a_release(dir.path());
    std::fs::create_dir_all(dir.path().join("package")).expect("mkdir");
    std::fs::write(dir.path().join("package/demo-0.2.0.sparkpkg"), b"zip").expect("write");
    let mut env = release_env(dir.path(), true, "42/merge");

    run_step(&workflow, "release", "The tag to release", dir.path(), &env);
    let github_env = std::fs::read_to_string(dir.path().join("github_env")).expect("GITHUB_ENV");
    assert_eq!(github_env, "TAG=v0.2.0\n");
    env.push(("TAG", "v0.2.0".to_string()));

    let printed = run_step(&workflow, "release", "Release notes", dir.path(), &env);
    let notes = std::fs::read_to_string(dir.path().join("runner/notes.md")).expect("the notes");
    assert_eq!(printed, notes);
    // `- <subject> (<abbreviated commit>)`, newest first, without the merge.
    let without_commits: Vec<String> = notes
        .lines()
        .map(|line| match line.rsplit_once(" (") {
            Some((subject, _)) => subject.to_string(),
            None => line.to_string(),
        })
        .collect();
    assert_eq!(
        without_commits,
        ["Changes since v0.1.0:", "", "- third", "- second: a fix"]
    );

    let printed = run_step(&workflow, "release", "Release", dir.path(), &env);
    assert!(
        printed.starts_with("Dry run: the tag v0.2.0 would publish these files"),
        "{printed}"
    );
}

#[test]
fn a_release_from_a_tag_other_than_the_version_is_refused() {
    let workflow = workflow("native-datasource.yml");
    let dir = TempDir::new().expect("temp dir");
    repository_with_a_release(dir.path());
    let env = release_env(dir.path(), false, "v0.1.9");
    let output = step_output(&workflow, "release", "The tag to release", dir.path(), &env);
    assert!(!output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "::error::tag v0.1.9 does not match the version 0.2.0: tag the commit v0.2.0, or change the version\n"
    );
}

#[test]
fn provenance_is_attested_on_a_tag_where_github_stores_attestations() {
    for (name, source) in shipped_workflows() {
        let workflow = parse(&source);
        let Some(steps) = workflow["jobs"]["release"]["steps"].as_sequence() else {
            continue;
        };
        let attest = steps
            .iter()
            .find(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("actions/attest-build-provenance@"))
            })
            .unwrap_or_else(|| panic!("{name}: the release job attests provenance"));
        // Public repositories on every plan; private and internal ones only on GitHub
        // Enterprise Cloud, which the project says with ATTEST_PRIVATE. Never in a dry run.
        assert_eq!(
            attest["if"].as_str(),
            Some(
                "env.DRY_RUN != 'true' && (github.event.repository.visibility == 'public' || \
                 env.ATTEST_PRIVATE == 'true')"
            ),
            "{name}"
        );
    }
}

#[test]
fn sparkds_is_built_once_per_source_and_platform_and_then_taken_from_the_cache() {
    let workflow = workflow("native-datasource.yml");
    let step = |job: &str, name: &str| {
        workflow["jobs"][job]["steps"]
            .as_sequence()
            .expect("steps")
            .iter()
            .find(|s| s["name"].as_str().is_some_and(|n| n.starts_with(name)))
            .unwrap_or_else(|| panic!("job {job} has a step {name:?}"))
            .clone()
    };
    for job in ["build", "package"] {
        assert_eq!(
            step(job, "Install sparkds")["if"].as_str(),
            Some("steps.sparkds-cache.outputs.cache-hit != 'true'"),
            "job {job} installs sparkds only when the cache has not got it"
        );
    }
    assert_eq!(
        step("build", "Which sparkds"),
        step("package", "Which sparkds")
    );

    let dir = TempDir::new().expect("temp dir");
    let sdk = dir.path().join("sdk");
    for (file, text) in [
        ("crates/cargo-sparkds/src/main.rs", "fn main() {}\n"),
        ("crates/sparkds/src/lib.rs", "\n"),
        ("crates/spark-datasource/src/lib.rs", "\n"),
        ("crates/cargo-sparkds/target/debug/junk", "x"),
    ] {
        let path = sdk.join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let key = |install: &str, target: &str| {
        let output = dir.path().join("output");
        let env = [
            ("SPARKDS_INSTALL", install.to_string()),
            ("SPARKDS_TARGET", target.to_string()),
            ("RUNNER_OS", "Linux".to_string()),
            ("RUNNER_ARCH", "X64".to_string()),
            ("GITHUB_OUTPUT", output.display().to_string()),
        ];
        let _ = std::fs::remove_file(&output);
        run_step(&workflow, "build", "Which sparkds", dir.path(), &env);
        let written = std::fs::read_to_string(&output).expect("the step writes its key");
        written
            .strip_prefix("key=")
            .expect("key=...")
            .trim()
            .to_string()
    };
    let x86 = "x86_64-unknown-linux-gnu";
    let released = key("cargo-sparkds@0.1.0", x86);
    assert!(released.starts_with("sparkds-Linux-X64-x86_64-unknown-linux-gnu-"));
    assert_eq!(
        released,
        key("cargo-sparkds@0.1.0", x86),
        "the key is stable"
    );
    assert_ne!(released, key("cargo-sparkds@0.1.1", x86));
    assert_ne!(released, key("cargo-sparkds@0.1.0", "x86_64-apple-darwin"));

    let path = format!("--path {}/crates/cargo-sparkds", sdk.display());
    let checkout = key(&path, x86);
    std::fs::write(sdk.join("crates/cargo-sparkds/target/debug/junk"), "y").expect("write");
    assert_eq!(checkout, key(&path, x86), "build output is not the source");
    std::fs::write(
        sdk.join("crates/spark-datasource/src/lib.rs"),
        "// changed\n",
    )
    .expect("write");
    assert_ne!(
        checkout,
        key(&path, x86),
        "a change of the SDK beside the command is a new command"
    );
    let before = key(&path, x86);
    std::fs::write(sdk.join("crates/sparkds/src/lib.rs"), "// changed\n").expect("write");
    assert_ne!(
        before,
        key(&path, x86),
        "a change of the host library the command is built on is a new command"
    );
}

#[test]
fn cargo_registry_and_target_are_cached_by_cargo_lock() {
    for (name, source) in shipped_workflows() {
        let workflow = parse(&source);
        for job in ["checks", "build"] {
            let Some(steps) = workflow["jobs"][job]["steps"].as_sequence() else {
                continue;
            };
            let cache = steps
                .iter()
                .find(|s| {
                    s["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with("Cargo's registry"))
                })
                .unwrap_or_else(|| panic!("{name}: job {job} caches cargo's registry and target"));
            let paths = cache["with"]["path"].as_str().expect("paths");
            for path in [
                "~/.cargo/registry/index/",
                "~/.cargo/registry/cache/",
                "target/",
            ] {
                assert!(
                    paths.lines().any(|l| l == path),
                    "{name}: {job} caches {path}"
                );
            }
            let key = cache["with"]["key"].as_str().expect("a key");
            assert!(
                key.ends_with("${{ hashFiles('**/Cargo.lock') }}"),
                "{name}: {key}"
            );
        }
    }
}

#[test]
fn dependabot_updates_cargo_and_actions_here_and_in_generated_projects() {
    for file in ["template/.github/dependabot.yml", ".github/dependabot.yml"] {
        let text = std::fs::read_to_string(crate::helpers::repo_root().join(file))
            .unwrap_or_else(|e| panic!("read {file}: {e}"));
        let config = parse(&text);
        assert_eq!(config["version"].as_u64(), Some(2), "{file}");
        let ecosystems: Vec<&str> = config["updates"]
            .as_sequence()
            .expect("updates")
            .iter()
            .filter_map(|u| u["package-ecosystem"].as_str())
            .collect();
        assert_eq!(ecosystems, ["cargo", "github-actions"], "{file}");
    }
}
