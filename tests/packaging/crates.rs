//! The crates are ready for crates.io: `cargo package` takes each with its README, its
//! metadata, and (for the SDK) the header, which `spark_datasource::HEADER` includes. Their
//! `rust-version` is true: no locked dependency needs a newer Rust, and every manifest, the
//! template and the book state the same one.

use std::path::Path;
use std::process::Command;

use crate::helpers::repo_root;

#[path = "../support/resolution.rs"]
mod resolution;

/// The files that `cargo package --list` would publish for `package`, and what it warned.
fn package_list(package: &str) -> (Vec<String>, String) {
    let output = Command::new(env!("CARGO"))
        .args(["package", "--list", "--allow-dirty", "-p", package])
        .current_dir(repo_root())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo package --list -p {package} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let files = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    (files, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn the_sdk_crate_packages_with_its_header_and_readme_without_a_warning() {
    let (files, warnings) = package_list("spark-datasource");
    for file in [
        "spark_datasource.h",
        "README.md",
        "src/lib.rs",
        "src/macros.rs",
    ] {
        assert!(
            files.iter().any(|f| f == file),
            "{file} is not packaged: {files:?}"
        );
    }
    assert!(!warnings.contains("warning"), "{warnings}");
}

#[test]
fn the_host_the_package_format_and_the_command_package_with_their_readmes_without_a_warning() {
    for (package, files_needed) in [
        ("sparkds", &["README.md", "src/lib.rs"][..]),
        ("sparkds-package", &["README.md", "src/lib.rs"][..]),
        ("cargo-sparkds", &["README.md", "src/main.rs"][..]),
    ] {
        let (files, warnings) = package_list(package);
        for file in files_needed {
            assert!(
                files.iter().any(|f| f == file),
                "{package}: {file} is not packaged: {files:?}"
            );
        }
        assert!(!warnings.contains("warning"), "{package}: {warnings}");
    }
}

/// The `rust-version` of `[workspace.package]` in the root Cargo.toml: the one that every other
/// manifest, the template and the book must state.
fn declared_rust_version() -> String {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).expect("Cargo.toml");
    rust_versions_in(&manifest)
        .into_iter()
        .next()
        .expect("the root Cargo.toml declares rust-version in [workspace.package]")
}

/// Each `rust-version = "X"` of a manifest and each "Rust X or later" of a text, in order.
fn rust_versions_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (prefix, suffix) in [("rust-version = \"", "\""), ("Rust ", " or later")] {
        let mut rest = text;
        while let Some(start) = rest.find(prefix) {
            rest = &rest[start + prefix.len()..];
            let version: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            if !version.is_empty() && rest[version.len()..].starts_with(suffix) {
                found.push(version);
            }
        }
    }
    found
}

/// A `rust_version` as numbers, `1.88` and `1.88.0` alike.
fn parse_version(version: &str) -> Vec<u64> {
    let mut parts: Vec<u64> = version
        .split('.')
        .map(|part| {
            part.parse()
                .unwrap_or_else(|_| panic!("`{version}` is not a Rust version"))
        })
        .collect();
    parts.resize(3, 0);
    parts
}

/// The packages of the locked dependency graph of the workspace in `dir` for this machine's
/// platform, without the workspace's own members, each as (name, version, rust_version).
///
/// Offline: `cargo metadata` reads the manifests that cargo has downloaded, which are those of
/// this platform (`--filter-platform`); a dependency of another platform only is not checked.
fn locked_dependencies(dir: &Path) -> Vec<(String, String, Option<String>)> {
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    let host = String::from_utf8_lossy(&rustc.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--offline", "--locked"])
        .args(["--filter-platform", &host])
        .current_dir(dir)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo metadata --offline --locked failed in {}:\n{}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    let members = metadata["workspace_members"]
        .as_array()
        .expect("workspace_members");
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| !members.contains(&package["id"]))
        .map(|package| {
            (
                package["name"].as_str().unwrap_or_default().to_string(),
                package["version"].as_str().unwrap_or_default().to_string(),
                package["rust_version"].as_str().map(str::to_string),
            )
        })
        .collect()
}

