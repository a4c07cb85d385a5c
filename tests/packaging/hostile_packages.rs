//! `sparkds verify` on hostile packages: zip bombs, too many entries, colliding and malformed
//! names, links and special files, entries sharing bytes, nested packages, oversized or deeply
//! nested manifests, libraries that are not shared libraries. Each package is crafted here, byte
//! by byte where the zip writer refuses to write it, and each must be refused with its rule, in
//! bounded time and memory: every run of `sparkds verify` is timed and its peak RSS measured,
//! both checked against the bounds below and printed as a table (`--nocapture`).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tempfile::TempDir;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::helpers::{host_library_name, host_platform, macho_x86_64_blob, CLibrary};

const MANIFEST: &str = "spark-native-datasource.json";

/// Wall time allowed for one `verify` of a hostile package: the checks read at most the end
/// record, the central directory and what the entries declare. Generous for a debug build on a
/// busy 2-core machine; a run that unpacked a bomb would take far longer.
const TIME_BOUND: Duration = Duration::from_secs(10);

/// Peak RSS allowed for one `verify` of a hostile package, in KiB: the process itself and the
/// largest entry verify reads, here a few KiB. The process alone peaks near 12 MiB; the 16 MiB
/// bombs below, unpacked into memory, would exceed the bound.
const RSS_BOUND_KIB: i64 = 24 * 1024;

/// What one run of `sparkds verify` printed and cost.
struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    peak_rss_kib: i64,
}

fn sparkds_path() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| sparkds::sparkds_binary().expect("build the sparkds binary"))
}

/// A C program that runs a command and writes its peak RSS (KiB, from `wait4`) to a file. The
/// peak RSS of a process counts the memory of the process it was exec'ed from, and this test
/// process is large: the small program forks the command, so the figure is the command's own.
const PEAK_RSS_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  if (argc < 3) return 125;
  pid_t pid = fork();
  if (pid == 0) { execv(argv[2], argv + 2); _exit(127); }
  int status = 0; struct rusage usage;
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return 125;
  FILE *out = fopen(argv[1], "w");
  if (!out) return 125;
  fprintf(out, "%ld\n", usage.ru_maxrss);
  fclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"#;

/// Compiles [`PEAK_RSS_C`] into `dir`.
fn peak_rss_program(dir: &Path) -> PathBuf {
    let source = dir.join("peak_rss.c");
    fs::write(&source, PEAK_RSS_C).expect("write peak_rss.c");
    let program = dir.join("peak_rss");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_string()))
        .arg("-O1")
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compile peak_rss.c");
    program
}

/// Runs `sparkds verify <package>` under `program` ([`peak_rss_program`]): its output, wall time
/// and peak RSS.
fn verify(program: &Path, package: &Path) -> Run {
    let sparkds = sparkds_path();
    let rss_file = package.with_extension("rss");
    let start = Instant::now();
    let output = Command::new(program)
        .arg(&rss_file)
        .arg(sparkds)
        .arg("verify")
        .arg(package)
        .output()
        .expect("run sparkds verify");
    let elapsed = start.elapsed();
    let peak = fs::read_to_string(&rss_file).expect("peak_rss wrote the peak RSS");
    Run {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed,
        peak_rss_kib: peak.trim().parse().expect("a number of KiB"),
    }
}

fn host_entry() -> String {
    format!("{}/{}", host_platform(), host_library_name("demo"))
}

fn manifest_json(libraries: &[(&str, &str)]) -> Vec<u8> {
    let libraries: serde_json::Map<String, serde_json::Value> = libraries
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect();
    serde_json::json!({"abiVersion": 1, "dataSources": ["demo"], "libraries": libraries})
        .to_string()
        .into_bytes()
}

/// A zip written entry by entry: `(name, bytes, unix mode)`, deflated.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(*name, options).expect("start an entry");
        zip.write_all(bytes).expect("write an entry");
    }
    zip.finish().expect("finish").into_inner()
}

/// A package of a manifest listing the host library, and the library's bytes.
fn package_of(library: &[u8], extra: &[(&str, &[u8])]) -> Vec<u8> {
    let entry = host_entry();
    let manifest = manifest_json(&[(host_platform(), &entry)]);
    let mut entries: Vec<(&str, &[u8])> = vec![(MANIFEST, &manifest), (&entry, library)];
    entries.extend_from_slice(extra);
    zip_of(&entries)
}

