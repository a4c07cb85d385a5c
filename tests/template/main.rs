//! The template, tested the way its users use it: `cargo generate --silent -d ...` into a
//! fresh directory, then, in the generated project, `cargo fmt --check`, `cargo clippy
//! --all-targets -- -D warnings` (whose build writes Cargo.lock) and `cargo test --locked`
//! (which loads the built library as Spark does). Every generated project builds into one
//! shared target directory, so dependencies build once; cargo's lock on it runs the builds one
//! at a time while generation runs in parallel.

mod helpers;
mod http_api;
#[path = "../support/resolution.rs"]
mod resolution;

use helpers::{shared_target, Generate, Project};

/// Builds, lints and tests a generated project, checks that its library exports
/// `spark_ds_init` and that it holds only its author's code, and snapshots its files and export
/// line.
fn check(project: &Project) {
    project.cargo(&["fmt", "--check"]);
    // The first build writes Cargo.lock, which the project keeps: every later one is --locked.
    project.cargo(&["clippy", "--all-targets", "--", "-D", "warnings"]);
    assert!(
        project.dir.join("Cargo.lock").is_file(),
        "{}: the first build wrote no Cargo.lock",
        project.name
    );
    assert!(
        !project
            .read(".gitignore")
            .lines()
            .any(|line| !line.starts_with('#') && line.contains("Cargo.lock")),
        "{}: .gitignore leaves Cargo.lock out, but a cdylib keeps its lock file",
        project.name
    );
    project.cargo(&["test", "--locked"]);
    project.cargo(&["build"]);
    assert_build_and_test_resolve_alike(project);
    let path = project.built_library();
    assert!(
        exports_symbol(project, "spark_ds_init"),
        "{} does not export spark_ds_init",
        path.display()
    );
    assert_only_the_authors_code(project);

    let export_line = project
        .read("src/lib.rs")
        .lines()
        .find(|line| line.contains("export!("))
        .expect("src/lib.rs has the export! line")
        .to_string();
    // The symbol of the filter extension exactly when the export line names push_filters (the
    // sample's reader implements it in every variant).
    assert_eq!(
        exports_symbol(project, "spark_ds_filters_init"),
        export_line.contains("push_filters"),
        "{}: spark_ds_filters_init and the export line {export_line}",
        path.display()
    );
    let summary = format!("files:\n{}\n\nexport line:\n{export_line}", project.tree());
    insta::assert_snapshot!(project.name.as_str(), summary);
}

/// `cargo build` and `cargo test` resolve every crate they share with the same features, so
/// that the second reuses the first's build of arrow: cargo resolves dev-dependencies' features
/// apart, and the usual ones (insta, tempfile) turn on `std` features under arrow, which the
/// SDK turns on too (crates/spark-datasource/Cargo.toml).
fn assert_build_and_test_resolve_alike(project: &Project) {
    let tree = |edges: &str| {
        project.cargo(&[
            "tree",
            "--locked",
            "--offline",
            "-e",
            edges,
            "--prefix",
            "none",
            "-f",
            "{p}|{f}",
        ])
    };
    let (build_tree, test_tree) = (tree("normal,build"), tree("normal,build,dev"));
    // The SDK, a path crate that `resolved_features` leaves out, resolves alike too: a host that
    // turned one of its features on (`filter-evaluation`) would let a library call what
    // `cargo test` builds and `cargo build` does not.
    let sdk = |tree: &str| {
        let mut lines: Vec<&str> = tree
            .lines()
            .filter(|line| line.starts_with("spark-datasource v"))
            .map(|line| line.trim_end_matches(" (*)"))
            .collect();
        lines.sort();
        lines.dedup();
        lines.join("\n")
    };
    assert_eq!(
        sdk(&build_tree),
        sdk(&test_tree),
        "{}: `cargo build` and `cargo test` resolve spark-datasource with different features",
        project.name
    );
    let build = resolution::resolved_features(&build_tree);
    let test = resolution::resolved_features(&test_tree);
    let apart = resolution::resolved_apart(("`cargo build`", &build), ("`cargo test`", &test));
    assert!(
        apart.is_empty(),
        "{}: crates that `cargo build` and `cargo test` resolve with different features (so \
         that each builds them, and all above them, once more): turn the features on in \
         crates/spark-datasource/Cargo.toml:\n{}",
        project.name,
        apart.join("\n")
    );
}

