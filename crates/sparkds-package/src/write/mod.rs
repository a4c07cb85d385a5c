//! Writing a `.sparkpkg` (`cargo sparkds package`) (specification, section "Packages") from one library
//! per platform, generating its manifest, and the third-party licence notices and CycloneDX SBOM
//! of the code compiled into the libraries (issue 12): a package ships that code to every node of
//! a cluster, and its licences ask for their notices to go with it.
//!
//! The archive is reproducible: entries in one order (the manifest, then the notices and the
//! SBOM, then the libraries sorted by path), a fixed timestamp (1980-01-01, the zip epoch), fixed
//! permissions and one compression level, so the same libraries and the same dependency graph
//! always give the same bytes and the same SHA-256.

mod messages;
pub mod notices;
pub mod sbom;
pub mod thirdparty;

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use crate::error::Result;

pub use notices::NOTICES_NAME;
pub use sbom::SBOM_NAME;
pub use thirdparty::ThirdParty;

use crate::{sha256_hex, Manifest, Platform, ABI_VERSION, MANIFEST_NAME};
use spark_datasource_core::library_file::is_valid_data_source_name;

/// Arguments of `sparkds package`.
#[derive(Debug, Clone, Default)]
pub struct PackageRequest {
    /// Data source that the libraries implement; repeat it for a library that implements several.
    /// The first one names the package file.
    pub names: Vec<String>,
    /// Version of the package, e.g. the crate version: the file is `<name>-<version>.sparkpkg`.
    pub version: String,
    /// A library and its platform, e.g. `linux-x86_64=target/release/libspark_datasource_x.so`;
    /// repeat it for each platform.
    pub libraries: Vec<String>,
    /// A directory with one `<platform>/` directory per platform, each holding its library.
    pub dir: Option<PathBuf>,
    /// Directory the package is written to.
    pub out_dir: PathBuf,
    /// `Cargo.toml` of the library's package, whose dependency graph (`cargo metadata`, `cargo
    /// tree`) gives the third-party notices and the SBOM. By default, the package of the current
    /// directory (or of a parent) that builds the library, if there is one.
    pub manifest_path: Option<PathBuf>,
    /// Third-party notices made elsewhere, e.g. for a library not built by cargo, to put in the
    /// package instead of generating them.
    pub notices: Option<PathBuf>,
    /// A CycloneDX JSON SBOM made elsewhere, to put in the package instead of generating it.
    pub sbom: Option<PathBuf>,
    /// Package without third-party notices and SBOM: `sparkds verify` warns of such a package.
    pub no_notices: bool,
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
    /// The text of the third-party notices, put in the package as [`NOTICES_NAME`].
    pub notices: Option<Vec<u8>>,
    /// The CycloneDX JSON SBOM, put in the package as [`SBOM_NAME`].
    pub sbom: Option<Vec<u8>>,
}

impl PackageSpec {
    /// Checks the command line and collects the libraries of `--library` and `--dir`.
    ///
    /// # Errors
    ///
    /// An invalid name or version, an unknown or repeated platform, a library not named the way
    /// Spark looks for it, or no library at all.
    pub fn from_request(args: &PackageRequest) -> Result<PackageSpec> {
        let mut libraries = BTreeMap::new();
        for arg in &args.libraries {
            let (key, path) = arg
                .split_once('=')
                .filter(|(key, path)| !key.is_empty() && !path.is_empty())
                .ok_or_else(|| messages::library_argument(arg))?;
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
            notices: None,
            sbom: None,
        };
        spec.check()?;
        Ok(spec)
    }

