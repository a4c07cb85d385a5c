//! `sparkds verify`: opens a `.sparkpkg` and checks it the way a cluster would find out, before
//! it gets there: the manifest, the archive's entries, and each library (format, architecture,
//! `spark_ds_init`, dependencies, glibc symbol versions), and the third-party notices and SBOM
//! that the manifest lists. Every broken rule is reported, each naming the file and the rule, and
//! the SHA-256 of every library is printed: executors check that checksum against the driver's
//! (specification, section "Installed Libraries").
//!
//! A package without notices or SBOM gets a warning, not an error: Spark loads it all the same,
//! and a library built without cargo (C, C++) has no dependency graph for `sparkds package` to
//! read; `--require-notices` makes it an error, for a project that always has them.
//!
//! The package is untrusted input: its structure is checked against [`Limits`] (entries, names,
//! declared sizes, compression ratio, overlapping entries) before anything is decompressed, and
//! no entry is read past what it declares, so a hostile package is refused in bounded time and
//! memory.

mod archive;
mod binary;
pub mod notices;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io::Read;
use std::path::Path;

use spark_datasource_core::file::open_regular;
use zip::ZipArchive;

pub use archive::{unsafe_path, Limits};
pub use binary::{parse_glibc_version, Policy};

use crate::error;
use crate::error::Result;
use crate::{sha256_hex, Manifest, Platform, ABI_VERSION, MANIFEST_NAME};
use notices::SbomComponent;
use spark_datasource_core::library_file::is_valid_data_source_name;

/// A rule of the package format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// The manifest exists and parses.
    Manifest,
    /// `abiVersion` is 1.
    AbiVersion,
    /// The data source names are valid and include the expected ones.
    DataSource,
    /// Each library's platform key is known.
    Platform,
    /// Each library is named as Spark looks for it.
    FileName,
    /// Each listed library is in the archive.
    MissingFile,
    /// Nothing else is in the archive.
    ExtraFile,
    /// No absolute path, `..` or link.
    UnsafePath,
    /// The binary format matches the platform.
    Format,
    /// The architecture matches the platform.
    Architecture,
    /// The library exports `spark_ds_init`.
    Export,
    /// The library only loads allowed libraries.
    Dependency,
    /// The library needs no glibc newer than the baseline.
    Glibc,
    /// The third-party notices are present, and name every component of the SBOM.
    Notices,
    /// The SBOM is present, CycloneDX JSON, with a licence for each component.
    Sbom,
    /// The package, its entries and their sizes stay within [`Limits`].
    Limit,
    /// Entry names are UTF-8, printable and not too long.
    EntryName,
    /// No two entries share a name, nor a name that differs only in case.
    Duplicate,
    /// The archive's structure is sound: readable headers, sizes as declared, no shared bytes.
    Archive,
    /// No archive inside the package.
    Nested,
}

/// The book's page of the package format, where each rule has a row (`#package-<name>`).
pub const RULES_URL: &str = concat!(env!("CARGO_PKG_HOMEPAGE"), "reference/manifest.html");

impl Rule {
    /// Every rule, in the order of the book's table.
    pub const ALL: [Rule; 20] = [
        Rule::Manifest,
        Rule::AbiVersion,
        Rule::DataSource,
        Rule::Platform,
        Rule::FileName,
        Rule::MissingFile,
        Rule::ExtraFile,
        Rule::UnsafePath,
        Rule::Format,
        Rule::Architecture,
        Rule::Export,
        Rule::Dependency,
        Rule::Glibc,
        Rule::Notices,
        Rule::Sbom,
        Rule::Limit,
        Rule::EntryName,
        Rule::Duplicate,
        Rule::Archive,
        Rule::Nested,
    ];

    /// The anchor of the rule's row in the book: `package-<name>`.
    pub fn anchor(self) -> String {
        format!("package-{}", self.name())
    }

    /// The address of the rule's row in the book, which every finding ends with.
    pub fn link(self) -> String {
        format!("{RULES_URL}#{}", self.anchor())
    }