/// No copy of the header, the SDK, the tool or the bridge, and no `unsafe`: the SDK holds
/// all of it.
fn assert_only_the_authors_code(project: &Project) {
    for copied in [
        "spark_datasource.h",
        "sparkds",
        "python",
        "src/abi",
        "src/api",
        ".cargo",
    ] {
        assert!(
            !project.dir.join(copied).exists(),
            "{}: the generated project has a copy of `{copied}`",
            project.name
        );
    }
    for file in project.tree().lines().filter(|f| f.ends_with(".rs")) {
        assert!(
            !project.read(file).contains("unsafe"),
            "{}: {file} has `unsafe`",
            project.name
        );
    }
}

/// The project's `rust-version` is the highest `rust_version` of its locked dependencies on this
/// platform (offline, `cargo metadata` knows each): no lower, or they would not build with it,
/// and no higher, or it would turn users away for nothing.
fn assert_rust_version_is_the_highest_of_the_dependencies(project: &Project) {
    let declared = project
        .read("Cargo.toml")
        .lines()
        .find_map(|line| {
            line.strip_prefix("rust-version = \"")
                .map(|v| v.trim_end_matches('"').to_string())
        })
        .expect("the generated Cargo.toml declares rust-version");
    let host = std::process::Command::new("rustc")
        .arg("-vV")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .expect("rustc runs");
    let host = host
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc -vV names the host");
    let metadata = project.cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--offline",
        "--locked",
        "--filter-platform",
        host,
    ]);
    let metadata: serde_json::Value = serde_json::from_str(&metadata).expect("JSON");
    let numbers = |v: &str| -> Vec<u64> {
        let mut parts: Vec<u64> = v.split('.').map(|p| p.parse().unwrap_or(0)).collect();
        parts.resize(3, 0);
        parts
    };
    let mut needs: Vec<(Vec<u64>, String)> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| p["name"] != project.name.as_str())
        .filter_map(|p| {
            let rust = p["rust_version"].as_str()?;
            Some((
                numbers(rust),
                format!(
                    "{} {} needs Rust {rust}",
                    p["name"].as_str().unwrap_or_default(),
                    p["version"].as_str().unwrap_or_default()
                ),
            ))
        })
        .collect();
    needs.sort();
    let (highest, which) = needs.pop().expect("a dependency declares rust_version");
    assert_eq!(
        highest,
        numbers(&declared),
        "{}: the generated Cargo.toml declares rust-version = \"{declared}\", but {which}",
        project.name
    );
}

/// Whether the library that `cargo build` made exports the function `name`.
fn exports_symbol(project: &Project, name: &str) -> bool {
    use object::{Object, ObjectSymbol};
    let path = project.built_library();
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = object::File::parse(&*data).expect("a shared library");
    file.exports().into_iter().flatten().any(|export| {
        export.is_ok_and(|e| {
            matches!(
                e.name(),
                object::read::NameOrOrdinal::Name(exported) if exported == name.as_bytes()
            )
        })
    }) || file
        .dynamic_symbols()
        .any(|symbol| symbol.name() == Ok(name) && symbol.is_definition())
}

