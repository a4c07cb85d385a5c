//! `sparkds package`: writes a `.sparkpkg` (specification, section "Packages") from one library
//! per platform, generating its manifest.
//!
//! The archive is reproducible: entries in one order (the manifest, then the libraries sorted by
//! path), a fixed timestamp (1980-01-01, the zip epoch), fixed permissions and one compression
//! level, so the same libraries always give the same bytes and the same SHA-256.

pub(crate) mod error;
mod manifest;
mod platform;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use crate::Result;

pub use manifest::{Manifest, ABI_VERSION, MANIFEST_NAME};
pub use platform::{describe, is_valid_data_source_name, Os, Platform};

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
}

/// What goes into a package.
#[derive(Clone, Debug)]
pub struct PackageSpec {
    /// Data source names, in the order given.
    pub names: Vec<String>,
    /// Version, used in the file name only.
    pub version: String,
    /// One library file per platform.
    pub libraries: BTreeMap<Platform, PathBuf>,
}

impl PackageSpec {
    /// Checks the command line and collects the libraries of `--library` and `--dir`.
    ///
    /// # Errors
    ///
    /// An invalid name or version, an unknown or repeated platform, a library not named the way
    /// Spark looks for it, or no library at all.
    pub fn from_args(args: &PackageArgs) -> Result<PackageSpec> {
        let mut libraries = BTreeMap::new();
        for arg in &args.libraries {
            let (key, path) = arg
                .split_once('=')
                .filter(|(key, path)| !key.is_empty() && !path.is_empty())
                .ok_or_else(|| error::library_argument(arg))?;
            insert_library(&mut libraries, key, PathBuf::from(path))?;
        }
        if let Some(dir) = &args.dir {
            for (key, path) in libraries_in_dir(dir)? {
                insert_library(&mut libraries, &key, path)?;
            }
        }
        let spec = PackageSpec {
            names: args.names.clone(),
            version: args.version.clone(),
            libraries,
        };
        spec.check()?;
        Ok(spec)
    }

    /// Checks the names, the version and the library file names.
    ///
    /// # Errors
    ///
    /// See [`PackageSpec::from_args`].
    pub fn check(&self) -> Result<()> {
        if let Some(name) = self.names.iter().find(|n| !is_valid_data_source_name(n)) {
            return Err(error::data_source_name(name));
        }
        let version_ok = !self.version.is_empty()
            && self
                .version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
        if !version_ok {
            return Err(error::version(&self.version));
        }
        if self.libraries.is_empty() {
            return Err(error::no_library());
        }
        for (platform, path) in &self.libraries {
            let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let expected: Vec<String> = self
                .names
                .iter()
                .map(|n| platform.library_file_name(n))
                .collect();
            if !expected.iter().any(|e| e == file_name) {
                let expected: Vec<String> = expected.iter().map(|e| format!("`{e}`")).collect();
                return Err(error::library_file_name(
                    path,
                    platform.key(),
                    &expected.join(" or "),
                ));
            }
        }
        Ok(())
    }

    /// The package's file name, `<name>-<version>.sparkpkg`.
    pub fn file_name(&self) -> String {
        let name = self.names.first().map(String::as_str).unwrap_or("package");
        format!("{name}-{}.sparkpkg", self.version)
    }

    /// The manifest of the package: each library sits at `<platform>/<file name>`.
    pub fn manifest(&self) -> Manifest {
        Manifest {
            abi_version: ABI_VERSION,
            data_sources: self.names.clone(),
            libraries: self
                .libraries
                .iter()
                .map(|(platform, path)| (platform.key().to_string(), entry_name(*platform, path)))
                .collect(),
        }
    }
}

/// Where a library sits inside the package.
fn entry_name(platform: Platform, path: &Path) -> String {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    format!("{}/{file_name}", platform.key())
}

fn insert_library(
    libraries: &mut BTreeMap<Platform, PathBuf>,
    key: &str,
    path: PathBuf,
) -> Result<()> {
    let platform = Platform::from_key(key)
        .ok_or_else(|| error::unknown_platform(key, &Platform::known_keys()))?;
    if libraries.insert(platform, path).is_some() {
        return Err(error::duplicate_platform(key));
    }
    Ok(())
}

/// The libraries of a directory laid out `<platform>/<file>`, as CI artifacts are downloaded.
fn libraries_in_dir(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(error::io(dir))? {
        let entry = entry.map_err(error::io(dir))?;
        let platform_dir = entry.path();
        if !platform_dir.is_dir() {
            continue;
        }
        let key = entry.file_name().to_string_lossy().into_owned();
        let mut files = Vec::new();
        for file in fs::read_dir(&platform_dir).map_err(error::io(&platform_dir))? {
            let file = file.map_err(error::io(&platform_dir))?.path();
            if file.is_file() {
                files.push(file);
            }
        }
        match <[PathBuf; 1]>::try_from(files) {
            Ok([file]) => found.push((key, file)),
            Err(_) => return Err(error::platform_directory(&platform_dir)),
        }
    }
    found.sort();
    Ok(found)
}

/// Writes the package of `spec` to `out`, replacing it.
///
/// # Errors
///
/// A library that cannot be read, or a package that cannot be written.
pub fn write_package(spec: &PackageSpec, out: &Path) -> Result<()> {
    let manifest = spec.manifest().to_json().map_err(error::manifest)?;
    let mut entries: Vec<(String, Vec<u8>, u32)> = Vec::new();
    for (platform, path) in &spec.libraries {
        let bytes = fs::read(path).map_err(error::io(path))?;
        entries.push((entry_name(*platform, path), bytes, 0o755));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));

    let file = fs::File::create(out).map_err(error::io(out))?;
    let mut zip = ZipWriter::new(file);
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(DateTime::DEFAULT);
    zip.start_file(MANIFEST_NAME, options.unix_permissions(0o644))
        .map_err(error::zip_write(out))?;
    zip.write_all(manifest.as_bytes()).map_err(error::io(out))?;
    for (name, bytes, mode) in entries {
        zip.start_file(name, options.unix_permissions(mode))
            .map_err(error::zip_write(out))?;
        zip.write_all(&bytes).map_err(error::io(out))?;
    }
    zip.finish().map_err(error::zip_write(out))?;
    Ok(())
}

/// The SHA-256 of `bytes` in lower-case hex, as `sha256sum` prints it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `sparkds package`: writes the package and prints its path and SHA-256.
///
/// # Errors
///
/// See [`PackageSpec::from_args`] and [`write_package`].
pub fn run(args: &PackageArgs) -> Result<PathBuf> {
    let spec = PackageSpec::from_args(args)?;
    fs::create_dir_all(&args.out_dir).map_err(error::io(&args.out_dir))?;
    let out = args.out_dir.join(spec.file_name());
    write_package(&spec, &out)?;
    let bytes = fs::read(&out).map_err(error::io(&out))?;
    println!("wrote {}", out.display());
    for (platform, path) in &spec.libraries {
        println!("  {platform}: {}", entry_name(*platform, path));
    }
    println!("{}  {}", sha256_hex(&bytes), out.display());
    Ok(out)
}
