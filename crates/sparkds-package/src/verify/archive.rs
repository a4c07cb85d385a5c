//! The structure of a package, read from its own bytes before any entry is decompressed: the end
//! record, then every central directory header. A package comes from anywhere (a pull request, a
//! download), so what `verify` reads and keeps is bounded by [`Limits`] before the zip library
//! allocates anything for it, and every entry is judged on what it declares: its name, its type,
//! its sizes, where its bytes are. A hostile package (zip bomb, thousands of entries, names that
//! collide on a case-insensitive disk, entries sharing bytes) is refused here, in time and memory
//! that depend on the limits, not on the package.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use super::{Finding, Rule};
use crate::MANIFEST_NAME;

/// What `verify` accepts. The defaults are far above what a real package holds (a manifest,
/// notices, an SBOM and one library per platform) and low enough that checking stays cheap.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Size of the package file.
    pub package_bytes: u64,
    /// Entries in the archive, directories included.
    pub entries: u64,
    /// Size of the central directory.
    pub directory_bytes: u64,
    /// Length of an entry name, in bytes (most file systems refuse longer file names).
    pub name_bytes: usize,
    /// Uncompressed size of the manifest.
    pub manifest_bytes: u64,
    /// Nesting of arrays and objects in the manifest: a valid one nests 2 deep, and the other
    /// readers of a manifest (the JVM plugin, the Python bridge) may recurse on each level.
    pub manifest_depth: usize,
    /// Uncompressed size of the notices or of the SBOM.
    pub text_bytes: u64,
    /// Uncompressed size of any one entry: `verify` holds one library in memory at a time.
    pub entry_bytes: u64,
    /// Sum of the uncompressed sizes of all entries.
    pub total_bytes: u64,
    /// Uncompressed over compressed size, for entries above [`Limits::ratio_floor`].
    pub ratio: u64,
    /// Entries smaller than this are not held to the ratio: a small file of one repeated byte is
    /// harmless.
    pub ratio_floor: u64,
}

const MIB: u64 = 1 << 20;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            package_bytes: 1024 * MIB,
            entries: 64,
            directory_bytes: MIB,
            name_bytes: 255,
            manifest_bytes: 64 * 1024,
            manifest_depth: 32,
            text_bytes: 16 * MIB,
            entry_bytes: 512 * MIB,
            total_bytes: 2048 * MIB,
            ratio: 100,
            ratio_floor: MIB,
        }
    }
}

/// One central directory header, as declared.
#[derive(Clone, Debug)]
pub struct Declared {
    /// The name's bytes, as stored.
    pub name: Vec<u8>,
    /// Compressed size.
    pub compressed: u64,
    /// Uncompressed size.
    pub size: u64,
    /// Offset of the local header.
    pub offset: u64,
    method: u16,
    flags: u16,
    made_by: u16,
    external: u32,
}

impl Declared {
    /// The name for reports: its text, or its bytes escaped when it is not UTF-8.
    pub fn display_name(&self) -> String {
        match std::str::from_utf8(&self.name) {
            Ok(name) => name.escape_debug().to_string(),
            Err(_) => self.name.escape_ascii().to_string(),
        }
    }

    /// The Unix mode, when the entry was made on Unix (or macOS) and carries one.
    fn unix_mode(&self) -> Option<u32> {
        matches!(self.made_by >> 8, 3 | 19)
            .then_some(self.external >> 16)
            .filter(|mode| *mode != 0)
    }
}

/// Why the archive's structure cannot be read; the zip library reports these in its own words.
pub enum Unreadable {
    /// No end record: not a zip archive at all.
    NotZip,
}

