//! Tests: book. The mdBook in `book/` builds without a warning, every `{{#include}}` and every
//! internal link resolves, and the tutorial's commands run as written.
//!
//! Conventions of the book that these tests rely on:
//! - In the chapters under `book/src/tutorial/`, a ```` ```sh ```` block is a command the reader
//!   runs, and the test runs it, as written (see `helpers/tutorial.rs`). A command that cannot
//!   run here (it needs the network beyond package registries, a Spark 4.4 cluster, an
//!   interactive terminal or a push to GitHub, or it installs a tool on the reader's machine) is
//!   fenced ```` ```console ```` instead, and is only shown.
//! - Code is never pasted into the book: it is included with `{{#include}}` from files that
//!   compile and are tested, in the crates, in the template or under `book/src/tutorial/files/`, whose
//!   files the tutorial copies into its generated project, where they are compiled and tested.
//!   What the book quotes of the tools is checked against them: the compile errors of the export
//!   line against rustc, in the tutorial's project; the `Cargo.toml` diffs of an upgrade against
//!   what the template renders; the version warning against `cargo sparkds`.
//!
//! Needs: `mdbook` on `PATH` (or named by `$MDBOOK`), which `book/install-tools.sh` installs at
//! the version the book is written for; and, for the tutorial, what its reader needs: Linux on
//! x86_64, cargo-generate, crates.io, a C compiler, and Python 3 with pyspark (4.0 to 4.3) and
//! pyarrow on a Java that pyspark runs on. The tutorial's projects build in
//! `<repo>/target/book`.

mod errors;
mod helpers;
mod rules;

use std::path::{Path, PathBuf};
use std::process::Command;

use helpers::tutorial;

/// The `mdbook` to run.
fn mdbook() -> PathBuf {
    std::env::var_os("MDBOOK")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("mdbook"))
}

/// The book is built with the mdbook that `book/install-tools.sh` installs, which the book's
/// own install instructions name too.
#[test]
fn the_book_is_built_with_the_mdbook_that_install_tools_pins() {
    let script = std::fs::read_to_string(helpers::book_dir().join("install-tools.sh"))
        .expect("book/install-tools.sh is readable");
    let pinned = script
        .lines()
        .find_map(|line| line.strip_prefix("MDBOOK_VERSION="))
        .expect("install-tools.sh sets MDBOOK_VERSION");
    let output = Command::new(mdbook())
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run mdbook ({e}): install it with book/install-tools.sh")
        });
    let version = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        version.trim(),
        format!("mdbook v{pinned}"),
        "run book/install-tools.sh"
    );
    let install = std::fs::read_to_string(helpers::book_dir().join("src/tutorial/install.md"))
        .expect("the install page is readable");
    assert!(
        install.contains(&format!("--version {pinned}")),
        "book/src/tutorial/install.md pins another mdbook than install-tools.sh ({pinned})"
    );
}

#[test]
fn the_book_builds_without_a_warning() {
    let out = tempfile::tempdir().expect("a temporary directory");
    let output = Command::new(mdbook())
        .arg("build")
        .arg(helpers::book_dir())
        .arg("--dest-dir")
        .arg(out.path())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run mdbook ({e}): install it with book/install-tools.sh")
        });
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "mdbook build failed:\n{printed}");
    let complaints: Vec<&str> = printed
        .lines()
        .filter(|line| line.contains("WARN") || line.contains("ERROR"))
        .collect();
    assert!(
        complaints.is_empty(),
        "mdbook build warned:\n{}",
        complaints.join("\n")
    );
    for chapter in helpers::summary_paths() {
        let page = out.path().join(chapter.with_extension("html"));
        assert!(page.is_file(), "no page {} was built", page.display());
    }
    // A link to a file that is not a chapter (the tutorial's finished files) is a download:
    // the published book must serve that file.
    let mut downloads = 0;
    for chapter in helpers::chapters() {
        for link in helpers::links(&chapter.text) {
            let path = link.target.split('#').next().unwrap_or_default();
            if path.is_empty() || link.target.contains("://") || path.ends_with(".md") {
                continue;
            }
            let served = out
                .path()
                .join(chapter.path.parent().unwrap_or(Path::new("")))
                .join(path);
            assert!(
                served.is_file(),
                "{}:{}: the built book has no {} to download",
                chapter.path.display(),
                link.line,
                served.display()
            );
            downloads += 1;
        }
    }
    assert!(
        downloads >= 5,
        "the tutorial's finished files are not linked for download"
    );
}