#[test]
fn the_default_answers_make_a_batch_reader_with_both_pushdowns_for_every_platform() {
    let project = Generate::named("defaults").project();
    check(&project);
    // The main command of the README: see the rows without Spark. It says which build it
    // loaded: the debug one by default, the release one with --release.
    let (shown, said) = project.cargo_printed(&["sparkds", "show", "end=5"]);
    insta::assert_snapshot!("show", shown.trim_end());
    let loading = |folder: &str, profile: &str| {
        format!(
            "sparkds: loading {} (built with the `{profile}` profile)",
            project.built_library_in(folder).display()
        )
    };
    assert!(said.contains(&loading("debug", "dev")), "{said}");
    let (shown_release, said) = project.cargo_printed(&["sparkds", "show", "--release", "end=5"]);
    assert_eq!(shown_release, shown);
    assert!(said.contains(&loading("release", "release")), "{said}");

    // A schema of the user's may declare nullable a column without nulls, as `CREATE TABLE t
    // (id BIGINT, ...) USING ...` does; NOT NULL on a column with nulls is refused when the
    // read is planned, saying the fix.
    let (nullable, _) =
        project.cargo_printed(&["sparkds", "show", "--schema", "id bigint", "end=2"]);
    assert!(
        nullable.contains("id: long (nullable = true)") && nullable.contains("| 1  |"),
        "{nullable}"
    );
    let schema = "id bigint not null, label string not null";
    let refused = project.cargo_fails(&["sparkds", "show", "--schema", schema, "end=5"]);
    assert!(
        refused.contains("column `label` has nulls in this data source"),
        "{refused}"
    );

    // Its rust-version is true: no locked dependency needs a newer Rust.
    assert_rust_version_is_the_highest_of_the_dependencies(&project);

    // The testing API is documented where the project builds, though `cargo doc -p sparkds`
    // panics there (sparkds is a dev-dependency: rust-lang/cargo#11105).
    let (pages, _) = project.cargo_printed(&["sparkds", "doc"]);
    let testing = shared_target().join("doc/sparkds/testing/fn.library.html");
    assert!(
        pages.contains(&format!(
            "sparkds: {}",
            shared_target().join("doc/sparkds/index.html").display()
        )) && testing.is_file(),
        "{pages}"
    );

    // The project is small: what its author reads and owns (`.github/` aside: the caller of the
    // repository's reusable workflows and Dependabot's configuration, both the template's).
    let files: Vec<String> = project
        .tree()
        .lines()
        .filter(|f| !f.starts_with(".github/"))
        .map(str::to_string)
        .collect();
    let lines: usize = files.iter().map(|f| project.read(f).lines().count()).sum();
    assert!(
        files.len() <= 20,
        "{} files:\n{}",
        files.len(),
        files.join("\n")
    );
    assert!(lines <= 1000, "{lines} lines in {} files", files.len());

    // A capability named in the export line without its trait is a compile error at that
    // line, which says what to implement.
    project.edit(
        "src/lib.rs",
        "batch_read, push_limit",
        "batch_read, micro_batch_read, push_limit",
    );
    let error = project.cargo_fails(&["check"]);
    assert!(
        error.contains(
            "`export!` names `micro_batch_read`, but `Source` does not implement \
             `spark_datasource::StreamRead`"
        ) && error.contains("src/lib.rs:11"),
        "{error}"
    );
    assert!(
        error.contains("implement `spark_datasource::StreamRead` for `Source`"),
        "{error}"
    );

    // A forbidden combination too.
    project.edit("src/lib.rs", "micro_batch_read", "truncate");
    let error = project.cargo_fails(&["check"]);
    assert!(
        error.contains("`truncate` lets a writer overwrite: add batch_write or streaming_write")
            && error.contains("src/lib.rs:11"),
        "{error}"
    );

    // And an unknown name.
    project.edit("src/lib.rs", "truncate", "batch_reed");
    let error = project.cargo_fails(&["check"]);
    assert!(
        error.contains("unknown capability `batch_reed` in export!"),
        "{error}"
    );
}