/// Reads the structure of `file` and checks it against `limits`. `Ok` with findings means the
/// package is refused before anything is decompressed; `Ok` without findings means its entries
/// may be read, each at most as large as declared.
pub fn check(
    file: &mut File,
    limits: &Limits,
) -> std::io::Result<Result<Vec<Finding>, Unreadable>> {
    let len = file.metadata()?.len();
    let package = |message: String| vec![Finding::new("(package)", Rule::Limit, message)];
    if len > limits.package_bytes {
        return Ok(Ok(package(format!(
            "the package is {} but verify reads packages of at most {}: a package holds one library per platform, so remove what is not a library, or strip the libraries' debug information",
            bytes(len),
            bytes(limits.package_bytes)
        ))));
    }
    let Some(end) = end_record(file, len)? else {
        return Ok(Err(Unreadable::NotZip));
    };
    if end.entries > limits.entries {
        return Ok(Ok(package(format!(
            "the archive declares {} entries but a package holds at most {}: a manifest, its notices and SBOM, and one library per platform",
            end.entries, limits.entries
        ))));
    }
    if end.directory_size > limits.directory_bytes {
        return Ok(Ok(package(format!(
            "the central directory is {} but at most {} is read: its entries carry oversized names, extra fields or comments",
            bytes(end.directory_size),
            bytes(limits.directory_bytes)
        ))));
    }
    let directory = match read_directory(file, &end, len) {
        Ok(directory) => directory,
        Err(message) => {
            return Ok(Ok(vec![Finding::new(
                "(package)",
                Rule::Archive,
                format!("{message}: write the package again with `sparkds package` or `zip`"),
            )]))
        }
    };
    let mut findings = check_entries(&directory, &end, limits);
    findings.extend(one_reading(file, &end, &directory, len)?);
    Ok(Ok(findings))
}

/// Findings when another zip reader could see other entries than these: zip readers differ in
/// how they find the end record and in whether they shift offsets to skip data before the
/// archive, so a package is read only when there is one way to read it. The JVM plugin and the
/// Python bridge check packages with these same rules before their zip library opens them.
fn one_reading(
    file: &mut File,
    end: &End,
    entries: &[Declared],
    len: u64,
) -> std::io::Result<Vec<Finding>> {
    let mut findings = Vec::new();
    let mut push = |message: String| {
        findings.push(Finding::new(
            "(package)",
            Rule::Archive,
            format!("{message}: write the package again with `sparkds package`"),
        ));
    };
    let directory_end = end.directory_offset + end.directory_size;
    if directory_end != end.position {
        push(format!(
            "the central directory ends at byte {directory_end}, but the end record starts at byte {}: readers disagree on what lies between",
            end.position
        ));
    }
    if let Some(first) = entries.iter().map(|e| e.offset).min().filter(|o| *o != 0) {
        push(format!(
            "the first entry starts at byte {first}, not at the start of the file: some readers skip the data before the archive, others do not"
        ));
    }
    if end.record_at + 22 + u64::from(end.comment_len) != len {
        push(format!(
            "the end record's comment ends at byte {} but the file at byte {len}: data after the archive, or a second end record",
            end.record_at + 22 + u64::from(end.comment_len)
        ));
    }
    // From the end of the central directory to the end of the file there is only the end
    // record (and its ZIP64 forms): a second end record there gives readers two archives.
    let from = directory_end.min(len);
    let mut tail = vec![0; (len - from) as usize];
    file.seek(SeekFrom::Start(from))?;
    file.read_exact(&mut tail)?;
    let records = (0..tail.len().saturating_sub(3))
        .filter(|&i| u32_at(&tail, i) == END_SIGNATURE)
        .count();
    if records > 1 {
        push(format!(
            "the archive has {records} end records: readers pick different ones, and so see different entries"
        ));
    }
    Ok(findings)
}

/// The end of central directory record, ZIP64 or not.
struct End {
    entries: u64,
    directory_size: u64,
    directory_offset: u64,
    /// Where the end record starts (its ZIP64 form, if any): the central directory ends there.
    position: u64,
    /// Where the classic end record starts, and the length of its comment.
    record_at: u64,
    comment_len: u16,
}

