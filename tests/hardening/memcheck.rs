//! Memory checkers on the host driving every protocol: valgrind (memcheck) on the examples, the
//! C fixture and generated projects; AddressSanitizer and UndefinedBehaviorSanitizer on the C
//! libraries. No error, nothing definitely lost; the suppressions (`valgrind.supp`,
//! `lsan.supp`) each say why.

use std::path::{Path, PathBuf};

use crate::helpers::{
    c_fixture, c_range, check_under, example_library, full, generated_library, printed, repo_root,
    Checked,
};

/// One library and the options its check needs.
struct Subject {
    name: String,
    library: PathBuf,
    options: Vec<String>,
}

impl Subject {
    fn new(name: &str, library: PathBuf, options: &[String]) -> Subject {
        Subject {
            name: name.to_string(),
            library,
            options: options.to_vec(),
        }
    }
}

fn suppressions(file: &str) -> String {
    repo_root()
        .join("tests/hardening")
        .join(file)
        .display()
        .to_string()
}

/// `valgrind` with memcheck's strictest useful settings: every error and every definite leak
/// fails the run with exit code 99.
fn valgrind_prefix() -> Vec<String> {
    vec![
        "valgrind".to_string(),
        "--quiet".to_string(),
        "--error-exitcode=99".to_string(),
        "--leak-check=full".to_string(),
        "--errors-for-leak-kinds=definite".to_string(),
        "--show-leak-kinds=definite".to_string(),
        format!("--suppressions={}", suppressions("valgrind.supp")),
    ]
}

fn under_valgrind(library: &Path, options: &[String]) -> Checked {
    let prefix = valgrind_prefix();
    let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
    check_under(&prefix, &[], library, options)
}