    /// Checks the names, the version and the library file names.
    ///
    /// # Errors
    ///
    /// See [`PackageSpec::from_request`].
    pub fn check(&self) -> Result<()> {
        if let Some(name) = self.names.iter().find(|n| !is_valid_data_source_name(n)) {
            return Err(messages::data_source_name(name));
        }
        let version_ok = !self.version.is_empty()
            && self
                .version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
        if !version_ok {
            return Err(messages::version(&self.version));
        }
        if self.libraries.is_empty() {
            return Err(messages::no_library());
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
                return Err(messages::library_file_name(
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
            notices: self.notices.as_ref().map(|_| NOTICES_NAME.to_string()),
            sbom: self.sbom.as_ref().map(|_| SBOM_NAME.to_string()),
        }
    }

    /// Adds the notices and the SBOM of `third_party`, the library's dependency graph.
    pub fn with_third_party(mut self, third_party: &ThirdParty) -> PackageSpec {
        let name = self.names.first().map(String::as_str).unwrap_or("package");
        self.notices = Some(notices::render(third_party, name, &self.version).into_bytes());
        self.sbom = Some(sbom::render(third_party, name, &self.version).into_bytes());
        self
    }
}

/// Where the notices and the SBOM of a package come from, decided by the command line.
enum Source {
    /// Generated from the dependency graph of a cargo package.
    Cargo {
        manifest_path: PathBuf,
        root: thirdparty::Root,
    },
    /// Files made elsewhere.
    Files {
        notices: Option<PathBuf>,
        sbom: Option<PathBuf>,
    },
    /// None: `--no-notices`, or no cargo package here.
    Nothing,
}

fn source(args: &PackageRequest) -> Result<Source> {
    if args.no_notices {
        return Ok(Source::Nothing);
    }
    if args.notices.is_some() || args.sbom.is_some() {
        return Ok(Source::Files {
            notices: args.notices.clone(),
            sbom: args.sbom.clone(),
        });
    }
    if let Some(manifest_path) = &args.manifest_path {
        return Ok(Source::Cargo {
            manifest_path: manifest_path.clone(),
            root: thirdparty::Root::NamedOrManifest,
        });
    }
    let dir = std::env::current_dir().map_err(messages::io("the current directory"))?;
    Ok(
        match dir
            .ancestors()
            .map(|d| d.join("Cargo.toml"))
            .find(|m| m.is_file())
        {
            Some(manifest_path) => Source::Cargo {
                manifest_path,
                root: thirdparty::Root::Named,
            },
            None => {
                eprintln!(
                    "warning: no cargo package in `{}` or its parents, so the package carries no third-party notices and no SBOM: pass --manifest-path with the library's Cargo.toml, or --notices and --sbom made elsewhere, or --no-notices",
                    dir.display()
                );
                Source::Nothing
            }
        },
    )
}

/// Adds the notices and the SBOM that the command line asks for to `spec`.
fn attach(spec: PackageSpec, args: &PackageRequest) -> Result<PackageSpec> {
    match source(args)? {
        Source::Nothing => Ok(spec),
        Source::Cargo {
            manifest_path,
            root,
        } => {
            let platforms: Vec<Platform> = spec.libraries.keys().copied().collect();
            let metadata = thirdparty::cargo_metadata(&manifest_path, &platforms)?;
            let built = |name: &str, version: &str| {
                thirdparty::cargo_tree(&manifest_path, &format!("{name}@{version}"), &platforms)
                    .map(Some)
            };
            match thirdparty::from_metadata(&metadata, &spec.names, root, &manifest_path, built)? {
                Some(third_party) => {
                    for c in third_party
                        .components
                        .iter()
                        .filter(|c| c.license.is_none())
                    {
                        eprintln!(
                            "warning: {} {} states no SPDX licence expression (`license` in its Cargo.toml): the notices and the SBOM say `{}`",
                            c.name,
                            c.version,
                            notices::licence(c)
                        );
                    }
                    Ok(spec.with_third_party(&third_party))
                }
                None => {
                    eprintln!(
                        "warning: no package of the cargo workspace of `{}` builds the library, so the package carries no third-party notices and no SBOM: pass --manifest-path with the library's Cargo.toml, or --no-notices",
                        manifest_path.display()
                    );
                    Ok(spec)
                }
            }
        }
        Source::Files { notices, sbom } => {
            let read = |path: &Option<PathBuf>| -> Result<Option<Vec<u8>>> {
                path.as_ref()
                    .map(|p| fs::read(p).map_err(messages::io(p)))
                    .transpose()
            };
            let mut spec = spec;
            spec.notices = read(&notices)?;
            spec.sbom = read(&sbom)?;
            // The rules `verify` checks, checked now, while the file can still be fixed.
            let mut components = Vec::new();
            if let (Some(path), Some(bytes)) = (&sbom, &spec.sbom) {
                let (problems, found) = crate::verify::notices::check_sbom(bytes, &spec.names);
                if !problems.is_empty() {
                    return Err(messages::attachment(path, &problems));
                }
                components = found;
            }
            if let (Some(path), Some(bytes)) = (&notices, &spec.notices) {
                let problems = crate::verify::notices::check_notices(bytes, &components);
                if !problems.is_empty() {
                    return Err(messages::attachment(path, &problems));
                }
            }
            Ok(spec)
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
        .ok_or_else(|| messages::unknown_platform(key, &Platform::known_keys()))?;
    if libraries.insert(platform, path).is_some() {
        return Err(messages::duplicate_platform(key));
    }
    Ok(())
}

/// The libraries of a directory laid out `<platform>/<file>`, as CI artifacts are downloaded.
fn libraries_in_dir(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(messages::io(dir))? {
        let entry = entry.map_err(messages::io(dir))?;
        let platform_dir = entry.path();
        if !platform_dir.is_dir() {
            continue;
        }
        let key = entry.file_name().to_string_lossy().into_owned();
        let mut files = Vec::new();
        for file in fs::read_dir(&platform_dir).map_err(messages::io(&platform_dir))? {
            let file = file.map_err(messages::io(&platform_dir))?.path();
            if file.is_file() {
                files.push(file);
            }
        }
        match <[PathBuf; 1]>::try_from(files) {
            Ok([file]) => found.push((key, file)),
            Err(_) => return Err(messages::platform_directory(&platform_dir)),
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
    let manifest = spec.manifest().to_json().map_err(messages::manifest)?;
    let mut libraries: Vec<(String, Vec<u8>, u32)> = Vec::new();
    for (platform, path) in &spec.libraries {
        let bytes = fs::read(path).map_err(messages::io(path))?;
        libraries.push((entry_name(*platform, path), bytes, 0o755));
    }
    libraries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut entries: Vec<(String, Vec<u8>, u32)> = Vec::new();
    if let Some(notices) = &spec.notices {
        entries.push((NOTICES_NAME.to_string(), notices.clone(), 0o644));
    }
    if let Some(sbom) = &spec.sbom {
        entries.push((SBOM_NAME.to_string(), sbom.clone(), 0o644));
    }
    entries.extend(libraries);

    let file = fs::File::create(out).map_err(messages::io(out))?;
    let mut zip = ZipWriter::new(file);
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(DateTime::DEFAULT);
    zip.start_file(MANIFEST_NAME, options.unix_permissions(0o644))
        .map_err(messages::zip_write(out))?;
    zip.write_all(manifest.as_bytes())
        .map_err(messages::io(out))?;
    for (name, bytes, mode) in entries {
        zip.start_file(name, options.unix_permissions(mode))
            .map_err(messages::zip_write(out))?;
        zip.write_all(&bytes).map_err(messages::io(out))?;
    }
    zip.finish().map_err(messages::zip_write(out))?;
    Ok(())
}

/// A package written by [`package`]: what `cargo sparkds package` prints.
#[derive(Debug, Clone)]
pub struct Written {
    /// The package file.
    pub path: PathBuf,
    /// Its SHA-256, lower-case hex.
    pub sha256: String,
    /// Each platform and the entry of its library.
    pub libraries: Vec<(Platform, String)>,
    /// The entry of the third-party notices, if the package has them.
    pub notices: Option<&'static str>,
    /// The entry of the SBOM, if the package has one.
    pub sbom: Option<&'static str>,
}

/// Writes the package that `request` describes into its `out_dir`, with the notices and the
/// SBOM it asks for.
///
/// # Errors
///
/// See [`PackageSpec::from_request`] and [`write_package`].
pub fn package(request: &PackageRequest) -> Result<Written> {
    let spec = attach(PackageSpec::from_request(request)?, request)?;
    fs::create_dir_all(&request.out_dir).map_err(messages::io(&request.out_dir))?;
    let out = request.out_dir.join(spec.file_name());
    write_package(&spec, &out)?;
    let bytes = fs::read(&out).map_err(messages::io(&out))?;
    Ok(Written {
        sha256: sha256_hex(&bytes),
        libraries: spec
            .libraries
            .iter()
            .map(|(platform, path)| (*platform, entry_name(*platform, path)))
            .collect(),
        notices: spec.notices.as_ref().map(|_| NOTICES_NAME),
        sbom: spec.sbom.as_ref().map(|_| SBOM_NAME),
        path: out,
    })
}
