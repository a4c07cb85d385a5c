//! What `verify` reads from one library with the `object` crate: its format and architecture,
//! whether it exports `spark_ds_init`, the libraries it loads, and the glibc symbol versions it
//! needs. Each rule that fails becomes a [`Finding`]; nothing here stops at the first one.

use object::macho::LC_ID_DYLIB;
use object::read::macho::LoadCommandVariant;
use object::{elf, FileKind, ImportFlags, Object, ObjectKind};

use super::{Finding, Rule};
use spark_datasource_core::library_file::Os;

use crate::{describe, Platform};

/// The exported function Spark calls (specification, section "How It Works").
const INIT: &str = "spark_ds_init";

/// What the rules about dependencies and glibc accept beyond the defaults.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Newest glibc version the Linux libraries may need, `[major, minor]`.
    pub glibc: Vec<u32>,
    /// Libraries allowed on top of the platform's allow-list, by file name.
    pub allow: Vec<String>,
}

/// Checks one library against its platform; every broken rule is pushed to `findings`.
pub fn check(entry: &str, bytes: &[u8], platform: Platform, policy: &Policy) -> Vec<Finding> {
    let mut findings = Vec::new();
    let finding = |rule, message: String| Finding::new(entry, rule, message);
    if let Ok(FileKind::MachOFat32 | FileKind::MachOFat64) = FileKind::parse(bytes) {
        findings.push(finding(
            Rule::Format,
            format!(
                "a universal (fat) Mach-O binary, but `{platform}` needs a thin {}: extract it with `lipo -thin`",
                describe(platform.binary_format(), platform.architecture())
            ),
        ));
        return findings;
    }
    let file = match object::File::parse(bytes) {
        Ok(file) => file,
        Err(e) => {
            findings.push(finding(
                Rule::Format,
                format!(
                    "not a shared library that `{platform}` can load ({e}); it needs a {}",
                    describe(platform.binary_format(), platform.architecture())
                ),
            ));
            return findings;
        }
    };
    let found = describe(file.format(), file.architecture());
    let expected = describe(platform.binary_format(), platform.architecture());
    if file.format() != platform.binary_format() {
        findings.push(finding(
            Rule::Format,
            format!("the library is {found} but `{platform}` needs {expected}: build it for {} or list it under its own platform", platform.rust_target()),
        ));
        // Every other rule reads format-specific tables that mean nothing for another format.
        return findings;
    }
    if file.architecture() != platform.architecture() || !file.is_64() {
        findings.push(finding(
            Rule::Architecture,
            format!("the library is {found} but `{platform}` needs {expected}: build it for {} or list it under its own platform", platform.rust_target()),
        ));
    }
    if file.kind() != ObjectKind::Dynamic {
        findings.push(finding(
            Rule::Format,
            format!("the library is not a shared library but a {:?} file: build it as a shared library (`crate-type = [\"cdylib\"]`, or `-shared`)", file.kind()),
        ));
    }
    if !exports_init(&file) {
        findings.push(finding(
            Rule::Export,
            format!("the library does not export `{INIT}`: declare it with `SPARK_DS_EXPORT` in C or C++, or `#[no_mangle] pub extern \"C\"` in Rust"),
        ));
    }
    match dependencies(&file) {
        Ok(deps) => {
            for dep in deps {
                if let Some(message) = dependency_problem(&dep, platform.os(), &policy.allow) {
                    findings.push(finding(Rule::Dependency, message));
                }
            }
        }
        Err(e) => findings.push(finding(
            Rule::Format,
            format!("cannot read the dependencies of the library: {e}"),
        )),
    }
    if platform.os() == Os::Linux {
        if let Some(message) = glibc_problem(&file, &policy.glibc) {
            findings.push(finding(Rule::Glibc, message));
        }
    }
    findings
}

fn exports_init(file: &object::File<'_>) -> bool {
    // Mach-O symbol names carry a leading underscore; ELF and PE names do not.
    let wanted: &[u8] = if file.format() == object::BinaryFormat::MachO {
        b"_spark_ds_init"
    } else {
        INIT.as_bytes()
    };
    file.exports().is_ok_and(|mut exports| {
        exports.any(|e| {
            e.is_ok_and(|e| matches!(e.name(), object::NameOrOrdinal::Name(n) if n == wanted))
        })
    })
}