    /// The rule's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Manifest => "manifest",
            Rule::AbiVersion => "abi-version",
            Rule::DataSource => "data-source",
            Rule::Platform => "platform",
            Rule::FileName => "file-name",
            Rule::MissingFile => "missing-file",
            Rule::ExtraFile => "extra-file",
            Rule::UnsafePath => "unsafe-path",
            Rule::Format => "format",
            Rule::Architecture => "architecture",
            Rule::Export => "export",
            Rule::Dependency => "dependency",
            Rule::Glibc => "glibc",
            Rule::Notices => "notices",
            Rule::Sbom => "sbom",
            Rule::Limit => "limit",
            Rule::EntryName => "entry-name",
            Rule::Duplicate => "duplicate-name",
            Rule::Archive => "archive",
            Rule::Nested => "nested-package",
        }
    }
}

/// A broken rule: the file it is about, the rule, and what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The entry of the archive (or the manifest) at fault.
    pub file: String,
    /// The rule broken.
    pub rule: Rule,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Finding {
    fn new(file: &str, rule: Rule, message: String) -> Finding {
        Finding {
            file: file.to_string(),
            rule,
            message,
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: [{}] {} (see {})",
            self.file,
            self.rule.name(),
            self.message,
            self.rule.link()
        )
    }
}

/// A library found in the package, with its checksum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Library {
    /// Its platform key.
    pub platform: String,
    /// Its path in the archive.
    pub entry: String,
    /// SHA-256 of its bytes, lower-case hex.
    pub sha256: String,
}

/// The outcome of `verify`.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The data sources of the manifest, if it parsed.
    pub data_sources: Vec<String>,
    /// Every listed library that is in the archive.
    pub libraries: Vec<Library>,
    /// Every broken rule, in the order found.
    pub findings: Vec<Finding>,
    /// What the package should carry but need not: the notices and the SBOM, unless required.
    pub warnings: Vec<Finding>,
    /// The components of the SBOM, if it has any.
    pub components: Vec<SbomComponent>,
}

/// What `verify` requires beyond the format itself.
#[derive(Clone, Debug)]
pub struct Options {
    /// Data sources the manifest must list.
    pub names: Vec<String>,
    /// Dependency and glibc policy.
    pub policy: Policy,
    /// Whether a package without notices or SBOM fails, rather than gets a warning.
    pub require_notices: bool,
    /// Bounds on what `verify` reads.
    pub limits: Limits,
}

/// One entry of the archive, as read from the central directory.
struct Entry {
    index: usize,
    is_dir: bool,
    /// Its declared uncompressed size: reading stops past it.
    size: u64,
}

/// Checks the structure of the package at `path` against `limits`, reading only its central
/// directory and decompressing nothing: what a host runs before it extracts a library from a
/// package that anyone may have added (a session artifact). An empty list means its entries may
/// be read, each at most as large as it declares.
///
/// # Errors
///
/// A file that cannot be read.
pub fn check_structure(path: &Path, limits: &Limits) -> Result<Vec<Finding>> {
    let mut file = open_regular(path).map_err(error::io(path))?;
    check_open_structure(&mut file, limits).map_err(error::io(path))
}

/// [`check_structure`] of a package that the caller opened, so that it checks and then reads
/// the same file (a host opens it without waiting on a named pipe, and refuses anything but a
/// regular file).
///
/// # Errors
///
/// A file that cannot be read.
pub fn check_open_structure(file: &mut fs::File, limits: &Limits) -> std::io::Result<Vec<Finding>> {
    // A file that is not a zip archive has no findings here: the zip library names what it
    // misses when the package is opened.
    Ok(archive::check(file, limits)?.unwrap_or_default())
}