/// Where spark-datasource and sparkds come from is one answer, which the template's hook turns
/// into the two dependency lines of Cargo.toml, the install command of the README and of CI;
/// CI calls the reusable workflows of the canonical repository at the commit the template pins,
/// whatever the answer. No rendered file but those names where the crates come from.
#[test]
fn the_sdk_comes_from_a_path_a_git_tag_or_a_crates_io_version() {
    let summary = |project: &Project| -> String {
        let dependencies = project
            .read("Cargo.toml")
            .lines()
            .filter(|line| line.starts_with("spark-datasource =") || line.starts_with("sparkds ="))
            .map(str::to_string)
            .collect::<Vec<_>>();
        let readme = project.read("README.md");
        let install = readme
            .lines()
            .filter(|line| line.starts_with("cargo install --locked"))
            .map(str::to_string)
            .collect::<Vec<_>>();
        // The pinned commit changes with every change of the workflows: another test checks it.
        let ci = project
            .read(".github/workflows/ci.yml")
            .lines()
            .filter(|line| line.starts_with("    uses: ") || line.contains("sparkds-install:"))
            .map(|line| {
                let line = line.trim();
                match line.split_once('@') {
                    Some((call, rest)) if line.starts_with("uses: ") => {
                        let (_, comment) = rest.split_once(' ').unwrap_or((rest, ""));
                        format!("{call}@<pinned commit> {comment}")
                    }
                    _ => line.to_string(),
                }
            })
            .collect::<Vec<_>>();
        let workflows = project
            .tree()
            .lines()
            .filter(|f| f.starts_with(".github/workflows/"))
            .map(str::to_string)
            .collect::<Vec<_>>();
        [dependencies, install, ci, workflows].concat().join("\n")
    };
    let github = Generate::named("from_github")
        .define(
            "sdk",
            "git:https://github.com/example-owner/spark-datasource-template.git#v0.1.0",
        )
        .project();
    let git = Generate::named("from_git")
        .define(
            "sdk",
            "git:https://example.org/spark-datasource-template.git#v0.1.0",
        )
        .project();
    let version = Generate::named("from_crates_io")
        .define("sdk", "version:0.1.0")
        .project();
    let path = Generate::named("from_path")
        .define("sdk", "path:/opt/checkouts/spark-datasource-template/")
        .project();
    insta::assert_snapshot!(
        "sdk_forms",
        format!(
            "git, on github.com:\n{}\n\ngit, elsewhere:\n{}\n\nversion:\n{}\n\npath:\n{}",
            summary(&github),
            summary(&git),
            summary(&version),
            summary(&path)
        )
    );
    for project in [&github, &git, &version, &path] {
        assert!(
            !project.tree().lines().any(|f| f.ends_with(".rs")
                && ["example.org", "example-owner"]
                    .iter()
                    .any(|host| project.read(f).contains(host))),
            "the sdk is rendered in Cargo.toml, the README and ci.yml only"
        );
    }
}

/// The names that the Liquid of `text` reads: the words of its `{{ ... }}` and `{% ... %}`,
/// outside `{% raw %}` blocks.
fn liquid_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    let mut raw = false;
    while let Some(start) = rest.find('{') {
        let after = &rest[start..];
        let close = if after.starts_with("{{") {
            "}}"
        } else if after.starts_with("{%") {
            "%}"
        } else {
            rest = &after[1..];
            continue;
        };
        let (tag, end) = match after[2..].find(close) {
            Some(e) => (&after[2..2 + e], 2 + e + close.len()),
            None => (&after[2..], after.len()),
        };
        let words: Vec<&str> = tag
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        match words.first().copied() {
            Some("raw") if close == "%}" => raw = true,
            Some("endraw") if close == "%}" => raw = false,
            _ if !raw => names.extend(words.iter().map(|w| w.to_string())),
            _ => {}
        }
        rest = &after[end..];
    }
    names
}

