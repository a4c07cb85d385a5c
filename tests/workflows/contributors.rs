//! The repository's own CI for contributors (`.github/workflows/tests.yml`): the README's test
//! command on every pull request and every push to main, as root, with the history (the pin
//! test reads it) and caches of what a run builds. actionlint lints it with the others.

use crate::helpers::workflows::{parse, workflow};

#[test]
fn the_contributors_workflow_runs_the_readme_s_test_command_on_pull_requests_and_main() {
    let tests = workflow("tests.yml");
    assert!(
        tests["on"].get("pull_request").is_some(),
        "on pull requests"
    );
    assert_eq!(
        tests["on"]["push"]["branches"],
        parse("[main]"),
        "on every push to main"
    );
    assert!(
        tests["on"]["push"].get("tags").is_none(),
        "not on tags: the release workflow runs there"
    );
    let jobs = tests["jobs"].as_mapping().expect("jobs");
    assert_eq!(jobs.len(), 1, "one job, the suite");
    let job = jobs.values().next().expect("a job");
    assert_eq!(job["permissions"], parse("contents: read"));
    let steps = job["steps"].as_sequence().expect("steps");

    let checkout = &steps[0];
    assert!(checkout["uses"]
        .as_str()
        .is_some_and(|u| u.starts_with("actions/checkout@")));
    assert_eq!(
        checkout["with"]["fetch-depth"].as_u64(),
        Some(0),
        "the whole history: the test of the template's pin reads it"
    );
    assert_eq!(
        checkout["with"]["persist-credentials"].as_bool(),
        Some(false)
    );

    // The README's command: `.ci/install && cargo suite` is what .ci/run runs.
    let readme = std::fs::read_to_string(crate::helpers::repo_root().join("README.md"))
        .expect("read README.md");
    assert!(
        readme.contains("\n.ci/install && cargo suite\n"),
        "the README's test command"
    );
    let ci_run =
        std::fs::read_to_string(crate::helpers::repo_root().join(".ci/run")).expect("read .ci/run");
    assert!(
        ci_run.contains("\n.ci/install\n") && ci_run.contains("\ncargo suite || status=$?\n"),
        ".ci/run runs .ci/install, then cargo suite"
    );
    let run = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|script| script.contains(".ci/run"))
        .expect("a step runs .ci/run");
    // As root (the hosts group makes namespaces), with the runner user's HOME and PATH, where
    // the toolchain and the restored caches are.
    assert!(
        run.lines()
            .any(|line| line.trim()
                == "sudo --preserve-env env \"PATH=$PATH\" \"HOME=$HOME\" .ci/run"),
        "{run}"
    );

    let cached: Vec<String> = steps
        .iter()
        .filter(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .flat_map(|s| {
            s["with"]["path"]
                .as_str()
                .expect("paths")
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    for path in [
        "~/.cargo/registry/index/",
        "~/.cargo/registry/cache/",
        "~/.cargo/bin/cargo-generate",
        "~/.cargo/bin/cargo-deny",
        "~/.cargo/bin/mdbook",
        "target/",
        "~/.cache/sparkds/spark-lines",
    ] {
        assert!(
            cached.iter().any(|p| p == path),
            "caches {path}: {cached:?}"
        );
    }
    // The caches are saved after the job: what root wrote goes back to the runner user first.
    let last = steps.last().expect("a last step");
    assert_eq!(last["if"].as_str(), Some("always()"));
    assert!(last["run"]
        .as_str()
        .is_some_and(|s| s.contains("sudo chown -R")));
}
