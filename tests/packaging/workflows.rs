//! The generated GitHub Actions workflow and the reusable ones of `ci-templates/`: the matrix has
//! exactly the chosen platforms, everything lints clean with actionlint, the generated jobs are
//! the ci-templates' jobs (no drift), and every action is pinned to a commit.

use std::collections::BTreeMap;

use serde_norway::Value;
use tempfile::TempDir;

use crate::helpers::workflows::{
    cargo_generate_available, ci_template_workflows, lint, parse, render_with_cargo_generate,
    render_with_liquid, run_matrix_step, template_synced_from_ci_templates, template_workflow,
    PLATFORM_CHOICES,
};

#[test]
fn the_build_matrix_has_exactly_the_chosen_platforms() {
    let mut snapshot = String::new();
    for platforms in PLATFORM_CHOICES {
        let workflow = parse(&render_with_liquid("rust_range", platforms));
        let rendered = workflow["env"]["PLATFORMS"]
            .as_str()
            .expect("env.PLATFORMS");
        let chosen: Vec<String> = serde_json::from_str(rendered).expect("PLATFORMS is JSON");
        assert_eq!(chosen, platforms.to_vec());
        let matrix =
            run_matrix_step(&workflow, "rust_range", rendered).expect("the matrix step succeeds");
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
    let workflow = parse(&render_with_liquid("rust_range", &["linux-x86_64"]));
    let error = run_matrix_step(
        &workflow,
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
fn generated_workflows_lint_clean_for_every_platform_choice() {
    let dir = TempDir::new().expect("temp dir");
    let mut files = Vec::new();
    for (i, platforms) in PLATFORM_CHOICES.iter().enumerate() {
        let path = dir.path().join(format!("ci-{i}.yml"));
        std::fs::write(&path, render_with_liquid("rust_range", platforms)).expect("write");
        files.push(path);
    }
    assert_eq!(lint(&files), "");
}

#[test]
fn ci_templates_lint_clean() {
    assert_eq!(lint(&ci_template_workflows()), "");
}

#[test]
fn cargo_generate_renders_the_workflow_as_the_tests_do() {
    if !cargo_generate_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "cargo-generate is not installed: CI must install it (cargo install cargo-generate)"
        );
        eprintln!(
            "cargo-generate is not installed: the workflow is only rendered with the liquid crate"
        );
        return;
    }
    for platforms in [PLATFORM_CHOICES[0], PLATFORM_CHOICES[2]] {
        let dir = TempDir::new().expect("temp dir");
        let generated = render_with_cargo_generate(dir.path(), "rust_range", platforms);
        // The first line carries the template version, which the template's hook sets.
        let body = |text: &str| text.split_once('\n').map(|(_, rest)| rest.to_string());
        assert_eq!(
            body(&generated),
            body(&render_with_liquid("rust_range", platforms))
        );
        let path = dir.path().join("ci.yml");
        std::fs::write(&path, &generated).expect("write");
        assert_eq!(lint(&[path]), "");
    }
}

/// The top-level `env` of the reusable workflow maps each variable the jobs read to an input:
/// `DATA_SOURCE: ${{ inputs.data-source }}`.
fn env_inputs(reusable: &Value) -> BTreeMap<String, String> {
    reusable["env"]
        .as_mapping()
        .expect("the reusable workflow has env")
        .iter()
        .map(|(k, v)| {
            let key = k.as_str().expect("a name").to_string();
            let input = v
                .as_str()
                .and_then(|v| v.strip_prefix("${{ inputs."))
                .and_then(|v| v.strip_suffix(" }}"))
                .unwrap_or_else(|| {
                    panic!("env.{key} of the reusable workflow must be `${{{{ inputs.<name> }}}}`")
                });
            (key, input.to_string())
        })
        .collect()
}

#[test]
fn the_generated_jobs_are_the_ci_templates_jobs() {
    let generated = parse(&render_with_liquid(
        "rust_range",
        &["linux-x86_64", "osx-aarch64"],
    ));
    let checks = parse(&std::fs::read_to_string(ci_template_workflows()[1].clone()).expect("read"));
    let native = parse(&std::fs::read_to_string(ci_template_workflows()[0].clone()).expect("read"));
    assert!(ci_template_workflows()[0].ends_with("native-datasource.yml"));
    assert!(ci_template_workflows()[1].ends_with("rust-checks.yml"));

    let mut expected = checks["jobs"].as_mapping().expect("jobs").clone();
    for (name, job) in native["jobs"].as_mapping().expect("jobs") {
        assert!(
            expected.insert(name.clone(), job.clone()).is_none(),
            "job {name:?} is in both ci-templates"
        );
    }
    let jobs = generated["jobs"].as_mapping().expect("jobs");
    let names = |m: &serde_norway::Mapping| {
        m.keys()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(jobs),
        names(&expected),
        "the generated workflow has the ci-templates' jobs, in order"
    );
    for (name, job) in &expected {
        assert_eq!(
            &jobs[name], job,
            "job {name:?} differs from ci-templates/: change it there and re-render"
        );
    }
    assert_eq!(generated["permissions"], native["permissions"]);

    // The values block sets every variable the jobs read, and the constants are the inputs'
    // defaults: a C project calling the reusable workflow builds like a generated project.
    let inputs = &native["on"]["workflow_call"]["inputs"];
    let values = generated["env"].as_mapping().expect("env");
    let mapping = env_inputs(&native);
    let mut variables = names(values);
    variables.sort();
    assert_eq!(variables, mapping.keys().cloned().collect::<Vec<_>>());
    for (variable, input) in &mapping {
        let value = values[variable.as_str()]
            .as_str()
            .unwrap_or_else(|| panic!("env.{variable} is a string"));
        match variable.as_str() {
            "DATA_SOURCE" => assert_eq!(value, "rust_range"),
            "PLATFORMS" => assert_eq!(value, r#"["linux-x86_64", "osx-aarch64"]"#),
            // Where the tool comes from is the project's answer `sdk` (here a git tag).
            "SPARKDS_INSTALL" => assert_eq!(
                value,
                "--git https://example.org/spark-datasource-template.git --tag v0.1.0 sparkds"
            ),
            _ => assert_eq!(
                Some(value),
                inputs[input.as_str()]["default"].as_str(),
                "env.{variable} must be the default of input `{input}`"
            ),
        }
    }
}

#[test]
fn the_template_workflow_is_the_ci_templates_jobs_text_for_text() {
    // `SPARKDS_SYNC_WORKFLOWS=1 cargo test -p template-tests --test packaging` copies the jobs
    // of ci-templates/ into the template after a change there.
    let synced = template_synced_from_ci_templates();
    if std::env::var_os("SPARKDS_SYNC_WORKFLOWS").is_some() {
        std::fs::write(template_workflow(), &synced).expect("write the template workflow");
    }
    let source = std::fs::read_to_string(template_workflow()).expect("read");
    assert!(
        source == synced,
        "the jobs of template/.github/workflows/ci.yml.liquid differ from ci-templates/workflows/: \
         change ci-templates/ and run with SPARKDS_SYNC_WORKFLOWS=1"
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
    for line in values.lines() {
        let is_value = line.starts_with("env:") || line.starts_with("  ");
        assert!(
            line.starts_with('#') || is_value,
            "only comments and the env block may come before {{% raw %}}, found: {line}"
        );
    }
}

#[test]
fn every_action_is_pinned_to_a_commit_and_every_job_has_permissions() {
    let mut sources: Vec<(String, String)> = ci_template_workflows()
        .iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(p).expect("read"),
            )
        })
        .collect();
    sources.push((
        "template ci.yml".to_string(),
        render_with_liquid("rust_range", &["linux-x86_64"]),
    ));
    for (name, source) in sources {
        for line in source.lines() {
            let Some(action) = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses: ")
            else {
                continue;
            };
            let (reference, comment) = action.split_once(" # ").unwrap_or((action, ""));
            let sha = reference.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
            assert!(
                sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                "{name}: `{reference}` must be pinned to a full commit SHA"
            );
            assert!(
                comment.starts_with('v'),
                "{name}: `{reference}` needs a `# vX.Y.Z` comment"
            );
        }
        let workflow = parse(&source);
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

/// Runs the `run:` script of the step `name` of `job` with bash, as the runner does.
fn run_step(
    workflow: &Value,
    job: &str,
    name: &str,
    dir: &std::path::Path,
    env: &[(&str, String)],
) {
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
    let output = std::process::Command::new("bash")
        .args(["-e", "-c", script])
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "step {name:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_build_and_package_steps_package_and_verify_a_library_built_here() {
    use crate::helpers::{host_library_name, host_platform, sparkds, CLibrary};

    let workflow = parse(&std::fs::read_to_string(&ci_template_workflows()[0]).expect("read"));
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
