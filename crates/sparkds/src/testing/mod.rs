//! What the integration tests of a data source need, so that a project holds only its own tests:
//! its library, built by `cargo test` and loaded once as Spark loads it, the names of its
//! `export!` line, and the message of an error.
//!
//! The package under test is the one `cargo test` runs the tests of: cargo sets
//! `CARGO_PKG_NAME` and `CARGO_MANIFEST_DIR` for them, and its library is the `[lib] name` of
//! its Cargo.toml, the name that Spark looks for (`spark_datasource_<package name>` when the
//! manifest names none), with its `export!` line in `src/lib.rs`.
//!
//! [`Conformance`] is the conformance kit: the checks that every data source should pass, in
//! one line of a project's tests.
//!
//! ```no_run
//! use sparkds::testing::{library, message};
//!
//! #[test]
//! fn a_malformed_option_is_refused() -> sparkds::Result<()> {
//!     let error = message(library()?.batch_read().option("end", "ten").run());
//!     assert!(error.contains("option `end`"), "{error}");
//!     Ok(())
//! }
//! ```

mod conformance;
pub mod http;
mod rows;

pub use conformance::{Conformance, ConformanceReport, KitCheck, Verdict, UNKNOWN_OPTION};

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::library::Library;

/// No options: the defaults of the data source, for the calls that take options.
///
/// ```no_run
/// # fn main() -> sparkds::Result<()> {
/// use sparkds::testing::{library, NO_OPTIONS};
///
/// println!("{}", library()?.capabilities(NO_OPTIONS)?);
/// # Ok(()) }
/// ```
pub const NO_OPTIONS: [(&str, &str); 0] = [];

/// The library of the package under test, loaded once for the whole test binary with
/// `create_options`, and the options it was loaded with.
static LIBRARY: OnceLock<(Vec<(String, String)>, Library)> = OnceLock::new();

/// The library that `cargo test` built for the package under test, loaded once per test
/// binary, as Spark loads it, with no option given to every `create`.
///
/// ```no_run
/// # fn main() -> sparkds::Result<()> {
/// let read = sparkds::testing::library()?.batch_read().option("end", "3").run()?;
/// assert_eq!(read.num_rows(), 3);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// As [`library_with_options`].
pub fn library() -> Result<&'static Library> {
    library_with_options(&NO_OPTIONS)
}

/// The library that `cargo test` built for the package under test, loaded once per test
/// binary, which gives `create_options` to every `create` before the options of each test
/// (those win when they set the same key): the options that the source requires, such as a URL
/// or a path, so that each test need not repeat them.
///
/// ```no_run
/// # fn main() -> sparkds::Result<()> {
/// const CREATE_OPTIONS: &[(&str, &str)] = &[("path", "/tmp/table")];
///
/// let library = sparkds::testing::library_with_options(CREATE_OPTIONS)?;
/// let read = library.batch_read().run()?;
/// println!("{}", sparkds::render::batches(&read.batches()));
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// When the tests do not run under cargo, when the library was not built (its `[lib]` has no
/// `cdylib`) or cannot be loaded, when it breaks a rule while loading, and when the test binary
/// loaded it already with other options: one set of options per test binary.
pub fn library_with_options(create_options: &[(&str, &str)]) -> Result<&'static Library> {
    let wanted: Vec<(String, String)> = create_options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let (options, library) = match LIBRARY.get() {
        Some(loaded) => loaded,
        None => {
            let name = library_name()?;
            let loaded = Library::load(crate::cdylib(&name)?)?.with_options(wanted.clone());
            LIBRARY.get_or_init(|| (wanted.clone(), loaded))
        }
    };
    if *options != wanted {
        return Err(Error::usage(format!(
            "this test binary loaded the library with the create options {options:?}, not \
             {wanted:?}: give every test of a binary the same options, or give a test its own \
             with `.option(key, value)`"
        )));
    }
    Ok(library)
}

/// The library's name: the `[lib] name` of the package's Cargo.toml, else the convention's.
fn library_name() -> Result<String> {
    let manifest = PathBuf::from(package_variable("CARGO_MANIFEST_DIR")?).join("Cargo.toml");
    let named = std::fs::read_to_string(&manifest)
        .ok()
        .and_then(|text| lib_name(&text));
    match named {
        Some(name) => Ok(name),
        None => Ok(spark_datasource_core::library_file::library_name(
            &package_variable("CARGO_PKG_NAME")?.replace('-', "_"),
        )),
    }
}

/// The `name = "..."` of the `[lib]` table of a Cargo.toml.
fn lib_name(manifest: &str) -> Option<String> {
    let mut in_lib = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_lib = line.split('#').next().map(str::trim) == Some("[lib]");
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if in_lib && key.trim() == "name" {
            return value
                .trim()
                .strip_prefix('"')?
                .split('"')
                .next()
                .map(str::to_string);
        }
    }
    None
}

/// The names of the `export!` line of the package under test, in their order, as its built
/// library states them ([`Library::exported`]): what it declares to Spark, capabilities and
/// pushdowns.
///
/// ```no_run
/// # fn main() -> sparkds::Result<()> {
/// let names = sparkds::testing::exported()?;
/// assert!(names.iter().any(|n| n == "batch_read"));
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// As [`library`], and when the library was not made with `spark_datasource::export!`.
pub fn exported() -> Result<Vec<String>> {
    let library = library()?;
    library.exported().map(<[String]>::to_vec).ok_or_else(|| {
        Error::usage(format!(
            "`{}` does not state its export! line (it has no `spark_ds_exported_v1`): make it \
             with `spark_datasource::export!(Type: capability, ...)` of this version of the SDK",
            library.path().display()
        ))
    })
}