/// Checks the package at `path`.
///
/// # Errors
///
/// Only a package that cannot be read at all (not a file, not a zip archive). A package that
/// reads but breaks rules gives a [`Report`] with findings.
pub fn verify_package(path: &Path, options: &Options) -> Result<Report> {
    let mut file = open_regular(path).map_err(error::io(path))?;
    let mut report = Report::default();
    if let Some(findings) = structure_findings(&mut file, path, options)? {
        report.findings = findings;
        return Ok(report);
    }
    let mut archive = ZipArchive::new(file).map_err(error::zip_read(path))?;
    let entries = list_entries(&mut archive, path)?;
    let Some(manifest) = read_manifest(&mut archive, &entries, &options.limits, &mut report) else {
        return Ok(report);
    };
    check_manifest(&manifest, options, &mut report);
    check_libraries(&mut archive, &entries, &manifest, options, &mut report);
    check_third_party(&mut archive, &entries, &manifest, options, &mut report)?;
    check_extra_files(&entries, &listed_files(&manifest), &mut report);
    Ok(report)
}

/// The findings of the structure check (`archive::check`), when it has any.
fn structure_findings(
    file: &mut fs::File,
    path: &Path,
    options: &Options,
) -> Result<Option<Vec<Finding>>> {
    // A package without an end record goes on to the zip library, which names what it misses.
    let checked = archive::check(file, &options.limits).map_err(error::io(path))?;
    Ok(checked.ok().filter(|findings| !findings.is_empty()))
}

/// The archive's entries by name.
fn list_entries(
    archive: &mut ZipArchive<fs::File>,
    path: &Path,
) -> Result<BTreeMap<String, Entry>> {
    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    for index in 0..archive.len() {
        let entry = archive.by_index(index).map_err(error::zip_read(path))?;
        // Names and types were checked with the structure (`archive::check`): absolute paths,
        // `..` and links never get here.
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        let is_dir = entry.is_dir();
        let size = entry.size();
        entries.insert(
            name,
            Entry {
                index,
                is_dir,
                size,
            },
        );
    }
    Ok(entries)
}

/// Checks each library the manifest lists, and reports the ones that pass.
fn check_libraries(
    archive: &mut ZipArchive<fs::File>,
    entries: &BTreeMap<String, Entry>,
    manifest: &Manifest,
    options: &Options,
    report: &mut Report,
) {
    for (key, entry_name) in &manifest.libraries {
        check_library(archive, entries, manifest, options, key, entry_name, report);
    }
}

/// Checks the library the manifest lists at `entry_name` for the platform `key`: its key, its
/// path, its file name, that it is present and not an archive, then its binary.
fn check_library(
    archive: &mut ZipArchive<fs::File>,
    entries: &BTreeMap<String, Entry>,
    manifest: &Manifest,
    options: &Options,
    key: &str,
    entry_name: &str,
    report: &mut Report,
) {
    let platform = Platform::from_key(key);
    if platform.is_none() {
        report.findings.push(Finding::new(
            entry_name,
            Rule::Platform,
            format!(
                "unknown platform key `{key}`: use one of {}",
                Platform::known_keys()
            ),
        ));
    }
    if let Some(problem) = unsafe_path(entry_name) {
        report.findings.push(Finding::new(
            entry_name,
            Rule::UnsafePath,
            format!("the manifest lists it for `{key}`, but {problem}"),
        ));
        return;
    }
    if let Some(platform) = platform {
        check_file_name(entry_name, platform, &manifest.data_sources, report);
    }
    let Some(bytes) = read_library(archive, entries, options, key, entry_name, report) else {
        return;
    };
    report.libraries.push(Library {
        platform: key.to_string(),
        entry: entry_name.to_string(),
        sha256: sha256_hex(&bytes),
    });
    if let Some(platform) = platform {
        report
            .findings
            .extend(binary::check(entry_name, &bytes, platform, &options.policy));
    }
}

