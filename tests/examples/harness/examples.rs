//! The examples of `examples/`. Each Rust example holds only its own code, depends on the
//! crates of this repository by path and is a member of its workspace, so `cargo test
//! --workspace` runs its tests; these tests check that shape, lint the Rust examples, build
//! c_range with the system C compiler and check it with `cargo sparkds`, and run the examples
//! on real Spark (`tests/examples/spark`).
//!
//! This file is not `tests/examples/main.rs`: cargo would also take that for an example target
//! of the `tests` package (its `examples/` folder), and fail to build it without a `main`.

mod helpers;
#[allow(dead_code)]
#[path = "../../support/checked.rs"]
mod support_checked;

use std::path::Path;
use std::process::Command;

use helpers::{
    cargo, checked, entries, example_dirs, examples_target, package, package_name, repo_root,
    rust_examples,
};

/// What a project generated from the template no longer holds, and an example must not
/// either: the SDK, the tool and the bridge come from `crates/` and `python/`, and the header
/// from `crates/spark-datasource`, once for the whole repository.
const COPIES: &[(&str, &str)] = &[
    (
        "spark_datasource.h",
        "the header is crates/spark-datasource/spark_datasource.h",
    ),
    ("sparkds", "the tool is crates/sparkds"),
    ("python", "the bridge is python/"),
    ("src/abi", "the C interface is the crate spark-datasource"),
    ("src/api", "the traits are the crate spark-datasource"),
    (".cargo", "`cargo sparkds` is installed, not an alias"),
    ("Cargo.lock", "a workspace member uses the root Cargo.lock"),
];

#[test]
fn every_rust_example_is_a_member_of_the_workspace() {
    let examples = rust_examples();
    assert!(!examples.is_empty(), "examples/ holds no Rust example");
    let members: Vec<&str> = helpers::metadata()["workspace_members"]
        .as_array()
        .expect("cargo metadata lists the workspace members")
        .iter()
        .filter_map(|id| id.as_str())
        .collect();
    let missing: Vec<String> = examples
        .iter()
        .filter(|example| {
            package(&example.manifest).is_none_or(|package| {
                !members.contains(&package["id"].as_str().unwrap_or_default())
            })
        })
        .map(|example| format!("\"examples/{}\"", example.dir))
        .collect();
    assert!(
        missing.is_empty(),
        "add {} to `members` in the root Cargo.toml: an example that is not a member is \
         neither built nor tested by `cargo test --workspace`",
        missing.join(", ")
    );
}

#[test]
fn no_example_holds_a_copy_of_the_sdk_the_tool_the_bridge_or_the_header() {
    let mut copies = Vec::new();
    for dir in example_dirs() {
        let name = dir
            .file_name()
            .expect("a directory has a name")
            .to_string_lossy()
            .to_string();
        let present: Vec<&str> = COPIES
            .iter()
            .filter(|(path, _)| dir.join(path).exists())
            .map(|(path, _)| *path)
            .collect();
        for (path, instead) in COPIES.iter().filter(|(p, _)| present.contains(p)) {
            copies.push(format!("examples/{name}/{path} ({instead})"));
        }
        // Deeper copies too: the header or the bridge's package under any other folder.
        for entry in entries(&dir) {
            let inside_a_copy = present
                .iter()
                .any(|p| entry == *p || entry.starts_with(&format!("{p}/")));
            let file = entry.rsplit('/').next().unwrap_or(&entry);
            if !inside_a_copy && matches!(file, "spark_datasource.h" | "spark_native_bridge") {
                copies.push(format!("examples/{name}/{entry}"));
            }
        }
    }
    assert!(
        copies.is_empty(),
        "the examples hold copies of what the repository has once; remove them (`git rm -r`) \
         and use the original by path:\n  {}",
        copies.join("\n  ")
    );
}