/// The Liquid files print what the template's hook computes from the answer `sdk`: none of them
/// reads the answer, or its parts, to take it apart again or branch on its kind.
#[test]
fn no_liquid_file_restates_the_sdk_answer() {
    assert_eq!(
        liquid_names("a {% if sdk_kind == \"path\" %}{{ sdk_location }}{% endif %} {% raw %}${{ sdk }}{% endraw %}"),
        ["if", "sdk_kind", "path", "sdk_location", "endif"]
    );
    let template = helpers::repo_root().join("template");
    let mut pending = vec![template.clone()];
    let mut read = 0;
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.to_string_lossy().ends_with(".liquid") {
                read += 1;
                let text = std::fs::read_to_string(&path).expect("read");
                let names = liquid_names(&text);
                let sdk: Vec<&String> = names
                    .iter()
                    .filter(|n| *n == "sdk" || n.starts_with("sdk_"))
                    .collect();
                assert!(
                    sdk.is_empty(),
                    "{}: reads {sdk:?}: let the hook (template/hooks/validate.rhai) set the text \
                     this file prints",
                    path.display()
                );
            }
        }
    }
    assert!(read >= 6, "{read} Liquid files");
}

/// Without `-d sdk`, a project takes the crates of the template's own release from crates.io,
/// and installs the command of that release: the answer a user of a release needs.
#[test]
fn the_default_sdk_is_the_template_s_release_on_crates_io() {
    let project = Generate::named("by_default")
        .with_the_default_sdk()
        .project();
    let manifest = project.read("Cargo.toml");
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        manifest.contains(&format!("\nspark-datasource = \"{version}\"\n"))
            && manifest.contains(&format!("\nsparkds = \"{version}\"\n")),
        "{manifest}"
    );
    let ci = project.read(".github/workflows/ci.yml");
    assert!(
        ci.contains("/.github/workflows/native-datasource.yml@")
            && ci.contains(&format!(" # v{version}\n"))
            && ci.contains(&format!("sparkds-install: \"cargo-sparkds@{version}\"")),
        "{ci}"
    );
}

/// A project from a checkout says, in its workflow and its README, that CI needs a `git:` or
/// `version:` SDK and how to point `Cargo.toml` at one, and no file of its CI holds a path of
/// the machine that generated it.
#[test]
fn a_path_sdk_project_says_ci_needs_a_released_sdk_and_its_ci_holds_no_local_path() {
    let checkout = "/opt/checkouts/spark-datasource-template";
    let project = Generate::named("from_a_checkout")
        .define("sdk", &format!("path:{checkout}"))
        .project();
    for file in project.tree().lines().filter(|f| f.starts_with(".github/")) {
        assert!(
            !project.read(file).contains(checkout),
            "{file} holds the checkout's path"
        );
    }
    let version = env!("CARGO_PKG_VERSION");
    let ci = project.read(".github/workflows/ci.yml");
    assert!(ci.contains("# CI needs a git: or version: SDK."), "{ci}");
    assert!(
        ci.contains(&format!("# push, make both dependency lines `version = \"{version}\"` (crates.io), or\n"))
            && ci.contains(&format!("# `git = \"https://github.com/sparkds/spark-datasource-template\", tag = \"v{version}\"`, as\n")),
        "{ci}"
    );
    let readme = project.read("README.md");
    assert!(
        readme.contains("**CI needs a `git:` or `version:` SDK**")
            && readme.contains(&format!("make both dependency lines `version = \"{version}\"` (crates.io), or `git = \"https://github.com/sparkds/spark-datasource-template\", tag = \"v{version}\"`")),
        "{readme}"
    );
    // The project itself still builds from the checkout, where it was generated.
    assert!(project.read("Cargo.toml").contains(checkout));
}

#[test]
fn a_batch_reader_without_pushdowns_for_one_platform() {
    let project = Generate::named("plain_reader")
        .define("pushdowns", "")
        .define("platforms", "linux-x86_64")
        .project();
    check(&project);
}