/// The offsets of every central directory header and local header of `zip`, by name.
fn headers(zip: &[u8]) -> Vec<(Vec<u8>, usize, usize)> {
    let end = (0..zip.len() - 21)
        .rev()
        .find(|&i| zip[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
        .expect("end record");
    let count = u16::from_le_bytes([zip[end + 10], zip[end + 11]]) as usize;
    let mut at = u32::from_le_bytes(zip[end + 16..end + 20].try_into().unwrap()) as usize;
    let mut found = Vec::new();
    for _ in 0..count {
        let field = |o: usize| u16::from_le_bytes([zip[at + o], zip[at + o + 1]]) as usize;
        let (name_len, extra_len, comment_len) = (field(28), field(30), field(32));
        let local = u32::from_le_bytes(zip[at + 42..at + 46].try_into().unwrap()) as usize;
        found.push((zip[at + 46..at + 46 + name_len].to_vec(), at, local));
        at += 46 + name_len + extra_len + comment_len;
    }
    found
}

/// Edits the headers of entry `name` in place: `central` gets the central directory header,
/// `local` the local header (whose fields sit 4 bytes earlier: it has no "version made by").
fn patch(zip: &mut [u8], name: &str, edit: impl Fn(&mut [u8], bool)) {
    let (_, central, local) = headers(zip)
        .into_iter()
        .find(|(n, _, _)| n == name.as_bytes())
        .unwrap_or_else(|| panic!("no entry `{name}`"));
    edit(&mut zip[central..], true);
    edit(&mut zip[local..], false);
}

/// Sets the declared compressed and uncompressed sizes of entry `name`.
fn declare_sizes(zip: &mut [u8], name: &str, compressed: Option<u32>, size: u32) {
    patch(zip, name, |header, central| {
        let base = if central { 20 } else { 18 };
        if let Some(compressed) = compressed {
            header[base..base + 4].copy_from_slice(&compressed.to_le_bytes());
        }
        header[base + 4..base + 8].copy_from_slice(&size.to_le_bytes());
    });
}

/// Renames entry `from` to `to`, a name of the same length, in both its headers.
fn rename(zip: &mut [u8], from: &str, to: &[u8]) {
    assert_eq!(from.len(), to.len(), "a rename in place keeps the length");
    patch(zip, from, |header, central| {
        let at = if central { 46 } else { 30 };
        header[at..at + to.len()].copy_from_slice(to);
    });
}

/// One hostile package and what `verify` must say of it.
struct Case {
    name: &'static str,
    package: Vec<u8>,
    /// `[rule]` and a part of the message, both in one finding line.
    expect: (&'static str, &'static str),
}

fn cases(dir: &Path) -> Vec<Case> {
    let library = fs::read(CLibrary::new("demo").build(dir)).expect("read the library");
    let entry = host_entry();
    let mut cases = Vec::new();
    let mut case = |name, package, expect| {
        cases.push(Case {
            name,
            package,
            expect,
        })
    };

    // 16 MiB of zeros deflates to some 16 KiB: a ratio of about 1000.
    let zeros = vec![0u8; 16 << 20];
    case(
        "zip bomb by ratio",
        package_of(&zeros, &[]),
        ("[limit]", "a ratio above 100:1"),
    );

    // The same bytes under a header that declares 4 KiB: only the reading can catch it.
    let mut lying = package_of(&zeros, &[]);
    declare_sizes(&mut lying, &entry, None, 4096);
    case(
        "zip bomb with a lying header",
        lying,
        ("[archive]", "larger than its declared uncompressed size"),
    );

    // Five entries of 500 MiB each, declared: 2.4 GiB in all, above the 2 GiB bound.
    let parts: Vec<String> = (0..5).map(|i| format!("part{i}.bin")).collect();
    let mut entries: Vec<(&str, &[u8])> = vec![(MANIFEST, b"{}")];
    for part in &parts {
        entries.push((part, b"x"));
    }
    let mut total = zip_of(&entries);
    for part in &parts {
        declare_sizes(&mut total, part, Some(50 << 20), 500 << 20);
    }
    case(
        "zip bomb by total size",
        total,
        ("[limit]", "unpack to 2.4 GiB in all"),
    );

    let mut huge = package_of(&library, &[]);
    declare_sizes(&mut huge, &entry, Some(400 << 20), 600 << 20);
    case(
        "one entry of 600 MiB",
        huge,
        ("[limit]", "an entry may unpack to at most 512 MiB"),
    );

    let names: Vec<String> = (0..10_000).map(|i| format!("f{i}")).collect();
    let many: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
    case(
        "10000 entries",
        zip_of(&many),
        (
            "[limit]",
            "declares 10000 entries but a package holds at most 64",
        ),
    );

    let mut duplicate = package_of(&library, &[("spark-native-datasource.jsoX", b"{}")]);
    rename(
        &mut duplicate,
        "spark-native-datasource.jsoX",
        MANIFEST.as_bytes(),
    );
    case(
        "duplicate names",
        duplicate,
        ("[duplicate-name]", "more than one entry of this name"),
    );

    let upper = entry.to_uppercase();
    case(
        "names differing in case",
        package_of(&library, &[(&upper, &library)]),
        ("[duplicate-name]", "differs from"),
    );

    let long = format!("{}.so", "a".repeat(4000));
    case(
        "a name of 4003 bytes",
        package_of(&library, &[(&long, b"x")]),
        ("[entry-name]", "4003 bytes long"),
    );

    let mut not_utf8 = package_of(&library, &[("libXX.so", b"x")]);
    rename(&mut not_utf8, "libXX.so", b"lib\xff\xfe.so");
    case(
        "a name that is not UTF-8",
        not_utf8,
        ("[entry-name]", "not UTF-8"),
    );

    case(
        "a name with a control character",
        package_of(&library, &[("lib\u{1b}[2J.so", b"x")]),
        ("[entry-name]", "control character"),
    );

    let mut link = ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    link.start_file(MANIFEST, options).expect("manifest");
    link.write_all(&manifest_json(&[(host_platform(), &entry)]))
        .expect("manifest");
    link.add_symlink(&entry, "/usr/lib/libc.so.6", options)
        .expect("link");
    case(
        "the library a symbolic link",
        link.finish().expect("finish").into_inner(),
        ("[unsafe-path]", "symbolic link"),
    );

    // A named pipe: the writer keeps only permission bits, so the type is set in the headers.
    let mut fifo = package_of(&library, &[("pipe", b"")]);
    patch(&mut fifo, "pipe", |header, central| {
        if central {
            header[5] = 3; // made on Unix
            header[38..42].copy_from_slice(&((0o010_644u32) << 16).to_le_bytes());
        }
    });
    case("a named pipe", fifo, ("[unsafe-path]", "a named pipe"));

    // Zip has no hard links; two names for one stored stream are its equivalent.
    let mut shared = package_of(&library, &[("other.so", b"x")]);
    let first = headers(&shared)
        .into_iter()
        .find(|(n, _, _)| n == entry.as_bytes())
        .expect("library entry")
        .2 as u32;
    let (_, central, _) = headers(&shared)
        .into_iter()
        .find(|(n, _, _)| n == b"other.so")
        .expect("other entry");
    shared[central + 42..central + 46].copy_from_slice(&first.to_le_bytes());
    case(
        "two entries sharing one stream (a hard link)",
        shared,
        ("[archive]", "overlap"),
    );

    case(
        "an absolute path",
        package_of(&library, &[("/etc/ld.so.preload", b"x")]),
        ("[unsafe-path]", "absolute"),
    );
    case(
        "a `..` path",
        package_of(&library, &[("linux-x86_64/../../../.bashrc", b"x")]),
        ("[unsafe-path]", "`..`"),
    );
    case(
        "a Windows drive path",
        package_of(&library, &[("C:\\Windows\\evil.dll", b"x")]),
        ("[unsafe-path]", "absolute"),
    );

    let inner = package_of(&library, &[]);
    case(
        "a package listed as the library",
        package_of(&inner, &[]),
        ("[nested-package]", "a package inside the package"),
    );
    case(
        "a package inside the package",
        package_of(&library, &[("inner.sparkpkg", &inner)]),
        ("[nested-package]", "never unpacks nested packages"),
    );

    // A manifest of 8 MiB: valid JSON, padded with spaces.
    let mut big = manifest_json(&[(host_platform(), &entry)]);
    big.extend(std::iter::repeat_n(b' ', 8 << 20));
    case(
        "a manifest of 8 MiB",
        zip_of(&[(MANIFEST, &big), (&entry, &library)]),
        ("[limit]", "at most 64 KiB"),
    );
    let deep = format!(
        r#"{{"abiVersion": 1, "extension": {}{}}}"#,
        "[".repeat(30_000),
        "]".repeat(30_000)
    );
    case(
        "a manifest nested 30000 deep",
        zip_of(&[(MANIFEST, deep.as_bytes()), (&entry, &library)]),
        ("[manifest]", "nests arrays and objects 30001 deep"),
    );

    case(
        "a library of text",
        package_of(b"#!/bin/sh\necho not a library\n", &[]),
        ("[format]", "not a shared library"),
    );
    case(
        "a library of random bytes",
        package_of(&pseudo_random(64 * 1024), &[]),
        ("[format]", "not a shared library"),
    );
    case(
        "a library for another platform",
        package_of(&macho_x86_64_blob(), &[]),
        ("[format]", "Mach-O"),
    );
    if let Some(object) = relocatable_object(dir) {
        case(
            "an object file, not a shared library",
            package_of(&object, &[]),
            ("[format]", "not a shared library but a Relocatable file"),
        );
    }

    let mut bzip2 = package_of(&library, &[]);
    patch(&mut bzip2, &entry, |header, central| {
        let at = if central { 10 } else { 8 };
        header[at..at + 2].copy_from_slice(&12u16.to_le_bytes());
    });
    case(
        "a library compressed with bzip2",
        bzip2,
        ("[archive]", "method 12"),
    );

    // Packages that zip readers read differently: one reader decides, or none does.
    let good = package_of(&library, &[]);
    let mut prefixed = b"#!/bin/sh\nexit 0\n".to_vec();
    prefixed.extend_from_slice(&good);
    case(
        "data before the archive",
        prefixed,
        (
            "[archive]",
            "central directory header 1 of 2 is missing or damaged",
        ),
    );
    let mut two_ends = good.clone();
    two_ends.extend_from_slice(&good[good.len() - 22..]);
    case(
        "two end records",
        two_ends,
        ("[archive]", "the archive has 2 end records"),
    );
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"trailing bytes");
    case(
        "data after the archive",
        trailing,
        ("[archive]", "data after the archive"),
    );
    let mut hidden = good.clone();
    let end = hidden.len() - 22;
    // The end record declares one entry less than the directory holds (both counts).
    for at in [end + 8, end + 10] {
        let count = u16::from_le_bytes([hidden[at], hidden[at + 1]]) - 1;
        hidden[at..at + 2].copy_from_slice(&count.to_le_bytes());
    }
    case(
        "a directory holding more entries than declared",
        hidden,
        ("[archive]", "after the 1 entries the end record declares"),
    );
    cases
}

/// Bytes that look like nothing: a linear congruential sequence.
fn pseudo_random(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) as u8
        })
        .collect()
}

