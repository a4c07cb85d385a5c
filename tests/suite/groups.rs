//! The groups of the suite: every test binary of the workspace, as `cargo test --no-run` builds
//! them, and the doc tests, longest first by the last run's times (`times`).
//!
//! The same compilation builds the `cargo-sparkds` binary and the libraries (cdylib) of the JNI
//! crate and of the examples. The groups get them instead of building them again
//! (`CARGO_BIN_EXE_cargo-sparkds`, as cargo names a binary for its package's tests, and
//! `CARGO_CDYLIB_FILE_<PACKAGE>`, as its artifact dependencies name a library): built alone, with
//! `cargo build -p`, each would resolve its dependencies' features apart from the workspace's
//! and rebuild all of arrow once more, which on two cores cost minutes of the run.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// A group: one process, run in its package's directory as `cargo test` runs it.
pub struct Group {
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub directory: PathBuf,
    pub env: Vec<(String, String)>,
}

/// Builds every test binary of the workspace (the compiler's messages go to the terminal) and
/// returns the groups in the order they should start.
pub fn build_all() -> Result<Vec<Group>, String> {
    let mut built = Vec::new();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut child = Command::new(&cargo)
        .args(["test", "--workspace", "--locked", "--no-run"])
        .args(["--message-format", "json-render-diagnostics"])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{cargo} test --no-run`: {e}"))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let mut groups = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| format!("reading cargo's messages: {e}"))?;
        if let Some(group) = test_binary(&line) {
            groups.push(group);
        } else if let Some(artifact) = shared_artifact(&line) {
            built.push(artifact);
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for cargo: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`cargo test --workspace --locked --no-run` failed ({status})"
        ));
    }
    groups.push(Group {
        name: "doc-tests".to_string(),
        program: PathBuf::from(&cargo),
        args: ["test", "--workspace", "--locked", "--doc"]
            .map(String::from)
            .to_vec(),
        directory: std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?,
        env: Vec::new(),
    });
    // The longest first, by the last run's times (`times`).
    let times = crate::times::load();
    groups.sort_by_key(|g| crate::times::order(&times, &g.name));
    let mut shared = keep_apart(&built)?;
    shared.push(shared_cache());
    for group in &mut groups {
        group.env.extend(shared.iter().cloned());
    }
    Ok(groups)
}

/// The group of a `compiler-artifact` message of a test binary; `None` for any other message.
fn test_binary(line: &str) -> Option<Group> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
        return None;
    }
    let executable = PathBuf::from(message["executable"].as_str()?);
    let manifest = PathBuf::from(message["manifest_path"].as_str()?);
    let directory = manifest.parent()?.to_path_buf();
    let package = package_name(message["package_id"].as_str()?)?;
    let target = message["target"]["name"].as_str()?;
    let is_lib = message["target"]["kind"]
        .as_array()?
        .iter()
        .any(|k| k == "lib" || k == "cdylib" || k == "rlib");
    let name = if package == "suite" {
        target.to_string()
    } else if is_lib {
        package.clone()
    } else {
        format!("{package}/{target}")
    };
    let env = vec![
        (
            "CARGO_MANIFEST_DIR".to_string(),
            directory.display().to_string(),
        ),
        ("CARGO_PKG_NAME".to_string(), package),
    ];
    Some(Group {
        name,
        program: executable,
        args: Vec::new(),
        directory,
        env,
    })
}

/// The variable that names a binary or library of the compilation, and its file: the
/// `cargo-sparkds` binary, and every cdylib. `None` for any other message.
fn shared_artifact(line: &str) -> Option<(String, PathBuf)> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-artifact" || message["profile"]["test"] != false {
        return None;
    }
    let kinds = message["target"]["kind"].as_array()?;
    let name = message["target"]["name"].as_str()?;
    if name == "cargo-sparkds" && kinds.iter().any(|k| k == "bin") {
        let executable = message["executable"].as_str()?;
        return Some(("CARGO_BIN_EXE_cargo-sparkds".to_string(), executable.into()));
    }
    if !kinds.iter().any(|k| k == "cdylib") {
        return None;
    }
    let package = package_name(message["package_id"].as_str()?)?;
    let library = message["filenames"]
        .as_array()?
        .iter()
        .filter_map(|f| f.as_str())
        .find(|f| [".so", ".dylib", ".dll"].iter().any(|s| f.ends_with(s)))?;
    let variable = format!(
        "CARGO_CDYLIB_FILE_{}",
        package.to_ascii_uppercase().replace('-', "_")
    );
    Some((variable, library.into()))
}

/// Copies of the shared files in `target/suite/built`, with the variables that name them: a
/// later build into the target directory (`cargo build -p ...` by a test that runs alone) may
/// replace the compilation's files, never these, which a running Spark session may have loaded.
fn keep_apart(built: &[(String, PathBuf)]) -> Result<Vec<(String, String)>, String> {
    let directory = crate::suite_directory().join("built");
    std::fs::create_dir_all(&directory)
        .map_err(|e| format!("cannot create {}: {e}", directory.display()))?;
    built
        .iter()
        .map(|(variable, file)| {
            let name = file.file_name().ok_or("a built file has no name")?;
            let copy = directory.join(name);
            // A new file each run: a session of the last run may still hold the old one.
            let _ = std::fs::remove_file(&copy);
            std::fs::copy(file, &copy).map_err(|e| {
                format!("cannot copy {} to {}: {e}", file.display(), copy.display())
            })?;
            Ok((variable.clone(), copy.display().to_string()))
        })
        .collect()
}

/// One cache of `cargo sparkds spark` for every group (`SPARKDS_CACHE_DIR`, kept between runs in
/// `target/suite/sparkds-cache`): the groups that run the command on projects of the run's copy
/// (the tutorial of `book`, `spark_command`) build the plugin's JNI library from that copy's SDK
/// once, in its target directory, where `spark_command` also installs the command, so that the
/// JNI library's build reuses the dependencies they share (as `tests/crates` keeps their
/// features equal). The release rehearsal clears it with the rest of the environment.
fn shared_cache() -> (String, String) {
    let directory = crate::suite_directory().join("sparkds-cache");
    (
        "SPARKDS_CACHE_DIR".to_string(),
        directory.display().to_string(),
    )
}

/// The package's name in a package id: `path+file:///dir/tests#suite@0.1.0`, or
/// `path+file:///dir/crates/sparkds#0.1.0` when the directory is named after the package.
fn package_name(id: &str) -> Option<String> {
    let (url, fragment) = id.split_once('#')?;
    match fragment.split_once('@') {
        Some((name, _)) => Some(name.to_string()),
        None => url.rsplit('/').next().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_named_by_its_id_with_or_without_a_name_in_the_fragment() {
        let named = "path+file:///work/tests#suite@0.1.0";
        assert_eq!(package_name(named).as_deref(), Some("suite"));
        let by_directory = "path+file:///work/crates/sparkds#0.1.0";
        assert_eq!(package_name(by_directory).as_deref(), Some("sparkds"));
        assert_eq!(package_name("registry+https://x/y"), None);
    }

    #[test]
    fn a_test_binary_of_the_suite_is_named_by_its_target_and_others_by_their_package() {
        let message = |package: &str, target: &str, kind: &str| {
            serde_json::json!({
                "reason": "compiler-artifact",
                "package_id": package,
                "manifest_path": "/work/tests/Cargo.toml",
                "target": {"name": target, "kind": [kind]},
                "profile": {"test": true},
                "executable": "/work/target/debug/deps/x-0123",
            })
            .to_string()
        };
        let jvm = test_binary(&message(
            "path+file:///work/tests#suite@0.1.0",
            "jvm",
            "test",
        ))
        .expect("a group");
        assert_eq!(jvm.name, "jvm");
        let unit = test_binary(&message(
            "path+file:///work/crates/sparkds#0.1.0",
            "sparkds",
            "lib",
        ))
        .expect("a group");
        assert_eq!(unit.name, "sparkds");
        let postgres = "path+file:///work/examples/postgres#postgres_example@0.1.0";
        let spark = test_binary(&message(postgres, "spark", "test")).expect("a group");
        assert_eq!(spark.name, "postgres_example/spark");
        let library = "{\"reason\":\"compiler-artifact\",\"profile\":{\"test\":false}}";
        assert!(test_binary(library).is_none());
    }

    #[test]
    fn the_command_and_every_cdylib_are_shared_under_cargo_s_names_and_nothing_else() {
        let message = |package: &str, target: &str, kinds: &[&str], test: bool, files: &[&str]| {
            serde_json::json!({
                "reason": "compiler-artifact",
                "package_id": package,
                "target": {"name": target, "kind": kinds},
                "profile": {"test": test},
                "executable": files.first(),
                "filenames": files,
            })
            .to_string()
        };
        let tool = message(
            "path+file:///w/crates/cargo-sparkds#0.1.0",
            "cargo-sparkds",
            &["bin"],
            false,
            &["/w/target/debug/cargo-sparkds"],
        );
        assert_eq!(
            shared_artifact(&tool),
            Some((
                "CARGO_BIN_EXE_cargo-sparkds".to_string(),
                PathBuf::from("/w/target/debug/cargo-sparkds")
            ))
        );
        let jni = message(
            "path+file:///w/crates/sparkds-jni#0.1.0",
            "sparkds_jni",
            &["cdylib", "rlib"],
            false,
            &["/w/d/libsparkds_jni.so", "/w/d/libsparkds_jni.rlib"],
        );
        assert_eq!(
            shared_artifact(&jni),
            Some((
                "CARGO_CDYLIB_FILE_SPARKDS_JNI".to_string(),
                PathBuf::from("/w/d/libsparkds_jni.so")
            ))
        );
        let example = message(
            "path+file:///w/examples/text_files#text_files@0.1.0",
            "spark_datasource_text_files",
            &["cdylib", "rlib"],
            false,
            &["/w/d/libspark_datasource_text_files.so"],
        );
        assert_eq!(
            shared_artifact(&example).map(|(variable, _)| variable),
            Some("CARGO_CDYLIB_FILE_TEXT_FILES".to_string())
        );
        // The test harness of the same targets, and a library without a cdylib: not shared.
        let harness = message(
            "path+file:///w/crates/sparkds-jni#0.1.0",
            "sparkds_jni",
            &["cdylib", "rlib"],
            true,
            &["/w/d/sparkds_jni-0123"],
        );
        assert_eq!(shared_artifact(&harness), None);
        let rlib = message(
            "path+file:///w/crates/sparkds#0.1.0",
            "sparkds",
            &["lib"],
            false,
            &["/w/d/libsparkds.rlib"],
        );
        assert_eq!(shared_artifact(&rlib), None);
    }
}
