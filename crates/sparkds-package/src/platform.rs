//! The platform keys of a `.sparkpkg` manifest and what each one implies about its library: the
//! file name Spark looks for, and the binary format and architecture the loader accepts.
//!
//! The keys are the ones the specification lists (section "Packages"); they are the platforms for
//! which Arrow Java ships its JNI library (section "Overview"), so no other key can ever load.

use std::fmt;

use object::{Architecture, BinaryFormat};
// The operating system of a platform decides the naming rule of its library file, which is
// `spark-datasource-core`'s (the host shares it).
use spark_datasource_core::library_file::Os;

/// A platform a package can carry a library for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Platform {
    /// Linux with glibc on x86_64.
    LinuxX86_64,
    /// Linux with glibc on aarch64.
    LinuxAarch64,
    /// macOS on Intel.
    OsxX86_64,
    /// macOS on Apple silicon.
    OsxAarch64,
    /// Windows on x86_64, MSVC.
    WindowsX86_64,
}

impl Platform {
    /// Every platform, in the order keys are listed in messages.
    pub const ALL: [Platform; 5] = [
        Platform::LinuxX86_64,
        Platform::LinuxAarch64,
        Platform::OsxX86_64,
        Platform::OsxAarch64,
        Platform::WindowsX86_64,
    ];

    /// The key of this platform in the manifest's `libraries` map.
    pub fn key(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "linux-x86_64",
            Platform::LinuxAarch64 => "linux-aarch64",
            Platform::OsxX86_64 => "osx-x86_64",
            Platform::OsxAarch64 => "osx-aarch64",
            Platform::WindowsX86_64 => "windows-x86_64",
        }
    }

    /// The platform of this process; `None` on one that packages cannot serve (such as Linux
    /// with musl, or a 32-bit machine). The JNI library picks a package's library with it, and
    /// the command the plugin's build for this machine.
    pub fn current() -> Option<Platform> {
        match (std::env::consts::OS, std::env::consts::ARCH) {
            ("linux", "x86_64") if cfg!(target_env = "gnu") => Some(Platform::LinuxX86_64),
            ("linux", "aarch64") if cfg!(target_env = "gnu") => Some(Platform::LinuxAarch64),
            ("macos", "x86_64") => Some(Platform::OsxX86_64),
            ("macos", "aarch64") => Some(Platform::OsxAarch64),
            ("windows", "x86_64") => Some(Platform::WindowsX86_64),
            _ => None,
        }
    }

    /// The platform of a manifest key, if the key is one Spark knows.
    pub fn from_key(key: &str) -> Option<Platform> {
        Platform::ALL.into_iter().find(|p| p.key() == key)
    }

    /// The known keys, comma separated, for messages.
    pub fn known_keys() -> String {
        Platform::ALL.map(Platform::key).join(", ")
    }

    /// The operating system part of the platform.
    pub fn os(self) -> Os {
        match self {
            Platform::LinuxX86_64 | Platform::LinuxAarch64 => Os::Linux,
            Platform::OsxX86_64 | Platform::OsxAarch64 => Os::MacOs,
            Platform::WindowsX86_64 => Os::Windows,
        }
    }

    /// The file name Spark looks for: `libspark_datasource_<name>.so` / `.dylib`,
    /// `spark_datasource_<name>.dll` (specification, section "Installed Libraries").
    pub fn library_file_name(self, data_source: &str) -> String {
        self.os().library_file_name(data_source)
    }

    /// The binary format the platform's loader reads.
    pub fn binary_format(self) -> BinaryFormat {
        match self.os() {
            Os::Linux => BinaryFormat::Elf,
            Os::MacOs => BinaryFormat::MachO,
            Os::Windows => BinaryFormat::Pe,
        }
    }

    /// The processor architecture of the platform.
    pub fn architecture(self) -> Architecture {
        match self {
            Platform::LinuxX86_64 | Platform::OsxX86_64 | Platform::WindowsX86_64 => {
                Architecture::X86_64
            }
            Platform::LinuxAarch64 | Platform::OsxAarch64 => Architecture::Aarch64,
        }
    }

    /// The Rust target that builds a library for this platform, named in fix-it messages.
    pub fn rust_target(self) -> &'static str {
        match self {
            Platform::LinuxX86_64 => "x86_64-unknown-linux-gnu",
            Platform::LinuxAarch64 => "aarch64-unknown-linux-gnu",
            Platform::OsxX86_64 => "x86_64-apple-darwin",
            Platform::OsxAarch64 => "aarch64-apple-darwin",
            Platform::WindowsX86_64 => "x86_64-pc-windows-msvc",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Names a format and architecture the way messages print them, e.g. `ELF x86_64`.
pub fn describe(format: BinaryFormat, architecture: Architecture) -> String {
    let format = match format {
        BinaryFormat::Elf => "ELF",
        BinaryFormat::MachO => "Mach-O",
        BinaryFormat::Pe => "PE",
        BinaryFormat::Coff => "COFF",
        BinaryFormat::Wasm => "Wasm",
        BinaryFormat::Xcoff => "XCOFF",
        _ => "unknown format",
    };
    let architecture = match architecture {
        Architecture::X86_64 => "x86_64",
        Architecture::Aarch64 => "aarch64",
        Architecture::I386 => "i386",
        Architecture::Arm => "arm",
        Architecture::Riscv64 => "riscv64",
        Architecture::PowerPc64 => "ppc64",
        Architecture::S390x => "s390x",
        Architecture::X86_64_X32 => "x32",
        _ => "an unknown architecture",
    };
    format!("{format} {architecture}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use spark_datasource_core::library_file::is_valid_data_source_name;

    #[test]
    fn this_machine_is_its_own_platform() {
        if let Some(platform) = Platform::current() {
            assert_eq!(platform.os(), Os::current());
            let architecture = if cfg!(target_arch = "aarch64") {
                Architecture::Aarch64
            } else {
                Architecture::X86_64
            };
            assert_eq!(platform.architecture(), architecture);
        }
    }

    #[test]
    fn data_source_names_are_lower_case_identifiers() {
        assert!(is_valid_data_source_name("rust_range"));
        assert!(is_valid_data_source_name("a1"));
        assert!(!is_valid_data_source_name("Rust_range"));
        assert!(!is_valid_data_source_name("1abc"));
        assert!(!is_valid_data_source_name("a-b"));
        assert!(!is_valid_data_source_name(""));
    }

    #[test]
    fn every_key_round_trips() {
        for p in Platform::ALL {
            assert_eq!(Platform::from_key(p.key()), Some(p));
        }
        assert_eq!(Platform::from_key("linux-ppc64le"), None);
    }
}