/// The bytes of the library at `entry_name`, unless it is missing, unreadable or a zip archive.
fn read_library(
    archive: &mut ZipArchive<fs::File>,
    entries: &BTreeMap<String, Entry>,
    options: &Options,
    key: &str,
    entry_name: &str,
    report: &mut Report,
) -> Option<Vec<u8>> {
    let Some(entry) = entries.get(entry_name).filter(|e| !e.is_dir) else {
        report.findings.push(Finding::new(
            entry_name,
            Rule::MissingFile,
            format!("the manifest lists it for `{key}` but the archive does not contain it: add the file, or remove `{key}` from `libraries`"),
        ));
        return None;
    };
    let bytes = read_entry(
        archive,
        entry_name,
        entry,
        options.limits.entry_bytes,
        report,
    )?;
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        report.findings.push(Finding::new(
            entry_name,
            Rule::Nested,
            format!("the manifest lists it for `{key}`, but it is a zip archive, a package inside the package: Spark would load it as a shared library and fail, so put the library itself here"),
        ));
        return None;
    }
    Some(bytes)
}

/// The entries the manifest lists: itself, the libraries, the notices and the SBOM.
fn listed_files(manifest: &Manifest) -> BTreeSet<String> {
    let mut listed: BTreeSet<String> = BTreeSet::new();
    listed.insert(MANIFEST_NAME.to_string());
    listed.extend(manifest.libraries.values().cloned());
    listed.extend(manifest.notices.iter().cloned());
    listed.extend(manifest.sbom.iter().cloned());
    listed
}

/// Entries the manifest does not list (the directories of listed files excepted).
fn check_extra_files(
    entries: &BTreeMap<String, Entry>,
    listed: &BTreeSet<String>,
    report: &mut Report,
) {
    for (name, entry) in entries {
        // `zip -r` (the specification's example) also stores the directories of the files.
        let directory = format!("{}/", name.trim_end_matches('/'));
        let parent_of_listed = entry.is_dir && listed.iter().any(|l| l.starts_with(&directory));
        if !listed.contains(name) && !parent_of_listed {
            report.findings.push(Finding::new(
                name,
                Rule::ExtraFile,
                "the manifest does not list this entry: a package holds only its manifest and the files the manifest lists (`libraries`, `notices`, `sbom`), so remove it".to_string(),
            ));
        }
    }
}

/// Checks the notices and the SBOM that the manifest lists, or warns (errs, when required) that
/// it lists none.
fn check_third_party(
    archive: &mut ZipArchive<fs::File>,
    entries: &BTreeMap<String, Entry>,
    manifest: &Manifest,
    options: &Options,
    report: &mut Report,
) -> Result<()> {
    let absent = match (&manifest.notices, &manifest.sbom) {
        (None, None) => Some((
            Rule::Notices,
            "no third-party notices (`notices`) and no SBOM (`sbom`)",
        )),
        (None, Some(_)) => Some((Rule::Notices, "no third-party notices (`notices`)")),
        (Some(_), None) => Some((Rule::Sbom, "no SBOM (`sbom`)")),
        (Some(_), Some(_)) => None,
    };
    if let Some((rule, what)) = absent {
        let finding = Finding::new(
            MANIFEST_NAME,
            rule,
            format!("the manifest lists {what}, though the libraries ship the code of their dependencies, whose licences ask for their notices to go with it: run `sparkds package` from the library's cargo package, or give it --notices and --sbom made elsewhere"),
        );
        if options.require_notices {
            report.findings.push(finding);
        } else {
            report.warnings.push(finding);
        }
    }
    let mut read = |key: &str, listed: &Option<String>| -> Result<Option<(String, Vec<u8>)>> {
        let Some(entry_name) = listed else {
            return Ok(None);
        };
        if let Some(problem) = unsafe_path(entry_name) {
            report.findings.push(Finding::new(
                entry_name,
                Rule::UnsafePath,
                format!("the manifest lists it as `{key}`, but {problem}"),
            ));
            return Ok(None);
        }
        let Some(entry) = entries.get(entry_name).filter(|e| !e.is_dir) else {
            report.findings.push(Finding::new(
                entry_name,
                Rule::MissingFile,
                format!("the manifest lists it as `{key}` but the archive does not contain it: add the file, or remove `{key}`"),
            ));
            return Ok(None);
        };
        Ok(read_entry(
            archive,
            entry_name,
            entry,
            options.limits.text_bytes,
            report,
        )
        .map(|bytes| (entry_name.clone(), bytes)))
    };
    let sbom = read("sbom", &manifest.sbom)?;
    let notices = read("notices", &manifest.notices)?;
    if let Some((entry, bytes)) = &sbom {
        let (problems, components) = notices::check_sbom(bytes, &manifest.data_sources);
        report.findings.extend(
            problems
                .into_iter()
                .map(|p| Finding::new(entry, Rule::Sbom, p)),
        );
        report.components = components;
    }
    if let Some((entry, bytes)) = &notices {
        let problems = notices::check_notices(bytes, &report.components);
        report.findings.extend(
            problems
                .into_iter()
                .map(|p| Finding::new(entry, Rule::Notices, p)),
        );
    }
    Ok(())
}