#[test]
fn a_batch_reader_with_a_limit_pushdown_for_two_platforms() {
    let project = Generate::named("limited_reader")
        .define("pushdowns", "push_limit")
        .define("platforms", "linux-aarch64,osx-aarch64")
        .project();
    check(&project);
}

/// `push_filters`, the filter pushdown extension: the sample accepts the conditions on `id`,
/// and `cargo sparkds show --where` shows what it accepted and the rows Spark would get.
#[test]
fn a_batch_reader_with_filter_pushdown() {
    let project = Generate::named("filtering_reader")
        .define("pushdowns", "push_limit,prune_columns,push_filters")
        .define("platforms", "linux-x86_64")
        .project();
    check(&project);
    let condition = "id >= 2 AND id IN (1, 3, 4, 6) AND label IS NOT NULL";
    let (shown, _) = project.cargo_printed(&["sparkds", "show", "--where", condition, "end=8"]);
    insta::assert_snapshot!("show_where", shown.trim_end());
}

#[test]
fn a_micro_batch_reader() {
    let project = Generate::named("stream_reader")
        .define("capabilities", "micro_batch_read")
        .define("platforms", "linux-x86_64,windows-x86_64")
        .project();
    check(&project);
}

#[test]
fn a_batch_writer() {
    let project = Generate::named("batch_writer")
        .define("capabilities", "batch_write")
        .define("platforms", "osx-x86_64,osx-aarch64")
        .project();
    check(&project);
}

#[test]
fn a_batch_writer_that_truncates() {
    let project = Generate::named("overwriter")
        .define("capabilities", "batch_write,truncate")
        .define("platforms", "linux-x86_64")
        .project();
    check(&project);
}

#[test]
fn a_streaming_writer() {
    let project = Generate::named("stream_writer")
        .define("capabilities", "streaming_write")
        .define("platforms", "linux-x86_64")
        .project();
    check(&project);
}

#[test]
fn every_capability_together() {
    let project = Generate::named("everything")
        .define(
            "capabilities",
            "batch_read,micro_batch_read,batch_write,streaming_write,truncate",
        )
        .project();
    check(&project);
    assert_bench_runs_every_protocol(&project);
}

/// `cargo sparkds bench` on a few rows of each protocol of the sample, through the C interface
/// and in process, so that it cannot rot; the figures come from benchmark runs, not from here.
fn assert_bench_runs_every_protocol(project: &Project) {
    let measures = |args: &[&str]| -> Vec<serde_json::Value> {
        let mut all = vec!["sparkds", "bench", "--profile", "dev", "--json"];
        all.extend_from_slice(args);
        let (printed, _) = project.cargo_printed(&all);
        let report: serde_json::Value = serde_json::from_str(&printed)
            .unwrap_or_else(|e| panic!("bench --json printed no JSON ({e}):\n{printed}"));
        assert_eq!(report["reference"], true, "{printed}");
        report["measures"].as_array().expect("measures").clone()
    };
    let how = |m: &serde_json::Value| {
        (
            m["protocol"].as_str().unwrap_or_default().to_string(),
            m["checks"].as_bool().unwrap_or_default(),
            m["in_process"].as_bool().unwrap_or_default(),
            m["rows"].as_u64().unwrap_or_default(),
        )
    };
    // The batch read, each way: the same rows, in process too.
    let read: Vec<_> = measures(&["--protocol", "batch-read", "end=5000", "batch_rows=1000"])
        .iter()
        .map(how)
        .collect();
    let batch_read = |checks, in_process| ("batch-read".to_string(), checks, in_process, 5000);
    assert_eq!(
        read,
        vec![
            batch_read(true, false),
            batch_read(false, false),
            batch_read(false, true)
        ]
    );
    // Three micro-batches of 100 rows.
    let stream: Vec<_> = measures(&[
        "--protocol",
        "micro-batch-read",
        "--micro-batches",
        "3",
        "rows_per_micro_batch=100",
    ])
    .iter()
    .map(how)
    .collect();
    assert_eq!(stream.len(), 3, "{stream:?}");
    assert!(stream.iter().all(|m| m.3 == 300), "{stream:?}");
    // The batch write, through the interface and in process, into a table of the test's own,
    // which `--scratch` lets bench write into.
    let table = project.dir.join("bench-table");
    let path = format!("path={}", table.display());
    let write: Vec<_> = measures(&[
        "--protocol",
        "batch-write",
        "--scratch",
        "--write-rows",
        "3000",
        "--write-batch-rows",
        "1000",
        &path,
    ])
    .iter()
    .map(how)
    .collect();
    let batch_write = |in_process| ("batch-write".to_string(), false, in_process, 3000);
    assert_eq!(write, vec![batch_write(false), batch_write(true)]);
    // Both writes committed: two tasks each, 6000 rows in four published files.
    let manifest: serde_json::Value =
        serde_json::from_str(&project.read("bench-table/_table.json")).expect("a manifest");
    let files = manifest["files"].as_array().expect("files");
    assert_eq!(files.len(), 4, "{manifest}");
    let rows: usize = files
        .iter()
        .map(|f| project.read(&format!("bench-table/{}", f.as_str().unwrap_or_default())))
        .map(|text| text.lines().count())
        .sum();
    assert_eq!(rows, 6000);
}

