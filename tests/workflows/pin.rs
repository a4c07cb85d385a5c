//! The commit at which generated projects call the reusable workflows: `COMMIT` of
//! `template/hooks/workflows.rhai` must be a commit of this repository's history whose
//! `.github/workflows/` is the one checked out here, or a generated project would run other
//! workflows than those this commit tests. A commit cannot hold its own hash, so a change of
//! the workflows is pinned in a second commit; this test says which hash to write.

use std::path::Path;
use std::process::Command;

use crate::helpers::workflows::{pinned, PIN_FILE};

/// `git <args>` in the repository: its standard output, trimmed, or what it printed on failure.
fn git(root: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .map_err(|e| format!("git does not run: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
    }
}

/// Why `pin` is not a commit that generated projects may call, with the fix, or `None`.
fn pin_problem(root: &Path, pin: &str) -> Option<String> {
    let workflows = ".github/workflows";
    let changed = git(root, &["status", "--porcelain", "--", workflows]).unwrap_or_default();
    if !changed.is_empty() {
        return Some(format!(
            "{workflows}/ has changes that are not committed:\n{changed}\nCommit them first \
             (git commit -m \"...\" -- {workflows}), then run this test again: it prints the \
             commit to write in {PIN_FILE}"
        ));
    }
    // The newest commit that changed the workflows: the one to pin, when its workflows are
    // HEAD's (a merge can bring a change without being the commit that made it).
    let newest = git(root, &["log", "-1", "--format=%H", "HEAD", "--", workflows]).ok();
    let head_tree = git(root, &["rev-parse", &format!("HEAD:{workflows}")]).ok();
    let fix = match newest.filter(|commit| {
        git(root, &["rev-parse", &format!("{commit}:{workflows}")]).ok() == head_tree
    }) {
        Some(commit) => format!(
            "pin {commit}, the newest commit that changed {workflows}/, in a commit of its own:\n  \
             sed -i 's/{pin}/{commit}/' {PIN_FILE} && git commit -m \"Template: generated \
             projects call the reusable workflows at {short}\" -- {PIN_FILE}",
            short = &commit[..12.min(commit.len())]
        ),
        None => format!(
            "pin a commit of this history whose {workflows}/ is HEAD's (git log -- {workflows})"
        ),
    };
    let is_hex = pin.len() == 40 && pin.chars().all(|c| c.is_ascii_hexdigit());
    if !is_hex {
        return Some(format!(
            "{PIN_FILE} pins `{pin}`, which is not a full commit hash: {fix}"
        ));
    }
    if git(root, &["cat-file", "-e", &format!("{pin}^{{commit}}")]).is_err() {
        let shallow = git(root, &["rev-parse", "--is-shallow-repository"]).unwrap_or_default();
        if shallow == "true" {
            return Some(format!(
                "{PIN_FILE} pins {pin}, which this shallow clone does not have: fetch the whole \
                 history (git fetch --unshallow; actions/checkout with fetch-depth: 0)"
            ));
        }
        return Some(format!(
            "{PIN_FILE} pins {pin}, which is not a commit of this repository: {fix}"
        ));
    }
    if git(root, &["merge-base", "--is-ancestor", pin, "HEAD"]).is_err() {
        return Some(format!(
            "{PIN_FILE} pins {pin}, which is not in the history of HEAD (a squashed or rebased \
             branch loses it, and GitHub may not keep it): {fix}"
        ));
    }
    let pinned_tree = git(root, &["rev-parse", &format!("{pin}:{workflows}")]).ok();
    if pinned_tree != head_tree {
        let differ =
            git(root, &["diff", "--stat", pin, "HEAD", "--", workflows]).unwrap_or_default();
        return Some(format!(
            "{PIN_FILE} pins {pin}, whose {workflows}/ is not HEAD's, so generated projects \
             would not run the workflows of this commit:\n{differ}\nFix: {fix}"
        ));
    }
    None
}

#[test]
fn the_pinned_commit_has_the_workflows_of_this_commit() {
    let root = crate::helpers::repo_root();
    if let Some(problem) = pin_problem(&root, &pinned("COMMIT")) {
        panic!("{problem}");
    }
}

/// The check refuses a commit whose workflows differ, and one that is not in the history, and
/// names the commit to pin: run on a repository made for the test.
#[test]
fn a_pin_with_other_workflows_is_refused_naming_the_commit_to_pin() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let root = dir.path();
    let run = |args: &[&str]| {
        let output = Command::new("git")
            .args(["-c", "user.name=test", "-c", "user.email=test@example.org"])
            .args([
                "-c",
                "init.defaultBranch=main",
                "-c",
                "commit.gpgSign=false",
            ])
            .args(args)
            .current_dir(root)
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    };
    let write = |file: &str, text: &str| {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    run(&["init", "--quiet"]);
    write(".github/workflows/ci.yml", "one\n");
    run(&["add", "."]);
    run(&["commit", "--quiet", "-m", "first"]);
    let first = run(&["rev-parse", "HEAD"]);
    write(".github/workflows/ci.yml", "two\n");
    run(&["commit", "--quiet", "-am", "the workflows change"]);
    let change = run(&["rev-parse", "HEAD"]);
    write("README", "text\n");
    run(&["add", "README"]);
    run(&["commit", "--quiet", "-m", "something else"]);
    let after = run(&["rev-parse", "HEAD"]);

    assert_eq!(pin_problem(root, &change), None);
    assert_eq!(
        pin_problem(root, &after),
        None,
        "a later commit with the same workflows"
    );
    let problem = pin_problem(root, &first).expect("the first commit has other workflows");
    assert!(
        problem.contains(&format!(
            "pins {first}, whose .github/workflows/ is not HEAD's"
        )) && problem.contains(&format!("sed -i 's/{first}/{change}/' {PIN_FILE}")),
        "{problem}"
    );
    let unknown = "0123456789abcdef0123456789abcdef01234567";
    let problem = pin_problem(root, unknown).expect("not a commit");
    assert!(
        problem.contains("which is not a commit of this repository"),
        "{problem}"
    );
    run(&["checkout", "--quiet", "-b", "side", &first]);
    write("other", "x\n");
    run(&["add", "other"]);
    run(&["commit", "--quiet", "-m", "a side branch"]);
    let side = run(&["rev-parse", "HEAD"]);
    run(&["checkout", "--quiet", "main"]);
    let problem = pin_problem(root, &side).expect("not in the history");
    assert!(
        problem.contains("which is not in the history of HEAD"),
        "{problem}"
    );
    write(".github/workflows/ci.yml", "three\n");
    let problem = pin_problem(root, &change).expect("uncommitted workflows");
    assert!(problem.contains("Commit them first"), "{problem}");
}