/// The libraries the dynamic loader loads with this one: `DT_NEEDED` entries of ELF, the dylib
/// load commands of Mach-O, the import table of PE.
fn dependencies(file: &object::File<'_>) -> object::Result<Vec<String>> {
    let mut deps = Vec::new();
    match file {
        object::File::Elf64(elf_file) => {
            let table = elf_file.elf_dynamic_table()?;
            for dynamic in &table {
                if dynamic.tag == elf::DT_NEEDED {
                    deps.push(String::from_utf8_lossy(table.string(dynamic)?).into_owned());
                }
            }
        }
        object::File::MachO64(macho) => {
            let mut commands = macho.macho_load_commands()?;
            while let Some(command) = commands.next()? {
                if command.cmd() == LC_ID_DYLIB {
                    continue;
                }
                if let LoadCommandVariant::Dylib(dylib) = command.variant()? {
                    let name = command.string(macho.endian(), dylib.dylib.name)?;
                    deps.push(String::from_utf8_lossy(name).into_owned());
                }
            }
        }
        _ => {
            for import in file.imports()? {
                let import = import?;
                let library = String::from_utf8_lossy(import.library()).into_owned();
                if !library.is_empty() {
                    deps.push(library);
                }
            }
        }
    }
    deps.sort();
    deps.dedup();
    Ok(deps)
}

/// Libraries every Linux node with glibc has. Anything else (libarrow, libstdc++, libssl) must be
/// linked statically: Spark loads the library on every node of a cluster, and the nodes only have
/// what their image ships (specification, section "Example in C++").
const LINUX_ALLOWED: &[&str] = &[
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "libpthread.so.0",
    "librt.so.1",
    "libgcc_s.so.1",
    "libutil.so.1",
];

/// Libraries and frameworks that are part of macOS itself, libc++ included: unlike libstdc++ on
/// Linux, it ships with the operating system and keeps its ABI.
const MACOS_ALLOWED: &[&str] = &[
    "/usr/lib/libSystem.B.dylib",
    "/usr/lib/libiconv.2.dylib",
    "/usr/lib/libresolv.9.dylib",
    "/usr/lib/libz.1.dylib",
    "/usr/lib/libc++.1.dylib",
    "/usr/lib/libc++abi.dylib",
    "/usr/lib/libobjc.A.dylib",
];

/// System DLLs of every supported Windows, compared case-insensitively. The C runtime is not one
/// of them: a library links it statically (`+crt-static`), since the nodes need not have the
/// Visual C++ redistributable.
const WINDOWS_ALLOWED: &[&str] = &[
    "kernel32.dll",
    "ntdll.dll",
    "bcrypt.dll",
    "bcryptprimitives.dll",
    "advapi32.dll",
    "ws2_32.dll",
    "userenv.dll",
    "secur32.dll",
    "crypt32.dll",
    "ncrypt.dll",
    "ole32.dll",
    "oleaut32.dll",
    "shell32.dll",
    "user32.dll",
    "iphlpapi.dll",
    "dbghelp.dll",
    "psapi.dll",
    "shlwapi.dll",
    "synchronization.dll",
];

/// Why `dep` is not allowed on `os`, if it is not.
fn dependency_problem(dep: &str, os: Os, allow: &[String]) -> Option<String> {
    let file_name = dep.rsplit(['/', '\\']).next().unwrap_or(dep);
    let explicitly_allowed = allow
        .iter()
        .any(|a| a.eq_ignore_ascii_case(dep) || a.eq_ignore_ascii_case(file_name));
    if explicitly_allowed {
        return None;
    }
    let lower = dep.to_ascii_lowercase();
    let allowed = match os {
        Os::Linux => LINUX_ALLOWED.contains(&dep) || dep.starts_with("ld-linux"),
        Os::MacOs => MACOS_ALLOWED.contains(&dep) || dep.starts_with("/System/Library/Frameworks/"),
        Os::Windows => {
            if is_windows_crt(&lower) {
                return Some(format!(
                    "the library loads `{dep}`, the dynamic C runtime, which the nodes need not have: link the C runtime statically (`-C target-feature=+crt-static` in Rust, `/MT` in C or C++)"
                ));
            }
            WINDOWS_ALLOWED.contains(&lower.as_str())
                || (lower.starts_with("api-ms-win-") && !lower.starts_with("api-ms-win-crt-"))
        }
    };
    if allowed {
        return None;
    }
    let hint = if lower.contains("arrow") {
        "link Arrow statically: Spark provides no Arrow library to native code"
    } else {
        "link it statically"
    };
    Some(format!(
        "the library loads `{dep}`, which is not on the allow-list of system libraries: {hint}, or pass `--allow {file_name}` if every node of the cluster has it"
    ))
}