#[test]
fn pushdowns_without_a_batch_reader_are_not_used() {
    let project = Generate::named("stream_with_pushdowns")
        .define("capabilities", "micro_batch_read,streaming_write")
        .define("pushdowns", "push_limit,prune_columns")
        .define("platforms", "linux-x86_64")
        .project();
    check(&project);
}

mod invalid_answers {
    use super::Generate;

    #[test]
    fn a_name_that_does_not_start_with_a_letter_is_refused() {
        let printed = Generate::named("9lives").refused();
        assert!(
            printed.contains(
                "the data source name \"9lives\" is not valid: it must start with a lower-case \
                 letter and contain only a-z, 0-9 and _"
            ),
            "{printed}"
        );
    }

    #[test]
    fn no_capability_is_refused() {
        let printed = Generate::named("nothing")
            .define("capabilities", "")
            .refused();
        assert!(
            printed.contains("choose at least one capability that reads or writes"),
            "{printed}"
        );
    }

    #[test]
    fn truncate_without_a_writer_is_refused() {
        let printed = Generate::named("truncating_reader")
            .define("capabilities", "batch_read,truncate")
            .refused();
        assert!(
            printed.contains(
                "the capability truncate declares that a writer can overwrite: add batch_write \
                 or streaming_write"
            ),
            "{printed}"
        );
    }

    #[test]
    fn a_capability_that_the_kind_does_not_support_is_refused() {
        let printed = Generate::named("writing_api")
            .define("kind", "http_api")
            .define("capabilities", "batch_read,batch_write")
            .refused();
        assert!(
            printed.contains(
                "the kind http_api reads a paged JSON API and supports the capability \
                 batch_read only, not batch_write: drop it, for example -d capabilities=batch_read"
            ),
            "{printed}"
        );
    }

    #[test]
    fn no_platform_is_refused() {
        let printed = Generate::named("nowhere").define("platforms", "").refused();
        assert!(
            printed.contains("choose at least one platform to build for"),
            "{printed}"
        );
    }

    #[test]
    fn no_sdk_is_refused_with_its_three_forms() {
        let printed = Generate::named("nowhere_from").define("sdk", "").refused();
        assert!(
            printed.contains(
                "say where the spark-datasource crate comes from with -d sdk=...: path:<checkout \
                 of spark-datasource-template>"
            ) && printed.contains("git:<repository url>#<tag>")
                && printed.contains("version:<x.y.z> (crates.io)"),
            "{printed}"
        );
    }