#[test]
fn summary_lists_every_chapter_once() {
    let listed = helpers::summary_paths();
    let mut sorted = listed.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), listed.len(), "a chapter is listed twice");
    assert_eq!(
        sorted,
        helpers::markdown_files(),
        "SUMMARY.md and the .md files of book/src differ"
    );
}

#[test]
fn every_include_resolves() {
    let mut problems = Vec::new();
    let mut count = 0;
    for chapter in helpers::chapters() {
        for include in helpers::includes(&chapter.text) {
            count += 1;
            let at = format!("{}:{}", chapter.path.display(), include.line);
            let file = chapter.dir().join(&include.path);
            let Ok(text) = std::fs::read_to_string(&file) else {
                problems.push(format!("{at}: no file {}", include.path));
                continue;
            };
            if let Err(problem) = check_selector(&text, &include.selector) {
                problems.push(format!("{at}: {}: {problem}", include.path));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(count > 0, "the book includes no file");
}

/// Checks the part of an include after the path: nothing, a line range, or an anchor.
fn check_selector(text: &str, selector: &str) -> Result<(), String> {
    if selector.is_empty() {
        return Ok(());
    }
    let lines = text.lines().count();
    let number = |s: &str| -> Result<Option<usize>, String> {
        if s.is_empty() {
            Ok(None)
        } else {
            s.parse()
                .map(Some)
                .map_err(|_| format!("`{s}` is not a line number"))
        }
    };
    if selector.chars().all(|c| c.is_ascii_digit() || c == ':') {
        let (start, end) = selector.split_once(':').unwrap_or((selector, selector));
        let (start, end) = (number(start)?, number(end)?);
        for line in [start, end].into_iter().flatten() {
            if line == 0 || line > lines {
                return Err(format!("line {line} is outside the file's {lines} lines"));
            }
        }
        if let (Some(start), Some(end)) = (start, end) {
            if start > end {
                return Err(format!("the range {start}:{end} is empty"));
            }
        }
        return Ok(());
    }
    let start = format!("ANCHOR: {selector}");
    let end = format!("ANCHOR_END: {selector}");
    match (text.find(&start), text.find(&end)) {
        (Some(s), Some(e)) if s < e => Ok(()),
        _ => Err(format!("no anchor `{selector}` (ANCHOR / ANCHOR_END)")),
    }
}

#[test]
fn every_internal_link_and_image_resolves() {
    let mut problems = Vec::new();
    for chapter in helpers::chapters() {
        for link in helpers::links(&chapter.text) {
            let at = format!("{}:{}", chapter.path.display(), link.line);
            if let Err(problem) = check_link(&chapter, &link.target) {
                problems.push(format!("{at}: `{}`: {problem}", link.target));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn check_link(chapter: &helpers::Chapter, target: &str) -> Result<(), String> {
    if target.is_empty() {
        return Err("an empty link".into());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return Ok(()); // external: not checked, no network
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        chapter.file()
    } else {
        chapter.dir().join(path)
    };
    if !file.is_file() {
        return Err(format!("no file {}", file.display()));
    }
    if path.ends_with(".html") {
        return Err("link to the .md file, which mdBook turns into .html".into());
    }
    if !anchor.is_empty() {
        if file.extension().is_none_or(|e| e != "md") {
            return Err("an anchor into a file that is not a chapter".into());
        }
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let anchors = helpers::heading_anchors(&text);
        if !anchors.iter().any(|a| a == anchor) {
            return Err(format!(
                "no heading with the anchor #{anchor} ({anchors:?})"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_image_is_a_hand_written_svg_that_needs_no_network() {
    let diagrams = helpers::src_dir().join("diagrams");
    let mut count = 0;
    for entry in std::fs::read_dir(&diagrams).expect("book/src/diagrams") {
        let path = entry.expect("an entry").path();
        assert!(
            path.extension().is_some_and(|e| e == "svg"),
            "{} is not an SVG",
            path.display()
        );
        let svg = std::fs::read_to_string(&path).expect("a readable SVG");
        assert!(svg.contains("<svg") && svg.trim_end().ends_with("</svg>"));
        for reference in ["href=\"http", "url(http", "@import"] {
            assert!(
                !svg.contains(reference),
                "{} loads {reference}...",
                path.display()
            );
        }
        count += 1;
    }
    assert!(count >= 3, "the three diagrams are missing");
}

#[test]
fn the_tutorial_fences_are_sh_console_or_not_commands() {
    for chapter in helpers::chapters()
        .into_iter()
        .filter(|c| c.path.starts_with("tutorial"))
    {
        for fence in helpers::fences(&chapter.text) {
            assert!(
                !matches!(fence.info.as_str(), "bash" | "shell" | "shell-session" | ""),
                "{}:{}: fence a command `sh` (the test runs it) or `console` (shown only), \
                 and anything else with its language",
                chapter.path.display(),
                fence.line
            );
        }
    }
}

/// The tutorial's commands, then, in the project they built, the compile errors that the book
/// quotes (which need a built project, and so run here).
#[test]
fn the_tutorial_commands_run_as_written() {
    let blocks = tutorial::blocks();
    assert!(blocks.len() > 5, "the tutorial has almost no command");
    // The project's builds go to target/generated, the checkout's to this repository's target
    // directory: so the dependencies are built once for every run, as on a reader's machine
    // after the first.
    let scratch = tutorial::Scratch::make();
    let project_target = helpers::repo_root().join("target").join("generated");
    std::fs::create_dir_all(&project_target).expect("create target/generated");
    std::fs::create_dir_all(helpers::book_target()).expect("create target/book");
    // The script runs in the scratch directory; the log stays in target/book when the test
    // fails, named after this process, so that runs at the same time do not mix their logs.
    let script_path = scratch.path().join("tutorial.sh");
    std::fs::write(&script_path, tutorial::script(&blocks)).expect("write the script");
    let log_path = helpers::book_target().join(format!("tutorial-{}.log", std::process::id()));
    let log = std::fs::File::create(&log_path).expect("create the log");

    let mut command = Command::new("bash");
    command
        .arg(&script_path)
        .current_dir(scratch.path())
        .env("BOOK_SCRATCH", scratch.path())
        .env("BOOK_PROJECTS", tutorial::PROJECTS.join(" "))
        .env("BOOK_PROJECT_TARGET", &project_target)
        // The reader's environment: no target directory or flags of this test suite.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_FORCE_PASS")
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().expect("the log"))
        .stderr(log);
    // The tools that the install chapter installs: `cargo sparkds`, and cargo-insta.
    let mut tools = vec![tutorial::cargo_sparkds_dir()];
    tools.extend(tutorial::cargo_insta_path());
    command.env("PATH", tutorial::prepend_paths(&tools));
    let status = command.status().expect("bash runs");
    let printed = std::fs::read_to_string(&log_path).unwrap_or_default();
    if !status.success() {
        let block = printed
            .lines()
            .filter_map(|l| l.strip_prefix(">>> book block "))
            .map(|l| l.split(" at ").next().unwrap_or(l))
            .next_back()
            .unwrap_or("(before the first block)");
        let tail: Vec<&str> = printed.lines().rev().take(60).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        panic!(
            "the tutorial's block at {block} failed ({status}); the full log is {}:\n{}",
            log_path.display(),
            tail.join("\n")
        );
    }
    assert!(printed.contains(">>> book tutorial finished"));
    let _ = std::fs::remove_file(&log_path);
    // Where the time went, block by block (the blocks' start times), for the next run to read.
    let times: String = printed
        .lines()
        .filter(|l| l.starts_with(">>> book "))
        .map(|l| format!("{l}\n"))
        .collect();
    let _ = std::fs::write(helpers::book_target().join("tutorial-times.txt"), times);
    tutorial::check_quoted_compile_errors(&scratch.path().join(tutorial::PROJECT));
}

/// The tutorial's listings are the template's files with the tutorial's changes: every line of
/// the template's file is in the listing, except the lines that the tutorial changes. When the
/// template changes one of these files, this test names the lines to carry over.
#[test]
fn the_tutorial_listings_follow_the_template() {
    let pairs: [(&str, &str, &[&str]); 3] = [
        (
            "lib.rs",
            "template/src/lib.rs.liquid",
            // The tutorial's export line adds push_limit and push_filters.
            &["spark_datasource::export!(connector::Source: {{ export_names }});"],
        ),
        (
            "read.rs",
            "template/src/connector/read.rs",
            &[
                "const OPTIONS: &[&str] = &[\"end\", \"num_partitions\", \"batch_rows\", \"path\"];",
                // The labels take the tutorial's prefix.
                "                    parts.push(sample::batches(rows, &self.scan.read, self.batch_rows)?);",
            ],
        ),
        (
            "sample.rs",
            "template/src/connector/sample.rs",
            &[
                // The tutorial's column.
                "use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray};",
                // The labels take the tutorial's prefix.
                "/// it), in batches of at most `batch_rows`.",
                "pub fn batches(range: RowRange, schema: &SchemaRef, batch_rows: u64) -> Result<Batches> {",
                "        batch(&batch_schema, start..end)",
                "/// One batch of the rows `ids`.",
                "fn batch(schema: &SchemaRef, ids: Range<u64>) -> Result<RecordBatch> {",
                "                \"label\" => labels(ids.clone()),",
                "/// The labels of rows `ids`: `row <id>`, or null in every third row. All the bytes go into one",
                "fn labels(ids: Range<u64>) -> Result<ArrayRef> {",
                "    let mut values: Vec<u8> = Vec::with_capacity(rows * \"row 0000000\".len());",
                "    let mut label = format!(\"row {}\", ids.start).into_bytes();",
                "        count_up(&mut label, \"row \".len());",
                "        let sizes: Vec<usize> = batches(RowRange { start: 0, end: 10 }, &ids, 4)?",
                "        let written = batches(RowRange { start: 4, end: 9 }, &schema, 10)?;",
            ],
        ),
    ];
    let mut problems = Vec::new();
    for (listing, template, changed) in pairs {
        let listing_path = helpers::book_dir().join("src/tutorial/files").join(listing);
        let listing_text = std::fs::read_to_string(&listing_path).expect("a listing");
        let template_text =
            std::fs::read_to_string(helpers::repo_root().join(template)).expect("a template file");
        let listing_lines: std::collections::HashSet<&str> = listing_text.lines().collect();
        let missing: Vec<&str> = template_text
            .lines()
            .filter(|line| !line.trim_start().starts_with("{%"))
            .filter(|line| !listing_lines.contains(line) && !changed.contains(line))
            .collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{template} has lines that book/src/tutorial/files/{listing} lacks: carry them \
                 over (the tutorial copies the listing over the generated file):\n  {}",
                missing.join("\n  ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The diffs of the upgrade chapter are what the template renders in `Cargo.toml` and
/// `ci.yml`: each `-` line for the crates and workflows of 0.1.0, each `+` line for those of
/// 0.2.0, from crates.io or a tag of a repository on GitHub. `ci.yml` calls the workflows at the
/// commit the template pins, with the template's release in the comment, whatever the `sdk`:
/// the chapter names the commit of each release `<commit of v...>`, and Dependabot moves the
/// commit and the comment together, which the rendering of 0.2.0 does here.
#[test]
fn the_upgrade_diffs_are_what_the_template_renders() {
    let chapter = helpers::chapters()
        .into_iter()
        .find(|c| c.path == std::path::Path::new("abi/template-upgrades.md"))
        .expect("the upgrade chapter");
    let rendered = |sdk: &str, release: &str| -> String {
        let out = tempfile::tempdir().expect("a temporary directory");
        let output = Command::new("cargo")
            .arg("generate")
            .arg("--path")
            .arg(helpers::repo_root().join("template"))
            .args(["--name", "my_source", "--silent", "--vcs", "none"])
            .arg("--destination")
            .arg(out.path())
            .arg("-d")
            .arg(format!("sdk={sdk}"))
            .output()
            .expect("cargo generate runs");
        assert!(
            output.status.success(),
            "cargo generate -d sdk={sdk} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        ["Cargo.toml", ".github/workflows/ci.yml"]
            .map(|file| {
                std::fs::read_to_string(out.path().join("my_source").join(file))
                    .unwrap_or_else(|e| panic!("{file}: {e}"))
            })
            .join("\n")
            .lines()
            .map(|line| match line.split_once(".yml@") {
                Some((call, pin)) if line.trim_start().starts_with("uses: ") => {
                    let (commit, _) = pin.split_once(" # ").expect("the release in a comment");
                    assert!(commit.len() == 40, "a pinned commit: {line}");
                    format!("{call}.yml@<commit of v{release}> # v{release}")
                }
                _ => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let url = "https://github.com/<owner>/<repository>";
    let old = [
        rendered("version:0.1.0", "0.1.0"),
        rendered(&format!("git:{url}#v0.1.0"), "0.1.0"),
    ];
    let new = [
        rendered("version:0.2.0", "0.2.0"),
        rendered(&format!("git:{url}#v0.2.0"), "0.2.0"),
    ];
    let in_any = |tomls: &[String], line: &str| tomls.iter().any(|t| t.lines().any(|l| l == line));
    let mut problems = Vec::new();
    let mut count = 0;
    for fence in helpers::fences(&chapter.text)
        .into_iter()
        .filter(|f| f.info == "diff")
    {
        for line in fence.body.lines() {
            let (tomls, text): (Vec<String>, &str) = match line.split_at(1) {
                ("-", text) => (old.to_vec(), text),
                ("+", text) => (new.to_vec(), text),
                (_, text) => ([old.clone(), new.clone()].concat(), text),
            };
            count += 1;
            if !in_any(&tomls, text) {
                problems.push(format!(
                    "{}:{}: the template renders no line `{text}`",
                    chapter.path.display(),
                    fence.line
                ));
            }
        }
    }
    assert!(count > 0, "the upgrade chapter has no diff");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The version warning that the upgrade chapter shows is the one `cargo sparkds` prints, for
/// a project at `/home/me/my_source` that locks the version the chapter names.
#[test]
fn the_version_warning_is_the_one_cargo_sparkds_prints() {
    let chapter = helpers::chapters()
        .into_iter()
        .find(|c| c.path == std::path::Path::new("abi/template-upgrades.md"))
        .expect("the upgrade chapter");
    let shown = helpers::fences(&chapter.text)
        .into_iter()
        .flat_map(|f| f.body.lines().map(str::to_string).collect::<Vec<_>>())
        .find_map(|line| line.strip_prefix("warning: ").map(str::to_string))
        .expect("the chapter shows the warning");
    let locked = shown
        .split_once("locks spark-datasource ")
        .and_then(|(_, rest)| rest.split_once(':'))
        .map(|(version, _)| version.to_string())
        .expect("the warning names the locked version");
    let home = tempfile::tempdir().expect("a temporary directory");
    let project = home.path().join("my_source");
    std::fs::create_dir_all(&project).expect("a project directory");
    std::fs::write(
        project.join("Cargo.lock"),
        format!(
            "version = 4\n\n[[package]]\nname = \"spark-datasource\"\nversion = \"{locked}\"\n"
        ),
    )
    .expect("write Cargo.lock");
    let printed = sparkds::version::mismatch(&project)
        .expect("a warning")
        .replace(&home.path().display().to_string(), "/home/me");
    assert_eq!(
        shown,
        printed,
        "the chapter shows another warning than cargo sparkds {} prints",
        sparkds::version::VERSION
    );
}

/// Every install instruction of the book pins the cargo-generate that the repository tests with,
/// the one of the README and `.ci/install` (the mdbook of `book/install-tools.sh` has its own
/// test above).
#[test]
fn the_book_installs_the_cargo_generate_of_the_readme() {
    let root = helpers::repo_root();
    let read = |relative: &str| {
        std::fs::read_to_string(root.join(relative))
            .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
    };
    let readme = read("README.md");
    let install = read("book/src/tutorial/install.md");
    let generate = "cargo install cargo-generate@";
    let version_after = |text: &str, prefix: &str| {
        text.split(prefix)
            .nth(1)
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect::<String>()
            })
            .filter(|v| !v.is_empty())
    };
    let pinned = version_after(&readme, generate).expect("the README pins cargo-generate");
    assert!(
        read(".ci/install").contains(&format!("{generate}{pinned} ")),
        ".ci/install does not install cargo-generate {pinned}, which the README names"
    );
    for chapter in helpers::markdown_files() {
        let text = std::fs::read_to_string(helpers::src_dir().join(&chapter)).expect("a chapter");
        for line in text
            .lines()
            .filter(|l| l.contains("cargo install cargo-generate"))
        {
            assert!(
                line.contains(&format!("{generate}{pinned} ")) && line.contains("--locked"),
                "{}: `{line}` must install cargo-generate {pinned}, --locked, as the README does",
                chapter.display()
            );
        }
    }
    assert!(install.contains(&format!("**cargo-generate** {pinned},")));
}

/// The upgrade chapter's steps to drop `tests/library/helpers.rs` name what `sparkds::testing`
/// has, and lead to what the template generates now: no helpers file, and modules that import
/// from `sparkds::testing`.
#[test]
fn the_steps_that_drop_helpers_rs_name_what_sparkds_testing_has() {
    let chapter = std::fs::read_to_string(helpers::src_dir().join("abi/template-upgrades.md"))
        .expect("the upgrade chapter");
    let testing =
        std::fs::read_to_string(helpers::repo_root().join("crates/sparkds/src/testing/mod.rs"))
            .expect("crates/sparkds/src/testing/mod.rs");
    let mut named = 0;
    for (at, _) in chapter.match_indices("sparkds::testing::") {
        let name: String = chapter[at + "sparkds::testing::".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        named += 1;
        assert!(
            testing.contains(&format!("pub fn {name}("))
                || testing.contains(&format!("pub const {name}:")),
            "the upgrade chapter names sparkds::testing::{name}, which does not exist"
        );
    }
    assert!(
        named >= 2,
        "the upgrade chapter names nothing of sparkds::testing"
    );
    let library = helpers::repo_root().join("template/tests/library");
    assert!(!library.join("helpers.rs").exists());
    for module in ["batch_read", "stream_read", "write"] {
        let text = std::fs::read_to_string(library.join(module).join("mod.rs"))
            .expect("a module of the template's tests");
        assert!(
            text.contains("use sparkds::testing::") && !text.contains("helpers"),
            "template/tests/library/{module}/mod.rs no longer imports as the chapter says"
        );
    }
}

/// The tables of operator and literal type codes in the chapter on filter pushdown are the
/// `#define`s of `spark_datasource_filters.h`, name for name and code for code.
#[test]
fn the_filter_chapter_s_codes_are_the_header_s() {
    let header = std::fs::read_to_string(
        helpers::repo_root().join("crates/spark-datasource/spark_datasource_filters.h"),
    )
    .expect("the filters header");
    let chapter =
        std::fs::read_to_string(helpers::book_dir().join("src/abi/filters.md")).expect("chapter");
    let mut defined: Vec<(String, String)> = header
        .lines()
        .filter_map(|line| line.strip_prefix("#define SPARK_DS_FILTER_"))
        .filter_map(|rest| rest.split_once(' '))
        .filter(|(name, _)| !name.starts_with("VALUE_"))
        .map(|(name, code)| (name.to_string(), code.trim().to_string()))
        .collect();
    let operators = chapter
        .split("| Operator |")
        .nth(1)
        .expect("the operator table");
    let operators = operators.split("\n\n").next().unwrap_or_default();
    let types = chapter.split("| Type |").nth(1).expect("the type table");
    let types = types.split("\n\n").next().unwrap_or_default();
    let rows = |table: &str, prefix: &str| -> Vec<(String, String)> {
        table
            .lines()
            .filter_map(|line| {
                let cells: Vec<&str> = line.split('|').map(str::trim).collect();
                let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
                Some((format!("{prefix}{name}"), cells.get(2)?.to_string()))
            })
            .collect()
    };
    let mut documented = rows(operators, "");
    documented.extend(rows(types, "TYPE_"));
    defined.sort();
    documented.sort();
    assert_eq!(documented, defined);
}