/// Reads one entry, at most `cap` bytes and never more than it declares, so a header that lies
/// about its size costs no more than one that tells the truth. A damaged entry is a finding.
fn read_entry(
    archive: &mut ZipArchive<fs::File>,
    name: &str,
    entry: &Entry,
    cap: u64,
    report: &mut Report,
) -> Option<Vec<u8>> {
    let mut refuse = |rule, message: String| {
        report.findings.push(Finding::new(name, rule, message));
        None
    };
    if entry.size > cap {
        return refuse(
            Rule::Limit,
            format!(
                "the entry unpacks to {} but this entry may unpack to at most {}",
                archive::bytes(entry.size),
                archive::bytes(cap)
            ),
        );
    }
    let mut file = match archive.by_index(entry.index) {
        Ok(file) => file,
        Err(e) => return refuse(Rule::Archive, format!("the entry cannot be read: {e}")),
    };
    let mut bytes = Vec::new();
    let read = (&mut file)
        .take(entry.size.saturating_add(1))
        .read_to_end(&mut bytes);
    let unpacked = bytes.len() as u64;
    if unpacked > entry.size {
        return refuse(
            Rule::Archive,
            format!(
                "the entry unpacks to more than the {} its header declares: the header lies about its size, as a zip bomb's does",
                archive::bytes(entry.size)
            ),
        );
    }
    if let Err(e) = read {
        return refuse(
            Rule::Archive,
            format!("the entry cannot be unpacked ({e}): the package is damaged, write it again"),
        );
    }
    if unpacked < entry.size {
        return refuse(
            Rule::Archive,
            format!(
                "the entry unpacks to {} but its header declares {}: the package is damaged, write it again",
                archive::bytes(unpacked),
                archive::bytes(entry.size)
            ),
        );
    }
    Some(bytes)
}

fn read_manifest(
    archive: &mut ZipArchive<fs::File>,
    entries: &BTreeMap<String, Entry>,
    limits: &Limits,
    report: &mut Report,
) -> Option<Manifest> {
    let Some(entry) = entries.get(MANIFEST_NAME) else {
        report.findings.push(Finding::new(
            MANIFEST_NAME,
            Rule::Manifest,
            "the package has no manifest at its root: write it with `sparkds package`".to_string(),
        ));
        return None;
    };
    let bytes = read_entry(archive, MANIFEST_NAME, entry, limits.manifest_bytes, report)?;
    let depth = archive::json_depth(&bytes);
    if depth > limits.manifest_depth {
        report.findings.push(Finding::new(
            MANIFEST_NAME,
            Rule::Manifest,
            format!(
                "the manifest nests arrays and objects {depth} deep but at most {} is read: a manifest nests 2 deep (`libraries` in the top object), so remove what is nested in it",
                limits.manifest_depth
            ),
        ));
        return None;
    }
    match Manifest::parse(&bytes) {
        Ok(manifest) => Some(manifest),
        Err(e) => {
            report.findings.push(Finding::new(
                MANIFEST_NAME,
                Rule::Manifest,
                format!("the manifest is not valid: {e}; it must be `{{ \"abiVersion\": 1, \"dataSources\": [...], \"libraries\": {{ \"<platform>\": \"<path>\" }} }}`"),
            ));
            None
        }
    }
}