    #[test]
    fn an_sdk_of_an_unknown_kind_without_a_tag_or_of_an_inexact_version_is_refused() {
        let printed = Generate::named("svn_source")
            .define("sdk", "svn:https://example.org/repo")
            .refused();
        assert!(
            printed
                .contains("the sdk \"svn:https://example.org/repo\" has the unknown kind \"svn\""),
            "{printed}"
        );
        let printed = Generate::named("untagged")
            .define("sdk", "git:https://example.org/repo.git")
            .refused();
        assert!(
            printed.contains("names no tag: write git:<repository url>#<tag>"),
            "{printed}"
        );
        // CI calls the workflows of the tag v<version>: a range names no tag.
        let printed = Generate::named("inexact")
            .define("sdk", "version:0.1")
            .refused();
        assert!(
            printed.contains(
                "the sdk \"version:0.1\" is not an exact version: write \
                 version:<major>.<minor>.<patch>, for example version:0.1.0"
            ),
            "{printed}"
        );
    }

    #[test]
    fn an_unknown_capability_is_refused() {
        let printed = Generate::named("typo")
            .define("capabilities", "batch_reed")
            .refused();
        assert!(
            printed.contains("\"batch_reed\"")
                && printed.contains("is not a valid value for capabilities"),
            "{printed}"
        );
    }
}

/// cargo-generate renders only the files that `include` lists (with `${{ }}` of workflows and
/// `{{` in code safe everywhere else): they must be exactly the `.liquid` files.
#[test]
fn exactly_the_liquid_files_are_rendered() {
    let template = helpers::repo_root().join("template");
    let config = std::fs::read_to_string(template.join("cargo-generate.toml")).expect("config");
    let include = config
        .split("include = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("an include list");
    let mut included: Vec<String> = include
        .split(',')
        .map(|entry| {
            entry
                .trim()
                .trim_matches('"')
                .trim_start_matches('/')
                .to_string()
        })
        .filter(|entry| !entry.is_empty())
        .collect();
    included.sort();
    let mut liquid = Vec::new();
    let mut pending = vec![template.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if let Some(rendered) = path.to_string_lossy().strip_suffix(".liquid") {
                let relative = std::path::Path::new(rendered)
                    .strip_prefix(&template)
                    .expect("under the template")
                    .to_string_lossy()
                    .replace('\\', "/");
                liquid.push(relative);
            }
        }
    }
    liquid.sort();
    assert_eq!(included, liquid);
}

/// `spark_datasource.h` compiles without a warning as C11 and as C++17, as a C or C++ data
/// source includes it.
#[test]
fn the_header_compiles_cleanly_as_c11_and_cpp17() {
    let header_dir = helpers::repo_root().join("crates").join("spark-datasource");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let source = "#include \"spark_datasource.h\"\n\
                  int main(void) {\n\
                    return (int)(sizeof(SparkDsLibrary) + sizeof(SparkDsHost)\n\
                      + sizeof(SparkDsCreateInfo) + sizeof(SparkDsTaskContext)\n\
                      + sizeof(SparkDsWriteInfo) + sizeof(struct ArrowArrayStream) == 0);\n\
                  }\n";
    for (compiler, env, standard, file) in [
        ("cc", "CC", "-std=c11", "header.c"),
        ("c++", "CXX", "-std=c++17", "header.cpp"),
    ] {
        let path = dir.path().join(file);
        std::fs::write(&path, source).expect("write the source");
        let compiler = std::env::var(env).unwrap_or_else(|_| compiler.to_string());
        let output = std::process::Command::new(&compiler)
            .args([
                standard,
                "-Wall",
                "-Wextra",
                "-pedantic",
                "-Werror",
                "-c",
                "-o",
            ])
            .arg(dir.path().join(format!("{file}.o")))
            .arg("-I")
            .arg(&header_dir)
            .arg(&path)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {compiler} (set {env}): {e}"));
        assert!(
            output.status.success(),
            "{compiler} {standard} rejected spark_datasource.h:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