const END_SIGNATURE: u32 = 0x0605_4b50;
const END64_LOCATOR_SIGNATURE: u32 = 0x0706_4b50;
const END64_SIGNATURE: u32 = 0x0606_4b50;
const CENTRAL_SIGNATURE: u32 = 0x0201_4b50;
const LOCAL_HEADER_LEN: u64 = 30;

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Finds the end record in the last 64 KiB + 22 bytes, where the format puts it (its comment is
/// at most 65535 bytes): the search never reads more of a large file.
fn end_record(file: &mut File, len: u64) -> std::io::Result<Option<End>> {
    let tail_len = len.min(22 + 65535 + 20);
    let start = len - tail_len;
    let mut tail = vec![0; tail_len as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut tail)?;
    let Some(at) = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(&tail, i) == END_SIGNATURE)
    else {
        return Ok(None);
    };
    let mut end = End {
        entries: u64::from(u16_at(&tail, at + 10)),
        directory_size: u64::from(u32_at(&tail, at + 12)),
        directory_offset: u64::from(u32_at(&tail, at + 16)),
        position: start + at as u64,
        record_at: start + at as u64,
        comment_len: u16_at(&tail, at + 20),
    };
    let zip64 = end.entries == 0xffff
        || end.directory_size == 0xffff_ffff
        || end.directory_offset == 0xffff_ffff;
    if zip64 && at >= 20 && u32_at(&tail, at - 20) == END64_LOCATOR_SIGNATURE {
        let record = u64_at(&tail, at - 20 + 8);
        let mut fixed = [0u8; 56];
        if record.checked_add(56).is_some_and(|e| e <= len) {
            file.seek(SeekFrom::Start(record))?;
            file.read_exact(&mut fixed)?;
            if u32_at(&fixed, 0) == END64_SIGNATURE {
                end.entries = u64_at(&fixed, 32);
                end.directory_size = u64_at(&fixed, 40);
                end.directory_offset = u64_at(&fixed, 48);
                end.position = record;
            }
        }
    }
    Ok(Some(end))
}

/// Reads every central directory header; the caller has bounded their number and total size.
fn read_directory(file: &mut File, end: &End, len: u64) -> Result<Vec<Declared>, String> {
    end.directory_offset
        .checked_add(end.directory_size)
        .filter(|e| *e <= len)
        .ok_or("the central directory lies outside the file")?;
    let mut bytes = vec![0; end.directory_size as usize];
    file.seek(SeekFrom::Start(end.directory_offset))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|e| format!("cannot read the central directory: {e}"))?;
    let mut entries = Vec::new();
    let mut at = 0usize;
    for index in 0..end.entries {
        let header = bytes
            .get(at..at + 46)
            .filter(|h| u32_at(h, 0) == CENTRAL_SIGNATURE)
            .ok_or_else(|| {
                format!(
                    "central directory header {} of {} is missing or damaged",
                    index + 1,
                    end.entries
                )
            })?;
        let name_len = usize::from(u16_at(header, 28));
        let extra_len = usize::from(u16_at(header, 30));
        let comment_len = usize::from(u16_at(header, 32));
        let name_at = at + 46;
        let extra_at = name_at + name_len;
        let next = extra_at + extra_len + comment_len;
        if next > bytes.len() {
            return Err(format!(
                "central directory header {} of {} runs past the directory",
                index + 1,
                end.entries
            ));
        }
        let mut entry = Declared {
            name: bytes[name_at..extra_at].to_vec(),
            compressed: u64::from(u32_at(header, 20)),
            size: u64::from(u32_at(header, 24)),
            offset: u64::from(u32_at(header, 42)),
            method: u16_at(header, 10),
            flags: u16_at(header, 8),
            made_by: u16_at(header, 4),
            external: u32_at(header, 38),
        };
        zip64_sizes(&mut entry, &bytes[extra_at..extra_at + extra_len]);
        entries.push(entry);
        at = next;
    }
    if at != bytes.len() {
        // Some readers read headers until the directory's size is used up, others stop at the
        // declared count: the entries that one sees and the other does not are refused.
        return Err(format!(
            "the central directory holds {} bytes after the {} entries the end record declares",
            bytes.len() - at,
            end.entries
        ));
    }
    Ok(entries)
}

/// Replaces the 32-bit sizes and offset that are all ones by their ZIP64 extra field values.
fn zip64_sizes(entry: &mut Declared, mut extra: &[u8]) {
    while extra.len() >= 4 {
        let id = u16_at(extra, 0);
        let len = usize::from(u16_at(extra, 2));
        let Some(data) = extra.get(4..4 + len) else {
            return;
        };
        if id == 0x0001 {
            let mut values = data.chunks_exact(8).map(|c| u64_at(c, 0));
            for field in [&mut entry.size, &mut entry.compressed, &mut entry.offset] {
                if *field == 0xffff_ffff {
                    match values.next() {
                        Some(v) => *field = v,
                        None => return,
                    }
                }
            }
            return;
        }
        extra = &extra[4 + len..];
    }
}

/// Why an entry's name could point outside the directory a package is unpacked to, if it
/// could: an absolute path, a drive, or `..`.
pub fn unsafe_path(name: &str) -> Option<String> {
    let absolute =
        name.starts_with('/') || name.starts_with('\\') || name.as_bytes().get(1) == Some(&b':');
    if absolute {
        return Some(
            "the path is absolute: paths in a package are relative to its root".to_string(),
        );
    }
    if name.split(['/', '\\']).any(|part| part == "..") {
        return Some("the path contains `..`: paths in a package must stay inside it".to_string());
    }
    None
}

