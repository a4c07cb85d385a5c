//! The rule that ties a data source's name to the file name of its library (specification,
//! section "Installed Libraries"): Spark looks data source `<name>` up, in lower case, as
//! `libspark_datasource_<name>.so` on Linux, `libspark_datasource_<name>.dylib` on macOS and
//! `spark_datasource_<name>.dll` on Windows. A Rust library gets that file by naming its
//! `[lib]` `spark_datasource_<name>`.
//!
//! The host, the package format, the command and the JVM plugin's JNI library all name and read
//! library files through [`Os`]; the Python bridge keeps a copy (`_archive.py`), which the
//! packaging tests hold equal to this one.

/// What every library's file stem starts with, after the platform's `lib`: the `[lib] name` of
/// a Rust data source is `spark_datasource_<name>`.
pub const LIBRARY_NAME_PREFIX: &str = "spark_datasource_";

/// An operating system, as far as it decides the file name of a library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Os {
    /// Linux with glibc (and every other Unix but macOS, which names libraries alike).
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

impl Os {
    /// Every operating system, in the order of messages.
    pub const ALL: [Os; 3] = [Os::Linux, Os::MacOs, Os::Windows];

    /// The operating system this code runs on.
    pub const fn current() -> Os {
        if cfg!(windows) {
            Os::Windows
        } else if cfg!(target_os = "macos") {
            Os::MacOs
        } else {
            Os::Linux
        }
    }

    /// What the loader's file names start with: `lib`, or nothing on Windows.
    pub const fn file_prefix(self) -> &'static str {
        match self {
            Os::Windows => "",
            Os::Linux | Os::MacOs => "lib",
        }
    }

    /// What a shared library's file name ends with: `.so`, `.dylib` or `.dll`.
    pub const fn file_suffix(self) -> &'static str {
        match self {
            Os::Linux => ".so",
            Os::MacOs => ".dylib",
            Os::Windows => ".dll",
        }
    }

    /// The file that cargo (or a C build) makes of the library named `library`:
    /// `lib<library>.so`, `lib<library>.dylib`, `<library>.dll`.
    pub fn file_of_library(self, library: &str) -> String {
        format!("{}{library}{}", self.file_prefix(), self.file_suffix())
    }

    /// The file Spark looks for to load data source `data_source`:
    /// `libspark_datasource_<name>.so` / `.dylib`, `spark_datasource_<name>.dll`.
    pub fn library_file_name(self, data_source: &str) -> String {
        self.file_of_library(&library_name(data_source))
    }
}

/// The library name (a Rust crate's `[lib] name`) of data source `data_source`:
/// `spark_datasource_<name>`.
pub fn library_name(data_source: &str) -> String {
    format!("{LIBRARY_NAME_PREFIX}{data_source}")
}

/// The data source whose library the file named `file_name` (without directories) is, in lower
/// case as Spark looks it up: `libspark_datasource_My_Source.so` is `my_source`. Any of the
/// three suffixes, with or without `lib`, whatever the platform, so that a message about a file
/// built elsewhere still names its data source.
///
/// `None` when the name does not follow the rule: another suffix, no `spark_datasource_`, or
/// nothing after it.
pub fn data_source_name(file_name: &str) -> Option<String> {
    let stem = Os::ALL
        .iter()
        .find_map(|os| file_name.strip_suffix(os.file_suffix()))?;
    let stem = stem.strip_prefix("lib").unwrap_or(stem);
    stem.strip_prefix(LIBRARY_NAME_PREFIX)
        .filter(|name| !name.is_empty())
        .map(str::to_lowercase)
}

/// The name a host gives `create` for the library file `file_name`: its data source name when
/// the file follows the rule, else its name up to the first `.`, without `lib`, in lower case
/// (a library that a test loads under another name still runs).
pub fn name_for_create(file_name: &str) -> String {
    data_source_name(file_name).unwrap_or_else(|| {
        let stem = file_name.split('.').next().unwrap_or_default();
        stem.strip_prefix("lib").unwrap_or(stem).to_lowercase()
    })
}

/// Whether `name` is a valid data source name: lower case, `[a-z][a-z0-9_]*`. Spark looks a
/// library up by the lower-case name, and the name becomes part of a file name, so nothing else
/// is accepted.
pub fn is_valid_data_source_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_os_names_the_library_of_a_data_source_as_spark_looks_for_it() {
        let files = Os::ALL.map(|os| os.library_file_name("c_range"));
        assert_eq!(
            files,
            [
                "libspark_datasource_c_range.so",
                "libspark_datasource_c_range.dylib",
                "spark_datasource_c_range.dll",
            ]
        );
        for (os, file) in Os::ALL.into_iter().zip(files) {
            assert_eq!(
                data_source_name(&file).as_deref(),
                Some("c_range"),
                "{os:?}"
            );
        }
    }

    #[test]
    fn a_file_outside_the_rule_has_no_data_source_name() {
        assert_eq!(
            data_source_name("libspark_datasource_My_Source.so").as_deref(),
            Some("my_source")
        );
        for file in [
            "libother.so",
            "libspark_datasource_.so",
            "libspark_datasource_x.a",
            "libspark_datasource_x",
            "spark_datasource_x.so.1",
        ] {
            assert_eq!(data_source_name(file), None, "{file}");
        }
        assert_eq!(name_for_create("libOther.so"), "other");
        assert_eq!(name_for_create("spark_datasource_X.dll"), "x");
    }

    #[test]
    fn a_data_source_name_is_a_lower_case_letter_then_letters_digits_or_underscores() {
        for name in ["x", "c_range", "a1_"] {
            assert!(is_valid_data_source_name(name), "{name}");
        }
        for name in ["", "1x", "_x", "X", "a-b", "a.b", "a/b"] {
            assert!(!is_valid_data_source_name(name), "{name}");
        }
    }
}
