//! `cargo sparkds package`: the command line of [`sparkds_package::write::package`], and what
//! it prints.

use std::path::PathBuf;

use sparkds_package::write::{package, PackageRequest};
use sparkds_package::Result;

/// Arguments of `sparkds package`.
#[derive(Debug, clap::Args)]
pub struct PackageArgs {
    /// Data source that the libraries implement; repeat it for a library that implements several.
    /// The first one names the package file.
    #[arg(long = "name", value_name = "NAME", required = true)]
    pub names: Vec<String>,
    /// Version of the package, e.g. the crate version: the file is `<name>-<version>.sparkpkg`.
    #[arg(long, value_name = "VERSION")]
    pub version: String,
    /// A library and its platform, e.g. `linux-x86_64=target/release/libspark_datasource_x.so`;
    /// repeat it for each platform.
    #[arg(long = "library", value_name = "PLATFORM=PATH")]
    pub libraries: Vec<String>,
    /// A directory with one `<platform>/` directory per platform, each holding its library.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Directory the package is written to.
    #[arg(long, short = 'o', value_name = "DIR", default_value = ".")]
    pub out_dir: PathBuf,
    /// `Cargo.toml` of the library's package, whose dependency graph (`cargo metadata`, `cargo
    /// tree`) gives the third-party notices and the SBOM. By default, the package of the current
    /// directory (or of a parent) that builds the library, if there is one.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["notices", "sbom", "no_notices"])]
    pub manifest_path: Option<PathBuf>,
    /// Third-party notices made elsewhere, e.g. for a library not built by cargo, to put in the
    /// package instead of generating them.
    #[arg(long, value_name = "FILE", conflicts_with = "no_notices")]
    pub notices: Option<PathBuf>,
    /// A CycloneDX JSON SBOM made elsewhere, to put in the package instead of generating it.
    #[arg(long, value_name = "FILE", conflicts_with = "no_notices")]
    pub sbom: Option<PathBuf>,
    /// Package without third-party notices and SBOM: `sparkds verify` warns of such a package.
    #[arg(long)]
    pub no_notices: bool,
}

impl From<&PackageArgs> for PackageRequest {
    fn from(args: &PackageArgs) -> PackageRequest {
        PackageRequest {
            names: args.names.clone(),
            version: args.version.clone(),
            libraries: args.libraries.clone(),
            dir: args.dir.clone(),
            out_dir: args.out_dir.clone(),
            manifest_path: args.manifest_path.clone(),
            notices: args.notices.clone(),
            sbom: args.sbom.clone(),
            no_notices: args.no_notices,
        }
    }
}

/// Runs `cargo sparkds package`: writes the package and prints its path, its entries and its
/// SHA-256.
///
/// # Errors
///
/// See [`package`].
pub fn run(args: &PackageArgs) -> Result<PathBuf> {
    let written = package(&PackageRequest::from(args))?;
    println!("wrote {}", written.path.display());
    for (platform, entry) in &written.libraries {
        println!("  {platform}: {entry}");
    }
    if let Some(notices) = written.notices {
        println!("  notices: {notices}");
    }
    if let Some(sbom) = written.sbom {
        println!("  sbom: {sbom}");
    }
    println!("{}  {}", written.sha256, written.path.display());
    Ok(written.path)
}