fn is_windows_crt(lower: &str) -> bool {
    lower.starts_with("vcruntime")
        || lower.starts_with("msvcp")
        || lower.starts_with("ucrtbase")
        || lower.starts_with("api-ms-win-crt-")
}

/// Parses `2.28` or `GLIBC_2.28` into `[2, 28]`.
pub fn parse_glibc_version(text: &str) -> Option<Vec<u32>> {
    let text = text.strip_prefix("GLIBC_").unwrap_or(text);
    let parts: Option<Vec<u32>> = text.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| (2..=3).contains(&p.len()))
}

/// The symbols that need a glibc newer than the baseline, if any: the library would fail to load
/// on a node with an older glibc, with "version `GLIBC_2.34' not found".
fn glibc_problem(file: &object::File<'_>, baseline: &[u32]) -> Option<String> {
    let mut too_new: Vec<(Vec<u32>, String)> = Vec::new();
    for import in file.imports().ok()? {
        let Ok(import) = import else {
            continue;
        };
        let ImportFlags::Elf {
            version: Some(version),
            ..
        } = import.flags()
        else {
            continue;
        };
        let version = String::from_utf8_lossy(version);
        let Some(parsed) = version
            .starts_with("GLIBC_")
            .then(|| parse_glibc_version(&version))
            .flatten()
        else {
            continue;
        };
        if parsed.as_slice() > baseline {
            let name = match import.name() {
                object::NameOrOrdinal::Name(n) => String::from_utf8_lossy(n).into_owned(),
                object::NameOrOrdinal::Ordinal(o) => format!("#{o}"),
            };
            too_new.push((parsed, format!("{name}@{version}")));
        }
    }
    if too_new.is_empty() {
        return None;
    }
    too_new.sort();
    too_new.dedup();
    let newest = too_new
        .iter()
        .map(|(v, _)| v.clone())
        .max()
        .unwrap_or_default();
    let symbols: Vec<&str> = too_new.iter().map(|(_, s)| s.as_str()).collect();
    let join = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(".");
    Some(format!(
        "the library needs glibc {} but the baseline is {} ({}): build against glibc {} (e.g. `cargo zigbuild --target <triple>.{}`), or pass `--glibc {}` if every node has it",
        join(&newest),
        join(baseline),
        symbols.join(", "),
        join(baseline),
        join(baseline),
        join(&newest),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_versions_compare_numerically() {
        assert_eq!(parse_glibc_version("GLIBC_2.2.5"), Some(vec![2, 2, 5]));
        assert!(parse_glibc_version("GLIBC_2.34").unwrap() > parse_glibc_version("2.28").unwrap());
        assert!(parse_glibc_version("GLIBC_2.3").unwrap() < parse_glibc_version("2.28").unwrap());
        assert_eq!(parse_glibc_version("GLIBC_PRIVATE"), None);
    }

    #[test]
    fn the_windows_crt_is_refused_but_system_dlls_pass() {
        assert!(dependency_problem("KERNEL32.dll", Os::Windows, &[]).is_none());
        assert!(dependency_problem("api-ms-win-core-synch-l1-2-0.dll", Os::Windows, &[]).is_none());
        assert!(dependency_problem("VCRUNTIME140.dll", Os::Windows, &[]).is_some());
        assert!(
            dependency_problem("api-ms-win-crt-runtime-l1-1-0.dll", Os::Windows, &[]).is_some()
        );
    }

    #[test]
    fn libstdcxx_needs_an_explicit_allow() {
        assert!(dependency_problem("libstdc++.so.6", Os::Linux, &[]).is_some());
        let allow = vec!["libstdc++.so.6".to_string()];
        assert!(dependency_problem("libstdc++.so.6", Os::Linux, &allow).is_none());
        assert!(dependency_problem("ld-linux-x86-64.so.2", Os::Linux, &[]).is_none());
        assert!(dependency_problem("libarrow.so.2400", Os::Linux, &[]).is_some());
    }
}