/// Whether the `export!` line of the package under test names `name`: a test of a capability
/// or a pushdown runs only when it does.
///
/// ```no_run
/// # fn main() -> sparkds::Result<()> {
/// use sparkds::testing::{exports, library};
///
/// if exports("push_limit") {
///     let read = library()?.batch_read().option("end", "100").limit(3).run()?;
///     assert_eq!(read.num_rows(), 3);
/// }
/// # Ok(()) }
/// ```
///
/// # Panics
///
/// When [`exported`] fails: the message says why, and no test can tell what to run.
pub fn exports(name: &str) -> bool {
    match exported() {
        Ok(names) => names.iter().any(|n| n == name),
        Err(e) => panic!("cannot read the export! line: {e}"),
    }
}

/// Checks that `library` declares to Spark exactly the capabilities that the `export!` line
/// of the package under test names (its pushdowns are functions of the reader, not
/// capabilities), creating a source with the library's create options only.
///
/// ```no_run
/// #[test]
/// fn declares_exactly_the_capabilities_of_its_export_line() -> sparkds::Result<()> {
///     sparkds::testing::check_export_line(sparkds::testing::library()?)
/// }
/// ```
///
/// # Errors
///
/// When they differ (the message names both), when `create` fails, or as [`exported`].
pub fn check_export_line(library: &Library) -> Result<()> {
    let exported = exported()?;
    let declared = library.capabilities(NO_OPTIONS)?.names();
    let named: Vec<String> = declared_names()
        .filter(|capability| {
            exported
                .iter()
                .any(|name| capability.eq_ignore_ascii_case(&format!("SPARK_DS_{name}")))
        })
        .map(str::to_string)
        .collect();
    if declared != named {
        return Err(Error::usage(format!(
            "the library declares {declared:?}, but the export! line of src/lib.rs names {named:?}: \
             build the library from the current sources (`cargo test` does)"
        )));
    }
    Ok(())
}

/// Every capability's name, in the header's order.
fn declared_names() -> impl Iterator<Item = &'static str> {
    crate::Capabilities(u64::MAX).names().into_iter()
}

/// The message of an error, for assertions on the exact text a user sees.
///
/// ```no_run
/// # fn main() -> sparkds::Result<()> {
/// use sparkds::testing::{library, message};
///
/// let error = message(library()?.batch_read().option("end", "ten").run());
/// assert!(error.contains("option `end` must be a non-negative integer, got `ten`"), "{error}");
/// # Ok(()) }
/// ```
///
/// # Panics
///
/// When `result` is not an error: the test expected one.
pub fn message<T: std::fmt::Debug>(result: Result<T>) -> String {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => error.to_string(),
    }
}

/// Every file under `root`, relative to it and in order, each with its text: what a write left,
/// for a snapshot. A write that leaves nothing, staging included, lists as `""`.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir(dir.path().join("data"))?;
/// std::fs::write(dir.path().join("data").join("a.jsonl"), "{\"id\":1}\n")?;
/// assert_eq!(sparkds::testing::listing(dir.path()), "== data/a.jsonl\n{\"id\":1}");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn listing(root: &std::path::Path) -> String {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, root, out);
            } else if let Ok(relative) = path.strip_prefix(root) {
                let name = relative.to_string_lossy().replace('\\', "/");
                let content = std::fs::read_to_string(&path).unwrap_or_default();
                out.push(format!("== {name}\n{}", content.trim_end()));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.join("\n")
}

/// A variable that cargo sets when it runs a package's tests.
fn package_variable(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| {
        Error::usage(format!(
            "`{name}` is not set: run the tests with `cargo test`, which sets it to tell which \
             package is under test"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_is_the_text_of_the_error() {
        let result: Result<()> = Err(Error::usage("option `end` is required"));
        assert_eq!(message(result), "option `end` is required");
    }

    #[test]
    #[should_panic(expected = "expected an error, got 3")]
    fn message_of_a_success_panics() {
        message(Ok(3));
    }

    #[test]
    fn the_library_is_named_by_the_lib_table() {
        let manifest = "[package]\nname = \"postgres_example\"\n\n[lib]\n# Spark's name\n\
                        name = \"spark_datasource_postgres\" # lib<name>.so\n\
                        crate-type = [\"cdylib\"]\n";
        assert_eq!(
            lib_name(manifest).as_deref(),
            Some("spark_datasource_postgres")
        );
        assert_eq!(lib_name("[package]\nname = \"tiny\"\n"), None);
    }

    #[test]
    fn every_capability_has_a_name() {
        assert_eq!(
            declared_names().collect::<Vec<_>>(),
            [
                "SPARK_DS_BATCH_READ",
                "SPARK_DS_MICRO_BATCH_READ",
                "SPARK_DS_BATCH_WRITE",
                "SPARK_DS_STREAMING_WRITE",
                "SPARK_DS_TRUNCATE"
            ]
        );
    }

    #[test]
    fn exported_needs_the_library_of_the_package_under_test() {
        // sparkds builds no data source library: the error says which file it looked for.
        let error = exported().expect_err("sparkds exports no data source");
        assert!(
            error.to_string().contains("spark_datasource_sparkds"),
            "{error}"
        );
    }
}
