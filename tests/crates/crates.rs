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
        ("spark-datasource-core", &["README.md", "src/lib.rs"][..]),
        ("spark-datasource-abi", &["README.md", "src/lib.rs"][..]),
        ("spark-datasource-eval", &["README.md", "src/lib.rs"][..]),
        ("spark-datasource-http", &["README.md", "src/lib.rs"][..]),
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
        "crates/spark-datasource-core/Cargo.toml",
        "crates/spark-datasource-abi/Cargo.toml",
        "crates/spark-datasource-eval/Cargo.toml",
        "crates/spark-datasource/Cargo.toml",
        "crates/spark-datasource-http/Cargo.toml",
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

/// `cargo sparkds spark`, installed from a checkout, builds the JNI library (release) in its
/// cache's target directory, where the suite's `spark_command` installs the tool too: when both
/// resolve every crate they share with the same features, the JNI build reuses all of it
/// (arrow, serde, ...) and takes seconds. One feature apart under arrow (a `std` of once_cell,
/// syn's `full`) and it builds everything again, minutes of every run of the suite.
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

/// The workspace's packages from `cargo metadata --no-deps`.
fn workspace_packages() -> Vec<serde_json::Value> {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(repo_root())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo metadata failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON");
    metadata["packages"].as_array().expect("packages").clone()
}

/// The crates that crates.io takes: every member whose `publish` is not false.
fn publishable_crates() -> Vec<String> {
    workspace_packages()
        .iter()
        .filter(|p| p["publish"] != serde_json::json!([]))
        .map(|p| p["name"].as_str().expect("a name").to_string())
        .collect()
}

/// The `version` of `[workspace.package]`, which this test crate inherits (a test below checks
/// that it does).
fn workspace_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// One release version: the publishable crates and the JNI crate take the workspace's, their
/// dependencies on each other ask for it, and the Python bridge, the template's default `sdk`
/// and the version it stamps into generated files say the same.
#[test]
fn the_crates_the_wheel_and_the_template_have_the_workspace_s_version() {
    let version = workspace_version();
    let packages = workspace_packages();
    let publishable = publishable_crates();
    assert_eq!(
        publishable,
        [
            "spark-datasource-core",
            "spark-datasource-abi",
            "spark-datasource-eval",
            "spark-datasource",
            "spark-datasource-http",
            "sparkds",
            "sparkds-package",
            "cargo-sparkds"
        ],
        "the published crates"
    );
    for package in &packages {
        let name = package["name"].as_str().expect("a name");
        if !publishable.iter().any(|p| p == name) && name != "sparkds-jni" {
            continue;
        }
        assert_eq!(package["version"], version.as_str(), "{name}'s version");
    }
    // Every member's normal dependency on a published crate asks for this version too (the
    // examples and the JNI crate included), so that `cargo package --workspace` can package them.
    for package in &packages {
        let name = package["name"].as_str().expect("a name");
        for dependency in package["dependencies"].as_array().expect("dependencies") {
            let other = dependency["name"].as_str().expect("a name");
            if publishable.iter().any(|p| p == other) && dependency["kind"].is_null() {
                assert_eq!(
                    dependency["req"],
                    format!("^{version}").as_str(),
                    "{name} depends on {other}: ask for version {version} beside its path"
                );
            }
        }
    }
    let read = |relative: &str| {
        std::fs::read_to_string(repo_root().join(relative))
            .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
    };
    assert!(
        read("tests/Cargo.toml").contains("\nversion.workspace = true\n"),
        "tests/Cargo.toml must inherit the workspace's version, which these tests read"
    );
    let stated = [
        (
            "python/pyproject.toml",
            format!("\nversion = \"{version}\"\n"),
        ),
        (
            "template/cargo-generate.toml",
            format!("\ndefault = \"version:{version}\"\n"),
        ),
        (
            "template/hooks/validate.rhai",
            format!("variable::set(\"template_version\", \"{version}\");"),
        ),
    ];
    // The rules' messages link to the book where the release publishes it.
    let manifest = read("Cargo.toml");
    let homepage = manifest
        .lines()
        .find_map(|l| l.strip_prefix("homepage = "))
        .map(|v| v.trim_matches('"'))
        .expect("a homepage in [workspace.package]");
    assert_eq!(sparkds::rules::BOOK_URL, Some(homepage));
    for (file, wanted) in stated {
        assert!(
            read(file).contains(&wanted),
            "{file} must state the workspace's version {version}: `{}`",
            wanted.trim()
        );
    }
}

/// The files and sizes of a `.crate` archive (`tar -tvzf`), each `(path in the crate, bytes)`.
fn crate_contents(archive: &Path) -> Vec<(String, u64)> {
    let output = Command::new("tar")
        .arg("-tvzf")
        .arg(archive)
        .output()
        .expect("tar runs");
    assert!(output.status.success(), "tar -tvzf {}", archive.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let size = fields.get(2)?.parse().ok()?;
            let path = fields.last()?.split_once('/')?.1.to_string();
            Some((path, size))
        })
        .collect()
}

