//! `cargo sparkds verify`: the command line of [`sparkds_package::verify::verify_package`], and
//! its report: the libraries and their SHA-256 on standard output, every finding on standard
//! error.

use std::path::PathBuf;

use sparkds_package::error::count;
use sparkds_package::verify::{parse_glibc_version, verify_package, Limits, Options, Policy};
use sparkds_package::{Error, Result};

/// Arguments of `sparkds verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The package to check.
    #[arg(value_name = "PACKAGE")]
    pub package: PathBuf,
    /// A data source the manifest must list.
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,
    /// Newest glibc version that the Linux libraries may need.
    #[arg(long, value_name = "VERSION", default_value = "2.28")]
    pub glibc: String,
    /// A library the libraries may load on top of the system libraries, e.g. `libstdc++.so.6`;
    /// repeat it for each.
    #[arg(long = "allow", value_name = "LIBRARY")]
    pub allow: Vec<String>,
    /// Fail, rather than warn, when the package carries no third-party notices or no SBOM.
    #[arg(long)]
    pub require_notices: bool,
}

/// Runs `cargo sparkds verify`, and returns whether the package passed.
///
/// # Errors
///
/// An invalid `--glibc`, or a package that cannot be read at all.
pub fn run(args: &VerifyArgs) -> Result<bool> {
    let glibc = parse_glibc_version(&args.glibc).ok_or_else(|| {
        Error::Usage(format!(
            "`--glibc {}` must be a glibc version such as `2.28`",
            args.glibc
        ))
    })?;
    let options = Options {
        names: args.names.clone(),
        policy: Policy {
            glibc,
            allow: args.allow.clone(),
        },
        require_notices: args.require_notices,
        limits: Limits::default(),
    };
    let report = verify_package(&args.package, &options)?;
    println!("package {}", args.package.display());
    if !report.data_sources.is_empty() {
        println!("data sources: {}", report.data_sources.join(", "));
    }
    for library in &report.libraries {
        println!("{}  {}", library.sha256, library.entry);
    }
    if !report.components.is_empty() {
        println!(
            "sbom: {}",
            count(report.components.len() as i128, "component")
        );
    }
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    for finding in &report.findings {
        eprintln!("error: {finding}");
    }
    if report.findings.is_empty() {
        let libraries = report.libraries.len();
        let noun = if libraries == 1 {
            "library"
        } else {
            "libraries"
        };
        println!("ok: {libraries} {noun} verified");
        Ok(true)
    } else {
        eprintln!(
            "verify failed: {} in {}",
            count(report.findings.len() as i128, "problem"),
            args.package.display()
        );
        Ok(false)
    }
}