/// An ELF relocatable object that defines `spark_ds_init`, compiled with `cc -c`.
fn relocatable_object(dir: &Path) -> Option<Vec<u8>> {
    let source = dir.join("object.c");
    fs::write(&source, "int spark_ds_init(void) { return 0; }\n").ok()?;
    let object = dir.join("object.o");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_string()))
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(&object)
        .status()
        .ok()?;
    status.success().then(|| fs::read(&object).ok()).flatten()
}

#[test]
fn hostile_packages_are_refused_with_their_rule_in_bounded_time_and_memory() {
    if !cfg!(target_os = "linux") {
        return; // The crafted libraries are ELF files, and wait4's RSS is in KiB on Linux.
    }
    let dir = TempDir::new().expect("temp dir");
    let mut table = vec![format!(
        "{:<46} {:>5} {:>9} {:>9}  rule",
        "hostile package", "exit", "ms", "RSS MiB"
    )];
    let mut failures = Vec::new();

    // A good package first: the reference for time and memory.
    let good = dir.path().join("good.sparkpkg");
    let library = fs::read(CLibrary::new("demo").build(dir.path())).expect("library");
    fs::write(&good, package_of(&library, &[])).expect("write");
    let program = peak_rss_program(dir.path());
    let run = verify(&program, &good);
    assert!(run.status.success(), "{}{}", run.stdout, run.stderr);
    table.push(row("a valid package (reference)", &run, "ok"));

    // Larger than the 1 GiB bound, without using the disk: a sparse file.
    let sparse = dir.path().join("sparse.sparkpkg");
    fs::File::create(&sparse)
        .and_then(|f| f.set_len(1536 << 20))
        .expect("sparse file");
    let mut all = vec![Case {
        name: "a package of 1.5 GiB",
        package: Vec::new(),
        expect: ("[limit]", "the package is 1.5 GiB"),
    }];
    all.extend(cases(dir.path()));

    for (index, case) in all.iter().enumerate() {
        let path = if case.package.is_empty() {
            sparse.clone()
        } else {
            let path = dir.path().join(format!("case{index}.sparkpkg"));
            fs::write(&path, &case.package).expect("write the package");
            path
        };
        let run = verify(&program, &path);
        let (rule, words) = case.expect;
        let refused = run.status.code() == Some(1)
            && run
                .stderr
                .lines()
                .any(|l| l.starts_with("error: ") && l.contains(rule) && l.contains(words));
        if !refused {
            failures.push(format!(
                "{}: expected exit 1 and an error with `{rule}` and `{words}`, got {:?}:\n{}{}",
                case.name,
                run.status.code(),
                run.stdout,
                run.stderr
            ));
        }
        if run.elapsed > TIME_BOUND || run.peak_rss_kib > RSS_BOUND_KIB {
            failures.push(format!(
                "{}: took {:?} and {} KiB, above the bounds {:?} and {} KiB",
                case.name, run.elapsed, run.peak_rss_kib, TIME_BOUND, RSS_BOUND_KIB
            ));
        }
        table.push(row(case.name, &run, rule));
    }
    println!("{}", table.join("\n"));
    println!(
        "{} hostile packages refused, each within {:?} and {} MiB",
        all.len(),
        TIME_BOUND,
        RSS_BOUND_KIB / 1024
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Whether the JVM plugin's discovery (the JNI library's logic) runs the library of `package`:
/// `Err` with its reason when it refuses the package or cannot load what it holds. The demo
/// library's `spark_ds_init` fails on purpose: reaching it is running the library.
fn jvm_plugin_runs(package: &Path, private: &Path) -> Result<(), String> {
    let search = sparkds_jni::discovery::Search {
        session_packages: vec![package.to_path_buf()],
        ..Default::default()
    };
    let found =
        sparkds_jni::discovery::resolve("demo", &search, &|_, _| {}).map_err(|e| e.to_string())?;
    match found.build.load(None, private, "4.3.0", |_| None) {
        Err(e) if e.message.contains("cannot load the library") => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// Whether the Python bridge's package check (`python3 -m spark_native_bridge.verify`) accepts
/// `package`: `Err` with what it printed when it refuses it.
fn bridge_accepts(package: &Path) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new(std::env::var("PYTHON").unwrap_or_else(|_| "python3".into()))
        .args(["-m", "spark_native_bridge.verify"])
        .arg(package)
        .env("PYTHONPATH", root.join("python"))
        .output()
        .expect("python3 runs");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    match output.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(printed),
        other => panic!("the bridge's verify failed to run ({other:?}): {printed}"),
    }
}

#[test]
fn the_jvm_plugin_and_the_bridge_refuse_every_hostile_package_as_verify_does() {
    if !cfg!(target_os = "linux") {
        return; // The crafted libraries are ELF files.
    }
    let dir = TempDir::new().expect("temp dir");
    let private = dir.path().join("private");
    fs::create_dir(&private).expect("a directory");
    let library = fs::read(CLibrary::new("demo").build(dir.path())).expect("library");
    let good = dir.path().join("good.sparkpkg");
    fs::write(&good, package_of(&library, &[])).expect("write");
    jvm_plugin_runs(&good, &private).expect("the JVM plugin runs a valid package's library");
    bridge_accepts(&good).expect("the bridge accepts a valid package");

    let mut failures = Vec::new();
    let mut table = vec![format!(
        "{:<46} {:<28} bridge",
        "hostile package", "JVM plugin"
    )];
    for (index, case) in cases(dir.path()).iter().enumerate() {
        let path = dir.path().join(format!("case{index}.sparkpkg"));
        fs::write(&path, &case.package).expect("write the package");
        let jvm = jvm_plugin_runs(&path, &private);
        if jvm.is_ok() {
            failures.push(format!("{}: the JVM plugin ran its library", case.name));
        }
        // The bridge checks the package's structure and manifest before anything is read; a
        // library that is not one for this platform fails when it is loaded, as in the plugin.
        let bridge = if case.expect.0 == "[format]" {
            None
        } else {
            let result = bridge_accepts(&path);
            if result.is_ok() {
                failures.push(format!("{}: the bridge accepted the package", case.name));
            }
            Some(result)
        };
        let shown = |refused: bool| if refused { "refused" } else { "ACCEPTED" };
        table.push(format!(
            "{:<46} {:<28} {}",
            case.name,
            shown(jvm.is_err()),
            bridge.map_or("(checked at load)", |r| shown(r.is_err()))
        ));
    }
    println!("{}", table.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing was left in the private directory: each load's copy is removed.
    assert_eq!(fs::read_dir(&private).expect("listed").count(), 0);
}

fn row(name: &str, run: &Run, rule: &str) -> String {
    format!(
        "{:<46} {:>5} {:>9.1} {:>9.1}  {rule}",
        name,
        run.status
            .code()
            .map_or_else(|| "sig".to_string(), |c| c.to_string()),
        run.elapsed.as_secs_f64() * 1000.0,
        run.peak_rss_kib as f64 / 1024.0
    )
}
