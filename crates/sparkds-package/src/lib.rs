//! The `.sparkpkg` format of Apache Spark's native data sources (the specification's section
//! "Packages"): its manifest, its platform keys, and the checks of `cargo sparkds verify`, which
//! read a package from its own bytes before anything is decompressed. The JVM plugin and the
//! Python bridge check packages with these same rules.
//!
//! - [`Manifest`], [`Platform`], [`ABI_VERSION`], [`MANIFEST_NAME`]: what a package holds;
//! - [`verify`]: every rule of a package, and [`verify::check_structure`], the part that a
//!   reader runs before it opens the archive (limits, names, one reading of the central
//!   directory);
//! - [`write`](mod@write) (feature `write`): writing a reproducible package, with the
//!   third-party notices and the CycloneDX SBOM of the code compiled into its libraries.

pub mod error;
mod manifest;
mod platform;
pub mod verify;
#[cfg(feature = "write")]
pub mod write;

pub use error::{Error, Result};
pub use manifest::{Manifest, ABI_VERSION, MANIFEST_NAME};
pub use platform::{describe, Platform};

/// SHA-256 of `bytes`, lower-case hex, as `sha256sum` prints it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