fn check_manifest(manifest: &Manifest, options: &Options, report: &mut Report) {
    report.data_sources = manifest.data_sources.clone();
    if manifest.abi_version != ABI_VERSION {
        report.findings.push(Finding::new(
            MANIFEST_NAME,
            Rule::AbiVersion,
            format!(
                "`abiVersion` is {} but this tool checks version {ABI_VERSION} of the interface: set it to {ABI_VERSION}",
                manifest.abi_version
            ),
        ));
    }
    if manifest.data_sources.is_empty() {
        report.findings.push(Finding::new(
            MANIFEST_NAME,
            Rule::DataSource,
            "`dataSources` is empty: list the data sources that the libraries implement"
                .to_string(),
        ));
    }
    for name in &manifest.data_sources {
        if !is_valid_data_source_name(name) {
            report.findings.push(Finding::new(
                MANIFEST_NAME,
                Rule::DataSource,
                format!("data source name `{name}` is invalid: use lower case letters, digits and `_`, starting with a letter"),
            ));
        }
    }
    for name in &options.names {
        if !manifest.data_sources.contains(name) {
            report.findings.push(Finding::new(
                MANIFEST_NAME,
                Rule::DataSource,
                format!(
                    "`dataSources` is [{}] but must list `{name}`",
                    quoted(&manifest.data_sources)
                ),
            ));
        }
    }
    if manifest.libraries.is_empty() {
        report.findings.push(Finding::new(
            MANIFEST_NAME,
            Rule::Platform,
            "`libraries` is empty: list one library per platform".to_string(),
        ));
    }
}

fn check_file_name(entry: &str, platform: Platform, data_sources: &[String], report: &mut Report) {
    let file_name = entry.rsplit('/').next().unwrap_or(entry);
    let expected: Vec<String> = data_sources
        .iter()
        .map(|n| platform.library_file_name(n))
        .collect();
    if !expected.iter().any(|e| e == file_name) {
        report.findings.push(Finding::new(
            entry,
            Rule::FileName,
            format!(
                "a `{platform}` library of [{}] must be named {}: Spark finds a library by this name",
                quoted(data_sources),
                expected
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        ));
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod rule_tests {
    use super::Rule;

    /// A rule added to the enum must be added to `Rule::ALL` (and so to the book's table, which
    /// the book's tests hold to `ALL`): this match stops compiling until it is.
    #[test]
    fn all_lists_every_rule_once() {
        for rule in Rule::ALL {
            match rule {
                Rule::Manifest
                | Rule::AbiVersion
                | Rule::DataSource
                | Rule::Platform
                | Rule::FileName
                | Rule::MissingFile
                | Rule::ExtraFile
                | Rule::UnsafePath
                | Rule::Format
                | Rule::Architecture
                | Rule::Export
                | Rule::Dependency
                | Rule::Glibc
                | Rule::Notices
                | Rule::Sbom
                | Rule::Limit
                | Rule::EntryName
                | Rule::Duplicate
                | Rule::Archive
                | Rule::Nested => {}
            }
        }
        let mut names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            Rule::ALL.len(),
            "a rule listed twice in Rule::ALL"
        );
    }
}

#[cfg(all(test, unix))]
mod open_tests {
    use super::*;

    /// A named pipe given as a package: verify would wait for a writer for ever if it opened it
    /// as a plain file.
    #[test]
    fn a_named_pipe_is_refused_at_once() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let pipe = dir.path().join("pipe.sparkpkg");
        let made = std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", pipe.display());
        let options = Options {
            names: Vec::new(),
            policy: Policy {
                glibc: vec![2, 17],
                allow: Vec::new(),
            },
            require_notices: false,
            limits: Limits::default(),
        };
        let (sender, received) = std::sync::mpsc::channel();
        let verifying = pipe.clone();
        std::thread::spawn(move || {
            let _ = sender.send(
                verify_package(&verifying, &options)
                    .err()
                    .map(|e| e.to_string()),
            );
        });
        let error = received
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("verify returns instead of waiting on the pipe")
            .expect("a named pipe is refused");
        assert!(
            error.contains("it is a named pipe (FIFO), not a regular file"),
            "{error}"
        );
    }
}