/// Runs every subject under valgrind; panics naming each that failed, and prints the figures.
fn assert_clean_under_valgrind(subjects: &[Subject]) {
    let mut failures = Vec::new();
    for subject in subjects {
        let run = under_valgrind(&subject.library, &subject.options);
        let stdout = String::from_utf8_lossy(&run.output.stdout);
        println!(
            "valgrind {:<28} exit {:?} in {:.1} s",
            subject.name,
            run.output.status.code(),
            run.elapsed.as_secs_f64()
        );
        if !run.output.status.success() || !stdout.contains("all protocols passed") {
            failures.push(format!(
                "{} under valgrind (exit {:?}):\n{}",
                subject.name,
                run.output.status.code(),
                printed(&run.output)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn path_option(name: &str) -> String {
    let dir = crate::helpers::build_dir().join(format!("{name}-data"));
    std::fs::create_dir_all(&dir).expect("a data directory");
    format!("path={}", dir.display())
}

#[test]
fn valgrind_finds_nothing_in_c_range() {
    assert_clean_under_valgrind(&[Subject::new("examples/c_range", c_range("", "plain"), &[])]);
}

#[test]
fn valgrind_finds_nothing_in_the_c_fixture() {
    assert_clean_under_valgrind(&[Subject::new(
        "conformance fixture range.c",
        c_fixture(&[], &[], "range"),
        &[],
    )]);
}

/// A source of `fixtures/`, for the negative controls.
fn fixture_source(name: &str) -> String {
    repo_root()
        .join("tests/hardening/fixtures")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn valgrind_reports_a_library_that_loses_memory() {
    // The check is only worth something if it fails: the C fixture with `lose_memory.c` linked
    // in loses 64 bytes when it is loaded, and memcheck must call them definitely lost.
    let leak = fixture_source("lose_memory.c");
    let library = c_fixture(&[], &[&leak], "range_loses_memory");
    let options = ["--protocol".to_string(), "load".to_string()];
    let run = under_valgrind(&library, &options);
    let stderr = String::from_utf8_lossy(&run.output.stderr);
    assert_eq!(
        run.output.status.code(),
        Some(99),
        "{}",
        printed(&run.output)
    );
    assert!(
        stderr.contains("64 bytes in 1 blocks are definitely lost"),
        "{stderr}"
    );
}

#[test]
fn valgrind_finds_nothing_in_the_rust_examples() {
    assert_clean_under_valgrind(&[
        Subject::new("examples/rust_range", example_library("rust_range"), &[]),
        Subject::new(
            "examples/tail_stream",
            example_library("tail_stream"),
            &[path_option("tail_stream"), "--scratch".to_string()],
        ),
        Subject::new(
            "examples/text_files",
            example_library("text_files"),
            &[
                path_option("text_files"),
                // The run's own folder: the writes may replace what is there.
                "--scratch".to_string(),
                // An empty folder has no data to infer the schema from.
                "--schema".to_string(),
                "id bigint, name string".to_string(),
            ],
        ),
    ]);
}

/// The generated variants: every capability together by default; with
/// `SPARKDS_HARDENING_FULL=1`, also each capability alone and without pushdowns.
fn variants() -> Vec<(&'static str, &'static str, Option<&'static str>)> {
    let mut variants = vec![(
        "hardened_everything",
        "batch_read,micro_batch_read,batch_write,streaming_write,truncate",
        None,
    )];
    if full() {
        variants.extend([
            ("hardened_batch_read", "batch_read", Some("")),
            ("hardened_micro_batch", "micro_batch_read", None),
            ("hardened_batch_write", "batch_write,truncate", None),
            ("hardened_streaming_write", "streaming_write", None),
        ]);
    }
    variants
}

#[test]
fn valgrind_finds_nothing_in_generated_projects() {
    let subjects: Vec<Subject> = variants()
        .into_iter()
        .map(|(name, capabilities, pushdowns)| {
            let library = generated_library(name, capabilities, pushdowns);
            Subject::new(
                &format!("generated {capabilities}"),
                library,
                &[
                    format!("write:{}", path_option(name)),
                    "--scratch".to_string(),
                ],
            )
        })
        .collect();
    assert_clean_under_valgrind(&subjects);
}

/// The flags of a C library built with AddressSanitizer and UndefinedBehaviorSanitizer.
const SANITIZE: &str =
    "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined";

/// The environment of a host loading a sanitized library: the host is not built with the
/// sanitizers, so their runtime is preloaded (it must come first to intercept malloc), and the
/// stacks are unwound fully so that the suppression of `lsan.supp` matches. AddressSanitizer
/// and LeakSanitizer share one exit code (98), UndefinedBehaviorSanitizer has its own (96).
fn sanitizer_env() -> Vec<(&'static str, String)> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let asan = std::process::Command::new(cc)
        .arg("-print-file-name=libasan.so")
        .output()
        .expect("the C compiler names its libasan");
    let asan = String::from_utf8_lossy(&asan.stdout).trim().to_string();
    assert!(
        Path::new(&asan).is_file(),
        "the C compiler has no libasan.so ({asan}): install libasan (Debian: gcc's libasan8)"
    );
    vec![
        ("LD_PRELOAD", asan),
        (
            "ASAN_OPTIONS",
            "detect_leaks=1:fast_unwind_on_malloc=0:abort_on_error=0:exitcode=98".to_string(),
        ),
        (
            "LSAN_OPTIONS",
            format!("suppressions={}", suppressions("lsan.supp")),
        ),
        (
            "UBSAN_OPTIONS",
            "halt_on_error=1:print_stacktrace=1:exitcode=96".to_string(),
        ),
    ]
}

#[test]
fn sanitizers_report_a_leak_and_an_overflow_in_a_dlopened_library() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let env = sanitizer_env();
    let options = ["--protocol".to_string(), "load".to_string()];
    let address_only = "-fsanitize=address -fno-omit-frame-pointer";
    for (source, sanitize, name, exit, words) in [
        (
            "lose_memory.c",
            SANITIZE,
            "range_loses_memory_sanitized",
            98,
            "LeakSanitizer: detected memory leaks",
        ),
        (
            "overflow.c",
            address_only,
            "range_overflow_asan",
            98,
            "AddressSanitizer: heap-buffer-overflow",
        ),
        (
            "overflow.c",
            SANITIZE,
            "range_overflow_ubsan",
            96,
            "runtime error: store to address",
        ),
    ] {
        let mut flags: Vec<String> = sanitize.split(' ').map(str::to_string).collect();
        flags.push(fixture_source(source));
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let library = c_fixture(&[], &flags, name);
        let run = check_under(&["env"], &env, &library, &options);
        let stderr = String::from_utf8_lossy(&run.output.stderr);
        assert_eq!(
            run.output.status.code(),
            Some(exit),
            "{source}: {}",
            printed(&run.output)
        );
        assert!(stderr.contains(words), "{source}: {stderr}");
    }
}

#[test]
fn sanitizers_find_nothing_in_the_c_libraries() {
    if !cfg!(target_os = "linux") {
        return; // LD_PRELOAD of libasan is how a host not built with it loads a sanitized library.
    }
    let flags: Vec<&str> = SANITIZE.split(' ').collect();
    let subjects = [
        Subject::new("examples/c_range", c_range(SANITIZE, "sanitized"), &[]),
        Subject::new("range.c", c_fixture(&[], &flags, "range_sanitized"), &[]),
        Subject::new(
            "range.c without a schema",
            c_fixture(&["FAULT_NO_SCHEMA"], &flags, "range_no_schema_sanitized"),
            &[
                "--schema".to_string(),
                "id bigint not null, name string".to_string(),
            ],
        ),
        Subject::new(
            "range.c failing killed tasks",
            c_fixture(
                &["FAULT_FAIL_WHEN_KILLED"],
                &flags,
                "range_fail_killed_sanitized",
            ),
            &[],
        ),
    ];
    let env = sanitizer_env();
    let mut failures = Vec::new();
    for subject in &subjects {
        let run = check_under(&["env"], &env, &subject.library, &subject.options);
        let stdout = String::from_utf8_lossy(&run.output.stdout);
        println!(
            "asan+ubsan {:<28} exit {:?} in {:.1} s",
            subject.name,
            run.output.status.code(),
            run.elapsed.as_secs_f64()
        );
        if !run.output.status.success() || !stdout.contains("all protocols passed") {
            failures.push(format!(
                "{} under AddressSanitizer and UndefinedBehaviorSanitizer (exit {:?}):\n{}",
                subject.name,
                run.output.status.code(),
                printed(&run.output)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn valgrind_finds_nothing_in_the_generated_inputs_and_the_concurrent_tasks() {
    // This test binary again, running only the generated-input properties and the concurrency
    // tests, under memcheck: a call that leaks or reads what it should not fails it, whatever
    // it returned. Few cases: memcheck runs them some thirty times slower.
    let cases = if full() { "64" } else { "4" };
    let this = std::env::current_exe().expect("the path of this test binary");
    let prefix = valgrind_prefix();
    let start = std::time::Instant::now();
    let output = std::process::Command::new(&prefix[0])
        .args(&prefix[1..])
        .arg(&this)
        .args(["generated_input::", "concurrency::", "--test-threads=1"])
        .env("SPARKDS_PROPTEST_CASES", cases)
        .env(
            crate::generated_input::LIBRARY_VAR,
            crate::generated_input::library_path(),
        )
        .output()
        .expect("valgrind runs (install it: .ci/install)");
    println!(
        "valgrind generated inputs ({cases} cases a property) and concurrency: exit {:?} in {:.1} s",
        output.status.code(),
        start.elapsed().as_secs_f64()
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("10 passed"),
        "{}",
        printed(&output)
    );
}