/// File types a Unix mode can carry besides regular files, directories and links.
fn special_type(mode: u32) -> Option<&'static str> {
    match mode & 0o170_000 {
        0o010_000 => Some("a named pipe"),
        0o020_000 => Some("a character device"),
        0o060_000 => Some("a block device"),
        0o140_000 => Some("a socket"),
        _ => None,
    }
}

fn check_entries(entries: &[Declared], end: &End, limits: &Limits) -> Vec<Finding> {
    let mut names = NamesSeen::default();
    let mut findings = Vec::new();
    for entry in entries {
        let mut problems = Problems::default();
        check_name(entry, limits, &mut names, &mut problems);
        check_duplicate(entry, &mut names, &mut problems);
        check_type(entry, &mut problems);
        check_compression(entry, &mut problems);
        check_size(entry, limits, &mut problems);
        findings.extend(problems.into_findings(&entry.display_name()));
    }
    findings.extend(check_total(entries, limits));
    findings.extend(overlaps(entries, end));
    findings
}

/// The problems found in one entry, in the order they were found, before they are named after it.
#[derive(Default)]
struct Problems(Vec<(Rule, String)>);

impl Problems {
    fn push(&mut self, rule: Rule, message: String) {
        self.0.push((rule, message));
    }

    fn into_findings(self, shown: &str) -> impl Iterator<Item = Finding> + '_ {
        self.0
            .into_iter()
            .map(move |(rule, message)| Finding::new(shown, rule, message))
    }
}

/// The names of the entries checked so far: exactly, and folded to lower case.
#[derive(Default)]
struct NamesSeen<'a> {
    exact: BTreeMap<&'a [u8], usize>,
    folded: BTreeMap<String, String>,
}

/// Names: empty, too long, not UTF-8, and (when UTF-8) what the text of the name says.
fn check_name(entry: &Declared, limits: &Limits, names: &mut NamesSeen, problems: &mut Problems) {
    if entry.name.is_empty() {
        problems.push(
            Rule::EntryName,
            "the entry has an empty name: every entry is a file or a directory with a name"
                .to_string(),
        );
    }
    if entry.name.len() > limits.name_bytes {
        problems.push(
            Rule::EntryName,
            format!(
                "the name is {} bytes long but at most {} are allowed: file systems refuse longer names, so the package would not unpack",
                entry.name.len(),
                limits.name_bytes
            ),
        );
    }
    match std::str::from_utf8(&entry.name) {
        Err(_) => problems.push(
            Rule::EntryName,
            "the name is not UTF-8: it would unpack under a different name on each system, so name entries in UTF-8".to_string(),
        ),
        Ok(name) => check_name_text(name, names, problems),
    }
}

/// A UTF-8 name: control characters, a case-insensitive clash, an unsafe path, a nested archive.
fn check_name_text(name: &str, names: &mut NamesSeen, problems: &mut Problems) {
    if name.chars().any(char::is_control) {
        problems.push(
            Rule::EntryName,
            "the name holds a control character: name entries with printable characters only"
                .to_string(),
        );
    }
    check_case_clash(name, names, problems);
    if let Some(problem) = unsafe_path(name) {
        problems.push(Rule::UnsafePath, problem);
    }
    let lower = name.to_ascii_lowercase();
    if [".sparkpkg", ".zip", ".jar"]
        .iter()
        .any(|s| lower.ends_with(s))
    {
        problems.push(
            Rule::Nested,
            "the entry is an archive inside the package: Spark never unpacks nested packages, so put the libraries themselves in the package".to_string(),
        );
    }
}

/// A name that differs from an earlier one only in case.
fn check_case_clash(name: &str, names: &mut NamesSeen, problems: &mut Problems) {
    let key = name.trim_end_matches('/').to_lowercase();
    if let Some(other) = names.folded.get(&key).filter(|o| o.as_str() != name) {
        problems.push(
            Rule::Duplicate,
            format!(
                "the name differs from `{}` only in case: on a case-insensitive file system (macOS, Windows) one overwrites the other, so rename one",
                other.escape_debug()
            ),
        );
    } else {
        names.folded.insert(key, name.to_string());
    }
}