/// `cargo package` of every publishable crate together, as a release packages them (the crates
/// they depend on here are not on crates.io yet: cargo resolves them from the packages it just
/// made): each holds its README and sources, nothing of the repository around it, and stays
/// small. cargo-sparkds holds what its build script embeds, and those files are byte for byte
/// the repository's `jvm/` and `python/spark_native_bridge`. Building each package is the
/// release workflow's job `crate-packages` (`.github/release/crates.py package`), minutes of
/// compilation that the suite leaves out (`--no-verify`).
#[test]
fn every_publishable_crate_packages_alone_small_and_with_what_it_needs() {
    let root = repo_root();
    let mut command = Command::new(env!("CARGO"));
    command
        .args(["package", "--locked", "--no-verify", "--allow-dirty"])
        .current_dir(&root);
    let crates = publishable_crates();
    for name in &crates {
        command.args(["-p", name]);
    }
    let output = command.output().expect("cargo runs");
    let printed = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "cargo package failed:\n{printed}");
    // Only the tests that need the repository (examples/) are left out, and said so.
    for line in printed.lines().filter(|l| l.starts_with("warning")) {
        assert!(
            line.starts_with("warning: ignoring test `"),
            "cargo package warned:\n{printed}"
        );
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let mut report = String::new();
    for name in &crates {
        let archive = target
            .join("package")
            .join(format!("{name}-{}.crate", workspace_version()));
        let contents = crate_contents(&archive);
        let compressed = std::fs::metadata(&archive).expect("the .crate").len();
        let total: u64 = contents.iter().map(|(_, size)| size).sum();
        report.push_str(&format!(
            "{name}: {} files, {total} bytes, {compressed} bytes compressed\n",
            contents.len()
        ));
        for (path, size) in &contents {
            report.push_str(&format!("  {size:>8} {path}\n"));
        }
        for needed in ["Cargo.toml", "README.md"] {
            assert!(
                contents.iter().any(|(p, _)| p == needed),
                "{name} packages no {needed}"
            );
        }
        assert!(
            compressed < 200 * 1024,
            "{name} is {compressed} bytes compressed: what grew?\n{report}"
        );
        assert!(
            !contents
                .iter()
                .any(|(p, _)| p.contains("__pycache__") || p.starts_with("target/")),
            "{name} packages build output:\n{report}"
        );
    }
    println!("{report}");
    // cargo-sparkds: the embedded files, and exactly those of the repository.
    let unpacked = tempfile::tempdir().expect("a temporary directory");
    let archive = target
        .join("package")
        .join(format!("cargo-sparkds-{}.crate", workspace_version()));
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .expect("tar runs");
    assert!(status.success());
    let package = unpacked
        .path()
        .join(format!("cargo-sparkds-{}", workspace_version()));
    let tracked = Command::new("git")
        .args(["ls-files", "jvm/build.sh", "jvm/spark-lines.txt", "jvm/src"])
        .args(["python/spark_native_bridge"])
        .current_dir(&root)
        .output()
        .expect("git runs");
    let tracked: Vec<String> = String::from_utf8_lossy(&tracked.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert!(tracked.len() > 30, "{tracked:?}");
    let mut embedded: Vec<String> = crate_contents(&archive)
        .into_iter()
        .filter_map(|(p, _)| p.strip_prefix("embedded/").map(str::to_string))
        .collect();
    embedded.sort();
    let mut wanted = tracked.clone();
    wanted.sort();
    assert_eq!(
        embedded, wanted,
        "cargo-sparkds must package exactly the plugin's build files and the bridge"
    );
    for file in &tracked {
        assert_eq!(
            std::fs::read(package.join("embedded").join(file)).expect("a packaged file"),
            std::fs::read(root.join(file)).expect("a repository file"),
            "the packaged {file} differs from the repository's"
        );
    }
    assert!(package.join("released-plugin.txt").is_file());
}

/// The documentation of each published crate builds as docs.rs builds it: every feature, no
/// dependency's documentation, and no warning (a broken intra-doc link fails).
#[test]
fn the_published_crates_documentation_builds_without_a_warning() {
    let mut command = Command::new(env!("CARGO"));
    command
        .args(["doc", "--locked", "--no-deps", "--all-features"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(repo_root());
    for name in publishable_crates() {
        command.args(["-p", &name]);
    }
    let output = command.output().expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo doc failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `cargo package --workspace`: every member packages, the examples and the test crate included
/// (their dependencies on the published crates carry a version beside the path; path-only
/// dev-dependencies are dropped). The build of each published crate from its package alone is
/// the release rehearsal's `cargo install cargo-sparkds` from a local registry (tests/release).
#[test]
fn the_whole_workspace_packages() {
    let target = tempfile::tempdir().expect("a scratch target");
    let output = Command::new(env!("CARGO"))
        .args([
            "package",
            "--workspace",
            "--locked",
            "--offline",
            "--no-verify",
            "--allow-dirty",
        ])
        .arg("--target-dir")
        .arg(target.path())
        .current_dir(repo_root())
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "cargo package --workspace failed:\n{stderr}"
    );
    let packaged = stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("Packaged "))
        .count();
    let members = workspace_packages().len();
    assert_eq!(
        packaged, members,
        "each of the {members} members packaged:\n{stderr}"
    );
}