#[test]
fn no_locked_dependency_needs_a_newer_rust_than_the_declared_rust_version() {
    let declared = declared_rust_version();
    let dependencies = locked_dependencies(&repo_root());
    assert!(
        dependencies.len() > 50,
        "too few packages: {dependencies:?}"
    );
    let mut newer: Vec<String> = dependencies
        .iter()
        .filter_map(|(name, version, rust)| {
            let rust = rust.as_deref()?;
            (parse_version(rust) > parse_version(&declared))
                .then(|| format!("{name} {version} needs Rust {rust}"))
        })
        .collect();
    newer.sort();
    assert!(
        newer.is_empty(),
        "the workspace declares rust-version = \"{declared}\", but {}: raise rust-version in \
         the root Cargo.toml, and with it in the examples, the template and the book (a test \
         checks that they agree), or lock an older version of the dependency",
        newer.join(", ")
    );
    // True, not only safe: the declared version is the highest that a dependency needs, so a
    // user on that Rust is not turned away by a limit that nothing requires.
    let highest = dependencies
        .iter()
        .filter_map(|(_, _, rust)| rust.as_deref())
        .max_by_key(|rust| parse_version(rust))
        .expect("some dependency declares a rust-version");
    assert_eq!(
        parse_version(highest),
        parse_version(&declared),
        "the workspace declares rust-version = \"{declared}\", but no dependency needs more \
         than Rust {highest}: lower it to {highest} everywhere"
    );
}

#[test]
fn every_manifest_the_template_and_the_book_state_the_same_rust_version() {
    let declared = declared_rust_version();
    let root = repo_root();
    let read = |relative: &str| {
        std::fs::read_to_string(root.join(relative))
            .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
    };
    // The crates of the workspace inherit it.
    for inherits in [
        "crates/spark-datasource/Cargo.toml",
        "crates/sparkds/Cargo.toml",
        "crates/sparkds-package/Cargo.toml",
        "crates/cargo-sparkds/Cargo.toml",
        "tests/Cargo.toml",
    ] {
        assert!(
            read(inherits).contains("rust-version.workspace = true"),
            "{inherits} must inherit rust-version from the workspace"
        );
    }
    // The examples and the template write it out; the READMEs and the book say it in words.
    let mut stating = vec![
        "template/Cargo.toml.liquid".to_string(),
        "README.md".to_string(),
        "book/src/tutorial/install.md".to_string(),
    ];
    for entry in std::fs::read_dir(root.join("examples")).expect("examples/") {
        let dir = entry.expect("an entry").path();
        if dir.join("Cargo.toml").is_file() {
            let name = dir.file_name().expect("a name").to_string_lossy();
            stating.push(format!("examples/{name}/Cargo.toml"));
        }
    }
    for file in &stating {
        let versions = rust_versions_in(&read(file));
        assert!(
            !versions.is_empty(),
            "{file} does not state the Rust it needs"
        );
        for version in versions {
            assert_eq!(
                version, declared,
                "{file} states Rust {version}, but the root Cargo.toml declares {declared}"
            );
        }
    }
    // Nothing else says another version.
    let mut texts = vec![root.join("crates/spark-datasource/README.md")];
    texts.push(root.join("crates/sparkds/README.md"));
    texts.push(root.join("crates/cargo-sparkds/README.md"));
    collect_markdown(&root.join("book/src"), &mut texts);
    collect_markdown(&root.join("examples"), &mut texts);
    for path in texts {
        let text = std::fs::read_to_string(&path).expect("readable");
        for version in rust_versions_in(&text) {
            assert_eq!(
                version,
                declared,
                "{} states Rust {version}, but the root Cargo.toml declares {declared}",
                path.display()
            );
        }
    }
}

fn collect_markdown(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            collect_markdown(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[test]
fn rust_versions_are_found_in_manifests_and_in_prose() {
    assert_eq!(
        rust_versions_in("edition = \"2021\"\nrust-version = \"1.89\"\n"),
        ["1.89"]
    );
    assert_eq!(
        rust_versions_in("- **Rust 1.89 or later**, and Rust 2021"),
        ["1.89"]
    );
    assert!(parse_version("1.88.0") == parse_version("1.88"));
    assert!(parse_version("1.89") > parse_version("1.88.1"));
}

/// The lines of the `sh` blocks of a Markdown text.
fn sh_lines(markdown: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_sh = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
        } else if in_sh {
            lines.push(line.to_string());
        }
    }
    lines
}