/// The second entry of one name (reported once, however many follow).
fn check_duplicate<'a>(entry: &'a Declared, names: &mut NamesSeen<'a>, problems: &mut Problems) {
    let count = names.exact.entry(&entry.name).or_insert(0);
    *count += 1;
    if *count == 2 {
        problems.push(
            Rule::Duplicate,
            "the archive holds more than one entry of this name: which one is unpacked depends on the tool, so keep one".to_string(),
        );
    }
}

/// Types: symbolic links and special files.
fn check_type(entry: &Declared, problems: &mut Problems) {
    if entry
        .unix_mode()
        .is_some_and(|mode| mode & 0o170_000 == 0o120_000)
    {
        problems.push(
            Rule::UnsafePath,
            "the entry is a symbolic link: a package holds regular files only, so it cannot point outside the directory it is unpacked to".to_string(),
        );
    }
    if let Some(kind) = entry.unix_mode().and_then(special_type) {
        problems.push(
            Rule::UnsafePath,
            format!("the entry is {kind}: a package holds regular files only"),
        );
    }
}

/// Compression: encryption, a method other than deflate or none, stored sizes that disagree.
fn check_compression(entry: &Declared, problems: &mut Problems) {
    if entry.flags & 1 != 0 {
        problems.push(
            Rule::Archive,
            "the entry is encrypted: verify cannot check it and Spark cannot load it".to_string(),
        );
    }
    if !matches!(entry.method, 0 | 8) {
        problems.push(
            Rule::Archive,
            format!(
                "the entry is compressed with method {}: a package uses deflate (8) or no compression (0)",
                entry.method
            ),
        );
    } else if entry.method == 0 && entry.compressed != entry.size {
        problems.push(
            Rule::Archive,
            format!(
                "the entry is stored uncompressed but declares {} stored and {} unpacked",
                bytes(entry.compressed),
                bytes(entry.size)
            ),
        );
    }
}

/// Sizes: above the cap for its kind of entry, or a ratio only a zip bomb reaches.
fn check_size(entry: &Declared, limits: &Limits, problems: &mut Problems) {
    let cap = if entry.name == MANIFEST_NAME.as_bytes() {
        limits.manifest_bytes
    } else {
        limits.entry_bytes
    };
    if entry.size > cap {
        problems.push(
            Rule::Limit,
            format!(
                "the entry unpacks to {} but an entry may unpack to at most {}",
                bytes(entry.size),
                bytes(cap)
            ),
        );
    } else if entry.size > limits.ratio_floor
        && entry.size / entry.compressed.max(1) >= limits.ratio
    {
        problems.push(
            Rule::Limit,
            format!(
                "the entry unpacks to {} from {}, a ratio above {}:1: a library compresses a few times at most, so this is a zip bomb",
                bytes(entry.size),
                bytes(entry.compressed),
                limits.ratio
            ),
        );
    }
}

/// The size of all entries unpacked, against the package's cap.
fn check_total(entries: &[Declared], limits: &Limits) -> Option<Finding> {
    let total = entries
        .iter()
        .fold(0u64, |total, entry| total.saturating_add(entry.size));
    (total > limits.total_bytes).then(|| {
        Finding::new(
            "(package)",
            Rule::Limit,
            format!(
                "the entries unpack to {} in all but a package may unpack to at most {}",
                bytes(total),
                bytes(limits.total_bytes)
            ),
        )
    })
}

/// Entries whose bytes overlap another entry's or the central directory: zip has no links, but
/// two headers pointing at one stream give one content two names, and many of them multiply a
/// small file into a huge unpacked size (the overlapping-entries zip bomb).
fn overlaps(entries: &[Declared], end: &End) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut by_offset: Vec<&Declared> = entries.iter().collect();
    by_offset.sort_by_key(|e| e.offset);
    let central_start = end.directory_offset.min(end.position);
    for (i, entry) in by_offset.iter().enumerate() {
        // The local header is at least 30 bytes and the name; its extra field can only add.
        let least_end = entry
            .offset
            .saturating_add(LOCAL_HEADER_LEN)
            .saturating_add(entry.name.len() as u64)
            .saturating_add(entry.compressed);
        let next = by_offset.get(i + 1);
        let (limit, what) = match next {
            Some(next) => (next.offset, format!("`{}`", next.display_name())),
            None => (central_start, "the central directory".to_string()),
        };
        if least_end > limit {
            findings.push(Finding::new(
                &entry.display_name(),
                Rule::Archive,
                format!(
                    "the entry's bytes overlap those of {what}: entries of a zip archive never share bytes; overlapping entries give one content two names or multiply a small file into a huge one"
                ),
            ));
        }
    }
    findings
}