#[test]
fn every_rust_example_depends_on_the_crates_of_this_repository_by_path() {
    let crates = repo_root().join("crates");
    let mut wrong = Vec::new();
    for example in rust_examples() {
        let package = package(&example.manifest).unwrap_or_else(|| {
            panic!(
                "examples/{} is not a member of the workspace: add it to `members` in the root \
                 Cargo.toml",
                example.dir
            )
        });
        for (name, kind) in [("spark-datasource", None), ("sparkds", Some("dev"))] {
            let expected = crates.join(name);
            let found = package["dependencies"]
                .as_array()
                .expect("a package lists its dependencies")
                .iter()
                .find(|d| d["name"] == name && d["kind"].as_str() == kind);
            let by_path = found
                .and_then(|d| d["path"].as_str())
                .and_then(|path| Path::new(path).canonicalize().ok());
            if by_path != expected.canonicalize().ok() {
                let table = if kind.is_some() {
                    "[dev-dependencies]"
                } else {
                    "[dependencies]"
                };
                wrong.push(format!(
                    "examples/{}/Cargo.toml: {table} needs `{name} = {{ path = \
                     \"../../crates/{name}\" }}`",
                    example.dir
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Inside this workspace `spark-datasource` always has the feature `filter-evaluation`, whatever
/// an example declares: `examples/text_files`, a member, turns it on, and cargo unifies features
/// across the members. An example whose library calls `filters::evaluate` or `filters::filter_batch` must
/// declare it, or it stops building once copied out (the book's "Filter pushdown").
#[test]
fn an_example_whose_library_evaluates_filters_turns_the_feature_on() {
    let mut wrong = Vec::new();
    for example in rust_examples() {
        let dir = example
            .manifest
            .parent()
            .expect("a manifest has a directory");
        let calls = entries(&dir.join("src"))
            .into_iter()
            .filter(|file| file.ends_with(".rs"))
            .filter_map(|file| std::fs::read_to_string(dir.join("src").join(&file)).ok())
            .any(|text| {
                text.contains("spark_datasource::filters")
                    && (text.contains("filter_batch(") || text.contains("evaluate("))
            });
        if !calls {
            continue;
        }
        let declared = package(&example.manifest)
            .and_then(|package| package["dependencies"].as_array())
            .and_then(|dependencies| {
                dependencies
                    .iter()
                    .find(|d| d["name"] == "spark-datasource" && d["kind"].is_null())
            })
            .and_then(|dependency| dependency["features"].as_array())
            .is_some_and(|features| features.iter().any(|f| f == "filter-evaluation"));
        if !declared {
            wrong.push(format!(
                "examples/{}: src/ calls `filters::evaluate` or `filters::filter_batch`: add \
                 `features = [\"filter-evaluation\"]` to its `spark-datasource` dependency",
                example.dir
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_rust_example_names_its_capabilities_in_one_export_line_and_has_no_features() {
    let mut wrong = Vec::new();
    for example in rust_examples() {
        let lib = example
            .manifest
            .parent()
            .expect("a manifest has a directory")
            .join("src")
            .join("lib.rs");
        let text = std::fs::read_to_string(&lib).unwrap_or_default();
        match helpers::exported_names(&text) {
            Ok(names) if !names.is_empty() => {}
            Ok(_) => wrong.push(format!(
                "examples/{}/src/lib.rs: the `export!` line names no capability",
                example.dir
            )),
            Err(e) => wrong.push(format!(
                "examples/{}/src/lib.rs: {e}; export the source with \
                 `spark_datasource::export!(connector::Source: batch_read, ...);`",
                example.dir
            )),
        }
        // Capabilities are the export line's, not Cargo features: features unify across the
        // workspace, so one example's choice would leak into the others.
        let features = package(&example.manifest).map(|p| &p["features"]);
        if features
            .and_then(|f| f.as_object())
            .is_some_and(|f| !f.is_empty())
        {
            wrong.push(format!(
                "examples/{}/Cargo.toml: remove `[features]`; name the capabilities in the \
                 `export!` line of src/lib.rs",
                example.dir
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_rust_examples_pass_fmt_and_clippy_without_warnings() {
    let mut packages = Vec::new();
    for example in rust_examples() {
        packages.push("-p".to_string());
        packages.push(package_name(&example));
    }
    let packages: Vec<&str> = packages.iter().map(String::as_str).collect();
    let fmt = [&["fmt", "--check"][..], &packages].concat();
    let clippy = [
        &["clippy", "--quiet", "--all-targets"][..],
        &packages,
        &["--", "-D", "warnings"],
    ]
    .concat();
    let failures: Vec<String> = [fmt, clippy]
        .iter()
        .filter_map(|args| cargo(args).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn c_range_builds_with_the_system_c_compiler_and_passes_the_sparkds_check() {
    // Built into a directory of its own, so that the Spark suite, which builds c_range in
    // place, can run at the same time.
    let out = tempfile::tempdir().expect("a temporary directory");
    let library = out
        .path()
        .join(sparkds::library_file_name("spark_datasource_c_range"));
    let make = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(repo_root().join("examples").join("c_range"))
        .arg(format!("LIBRARY={}", library.display()))
        .output()
        .expect(
            "make runs (install make and a C compiler, such as `apt-get install build-essential`)",
        );
    if let Err(e) = checked("make -C examples/c_range", make) {
        panic!("{e}");
    }

    let sparkds = sparkds::sparkds_binary().expect("cargo-sparkds builds");
    let check = Command::new(&sparkds)
        .arg("check")
        .arg("--lib")
        .arg(&library)
        .output()
        .expect("cargo-sparkds runs");
    let report = match checked(
        "cargo sparkds check --lib libspark_datasource_c_range",
        check,
    ) {
        Ok(output) => String::from_utf8_lossy(&output.stdout).to_string(),
        Err(e) => panic!("{e}"),
    };
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"(?m)^sparkds check .*$", "sparkds check [library]");
    settings.bind(|| insta::assert_snapshot!(report));
}

#[test]
fn the_examples_run_on_real_spark_through_the_bridge() {
    // The pytest suite of tests/examples/spark, on the session of the Spark suite and the
    // bridge of python/: it fails, rather than skips, without pyspark and Java
    // (`pip install -r tests/spark/requirements.txt`).
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let output = support_checked::output_again_on_worker_timeout(
        Command::new(&python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(repo_root().join("tests").join("examples").join("spark"))
            .env("CARGO_TARGET_DIR", examples_target()),
    );
    assert!(
        output.status.success(),
        "the examples failed on Spark (pytest tests/examples/spark):\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_text_files_comparison_with_sparks_readers_runs_small_and_prints_its_figures() {
    // examples/text_files/bench/compare.py on about 3 MB a table, one round, with the dev
    // builds of the library and of the JVM plugin: the command of the book's figures, which
    // fails when the readers' answers or inferred schemas differ.
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let script = repo_root()
        .join("examples")
        .join("text_files")
        .join("bench")
        .join("compare.py");
    let output = Command::new(&python)
        .arg(&script)
        .args(["--small", "--profile", "dev"])
        .env("CARGO_TARGET_DIR", examples_target())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.to_string_lossy()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "compare.py --small failed:\n{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{stdout}");
    // A row for each format, schema and query, each with a speed-up.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| csv |") || l.starts_with("| jsonl |"))
        .collect();
    assert_eq!(rows.len(), 2 * 2 * 3 + 2, "{stdout}");
    assert!(rows.iter().all(|r| r.contains('.')), "{stdout}");
}