#[test]
fn ci_runs_the_readme_test_command_and_every_build_is_locked() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let test_command = sh_lines(&readme)
        .into_iter()
        .find_map(|line| line.strip_prefix(".ci/install && ").map(str::to_string))
        .expect("the README's test command is `.ci/install && cargo suite`");
    assert_eq!(test_command, "cargo suite");
    let run = std::fs::read_to_string(root.join(".ci/run")).expect(".ci/run");
    // Run as it is, or with its status kept for the lines that follow (`|| status=$?`).
    assert!(
        run.lines().any(|line| line.trim() == test_command
            || line.trim().starts_with(&format!("{test_command} || "))),
        ".ci/run does not run the README's test command `{test_command}`"
    );
    // `cargo suite` is an alias: what it runs builds with the lock file too.
    let config = std::fs::read_to_string(root.join(".cargo/config.toml")).expect("config.toml");
    let alias = config
        .lines()
        .find_map(|line| line.strip_prefix("suite = "))
        .expect("`cargo suite` is an alias of .cargo/config.toml");
    assert!(
        alias.contains("run --locked"),
        "the alias `suite = {alias}` is not locked"
    );
    // Every build, install and test builds with the versions of a Cargo.lock: the repository's,
    // or the one a tool is released with.
    let mut commands: Vec<(String, String)> = sh_lines(&readme)
        .into_iter()
        .map(|line| ("README.md".to_string(), line))
        .collect();
    for script in [".ci/run", ".ci/install"] {
        let text = std::fs::read_to_string(root.join(script)).expect("a script of .ci/");
        commands.extend(
            text.lines()
                .filter(|line| !line.trim_start().starts_with('#'))
                .map(|line| (script.to_string(), line.to_string())),
        );
    }
    for (file, line) in commands {
        for part in line.split("&&") {
            let cargo = ["cargo build", "cargo install", "cargo test"]
                .iter()
                .any(|command| part.trim_start().starts_with(command));
            assert!(
                !cargo || part.contains("--locked"),
                "{file}: `{}` has no --locked",
                part.trim()
            );
        }
    }
}

/// The registry crates that `package`'s build resolves (`cargo tree`, this platform, normal and
/// build dependencies), each `name version` with the lines of features it is built with.
fn resolved_features(package: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let output = Command::new(env!("CARGO"))
        .args(["tree", "--locked", "--offline", "-p", package])
        .args(["-e", "normal,build", "--prefix", "none", "-f", "{p}|{f}"])
        .current_dir(repo_root())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree -p {package} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    resolution::resolved_features(&String::from_utf8_lossy(&output.stdout))
}

/// `cargo sparkds spark` builds the JNI library (release) in the checkout, where the README's
/// `cargo install --path crates/cargo-sparkds` built the tool: when both resolve every crate
/// they share with the same features, the JNI build reuses all of it (arrow, serde, ...) and
/// takes seconds. One feature apart under arrow (a `std` of once_cell, syn's `full`) and it
/// builds everything again, minutes on a user's first `cargo sparkds spark`.
#[test]
fn the_jni_library_s_release_build_reuses_every_dependency_of_the_installed_tool() {
    let tool = resolved_features("cargo-sparkds");
    let jni = resolved_features("sparkds-jni");
    assert!(
        tool.contains_key(&format!("arrow-array v{}", locked_version("arrow-array"))),
        "cargo tree of cargo-sparkds lists no arrow-array: {:?}",
        tool.keys().take(5).collect::<Vec<_>>()
    );
    let apart = resolution::resolved_apart(("the tool", &tool), ("the JNI library", &jni));
    assert!(
        apart.is_empty(),
        "crates that the tool and the JNI library resolve with different features (so that \
         `cargo sparkds spark` builds them, and all that depends on them, again): give both the \
         same, as crates/sparkds-jni/Cargo.toml does for syn:\n{}",
        apart.join("\n")
    );
}

/// The version of `name` in Cargo.lock (the only one, for the crates asked about).
fn locked_version(name: &str) -> String {
    let lock = std::fs::read_to_string(repo_root().join("Cargo.lock")).expect("Cargo.lock");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == format!("name = \"{name}\"") {
            if let Some(version) = lines.next().and_then(|l| l.strip_prefix("version = ")) {
                return version.trim_matches('"').to_string();
            }
        }
    }
    panic!("Cargo.lock has no {name}")
}