/// How deep arrays and objects nest in `json`, strings skipped; read without recursion, so any
/// depth costs one pass.
pub fn json_depth(json: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in json {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A size for messages: bytes, KiB, MiB or GiB.
pub fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            return if n.is_multiple_of(size) {
                format!("{} {unit}", n / size)
            } else {
                format!("{:.1} {unit}", n as f64 / size as f64)
            };
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(name: &str, offset: u64, compressed: u64, size: u64) -> Declared {
        Declared {
            name: name.as_bytes().to_vec(),
            compressed,
            size,
            offset,
            method: 8,
            flags: 0,
            made_by: 3 << 8,
            external: 0o100_644 << 16,
        }
    }

    /// The end record of entries laid one after the other, names of `name_len` bytes.
    fn end_after(entries: &[Declared]) -> End {
        let last = entries
            .iter()
            .map(|e| e.offset + 30 + e.name.len() as u64 + e.compressed);
        let start = last.max().unwrap_or(0);
        End {
            entries: entries.len() as u64,
            directory_size: 100,
            directory_offset: start,
            position: start + 100,
            record_at: start + 100,
            comment_len: 0,
        }
    }

    fn rules(entries: &[Declared]) -> Vec<(String, &'static str)> {
        check_entries(entries, &end_after(entries), &Limits::default())
            .into_iter()
            .map(|f| (f.file, f.rule.name()))
            .collect()
    }

    #[test]
    fn a_package_as_sparkds_and_zip_write_it_passes() {
        let manifest = declared(MANIFEST_NAME, 0, 120, 300);
        // A 40 MiB library that compresses 4 times, and a 512 KiB file of one repeated byte,
        // below the floor of the ratio rule.
        let library = declared(
            "linux-x86_64/libspark_datasource_demo.so",
            200,
            10 << 20,
            40 << 20,
        );
        let notices = declared(
            "THIRD-PARTY-NOTICES",
            200 + 30 + 40 + (10 << 20),
            600,
            512 << 10,
        );
        let mut directory = declared("linux-x86_64/", 300 + 30 + 40 + (10 << 20) + 600, 0, 0);
        directory.method = 0;
        directory.external = 0o040_755 << 16;
        assert_eq!(rules(&[manifest, library, notices, directory]), vec![]);
    }

    #[test]
    fn entries_that_collide_or_overlap_are_named() {
        let a = declared("lib/a.so", 0, 100, 100);
        let b = declared("LIB/A.so", 200, 100, 100);
        let c = declared("lib/c.so", 250, 100, 100); // starts inside b's bytes
        let found = rules(&[a, b, c]);
        assert!(
            found.contains(&("LIB/A.so".to_string(), "duplicate-name")),
            "{found:?}"
        );
        assert!(
            found.contains(&("LIB/A.so".to_string(), "archive")),
            "{found:?}"
        );
        assert!(
            !found.iter().any(|(file, _)| file == "lib/a.so"),
            "{found:?}"
        );
    }

    #[test]
    fn json_depth_skips_strings() {
        assert_eq!(json_depth(br#"{"a": ["[[[", "\"{{"]}"#), 2);
        assert_eq!(json_depth(b"[[[[]]]]"), 4);
        assert_eq!(json_depth(b"1"), 0);
    }

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(bytes(12), "12 bytes");
        assert_eq!(bytes(64 * 1024), "64 KiB");
        assert_eq!(bytes(3 * (1 << 29)), "1.5 GiB");
    }

    #[test]
    fn zip64_extra_fields_replace_only_saturated_fields() {
        let mut entry = Declared {
            name: b"a".to_vec(),
            compressed: 10,
            size: 0xffff_ffff,
            offset: 0xffff_ffff,
            method: 8,
            flags: 0,
            made_by: 0,
            external: 0,
        };
        let mut extra = vec![1, 0, 16, 0];
        extra.extend_from_slice(&(5u64 << 32).to_le_bytes());
        extra.extend_from_slice(&77u64.to_le_bytes());
        zip64_sizes(&mut entry, &extra);
        assert_eq!(
            (entry.size, entry.compressed, entry.offset),
            (5 << 32, 10, 77)
        );
    }
}
