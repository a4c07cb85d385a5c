//! The vocabulary that the Spark native data source crates share, written once: what a library,
//! the host that loads it and the tools around them must agree on.
//!
//! - [`filters`]: the predicates of filter pushdown (`spark_datasource_filters.h`) and their
//!   binary encoding;
//! - [`capabilities`]: the specification's table of capabilities and the functions each
//!   requires, and the functions of `SparkDsLibrary` in the header's order;
//! - [`secret`]: which option keys hold secrets, by Spark's redaction rule;
//! - [`file::open_regular`]: opening a library or a package without waiting on a named pipe;
//! - [`library_file`]: the file name of a data source's library, and the data source of a file;
//!
//! The SDK (`spark-datasource`) re-exports what a data source uses of it; the host (`sparkds`),
//! the package format (`sparkds-package`), the command (`cargo-sparkds`) and the JVM plugin's
//! JNI library import it directly. It has no Arrow dependency, so that it costs a library's
//! build nothing it does not already pay for. The Python bridge keeps copies of these facts, which
//! the repository's tests check against this crate.

pub mod capabilities;
mod error;
pub mod file;
pub mod filters;
pub mod library_file;
pub mod secret;

pub use error::{Error, Result};
pub use secret::{is_secret_key, secret_parts, shown_value, REDACTED};
