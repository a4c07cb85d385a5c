//! The third-party code that a package ships: the normal dependency graph of the library's cargo
//! package, read from `cargo metadata --format-version 1`, with each package's licence
//! expression, repository and licence files.
//!
//! Only normal dependencies are followed, from the library's package and then from each
//! dependency: dev-dependencies are not compiled into the library, and build-dependencies run on
//! the build machine only. Proc-macro crates are normal dependencies and stay in: the code they
//! generate is in the library. The graph is resolved for the platforms of the package
//! (`--filter-platform`), so a Linux package lists no Windows crate, and `cargo metadata` needs
//! no source of a platform that is not packaged, which also lets it run `--offline`.
//!
//! `cargo metadata` resolves features once for all kinds of dependencies, so an optional
//! dependency that only a dev-dependency's features turn on (arrow-cast's `comfy-table`, through
//! `sparkds`) would look compiled in. `cargo tree -e normal` resolves features as a build of the
//! library does, so the packages it prints are the ones kept.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use super::messages;
use crate::error::Result;
use crate::Platform;

/// A package of the dependency graph, or the library's own package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Component {
    /// The crate name.
    pub name: String,
    /// The crate version.
    pub version: String,
    /// The SPDX licence expression of the crate's `license` field.
    pub license: Option<String>,
    /// The file of the crate's `license-file` field, relative to its `Cargo.toml`.
    pub license_file: Option<String>,
    /// The crate's `repository` field.
    pub repository: Option<String>,
    /// The licence files found in the crate's source directory: file name and text.
    pub files: Vec<(String, String)>,
    /// The components this one depends on (normal dependencies), as [`Component::bom_ref`]s.
    pub depends_on: Vec<String>,
}

impl Component {
    /// `pkg:cargo/<name>@<version>`: the component's package URL, also its `bom-ref`.
    pub fn purl(&self) -> String {
        format!("pkg:cargo/{}@{}", self.name, self.version)
    }

    /// The reference of the component in the SBOM: its package URL, unique per name and version.
    pub fn bom_ref(&self) -> String {
        self.purl()
    }
}

/// The library's package and the third-party packages compiled into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThirdParty {
    /// The library's own cargo package.
    pub root: Component,
    /// Every package of its normal dependency graph, sorted by name and version.
    pub components: Vec<Component>,
}

/// Runs `cargo metadata` on `manifest_path` for `platforms`, again with `--offline` when it
/// fails (no network, but every source already downloaded).
///
/// # Errors
///
/// Cargo cannot be run, or fails both times: the error names the manifest and quotes cargo.
pub fn cargo_metadata(manifest_path: &Path, platforms: &[Platform]) -> Result<Vec<u8>> {
    let mut args = vec!["metadata", "--format-version", "1"];
    for platform in platforms {
        args.extend(["--filter-platform", platform.rust_target()]);
    }
    cargo(manifest_path, &args)
}

/// The packages (name, version) of the normal dependency graph of `package` (`<name>@<version>`)
/// with the features that a build of the library for `platforms` turns on, from `cargo tree`.
///
/// # Errors
///
/// As [`cargo_metadata`].
pub fn cargo_tree(
    manifest_path: &Path,
    package: &str,
    platforms: &[Platform],
) -> Result<BTreeSet<(String, String)>> {
    let mut args = vec![
        "tree", "-p", package, "-e", "normal", "--prefix", "none", "-f", "{p}",
    ];
    for platform in platforms {
        args.extend(["--target", platform.rust_target()]);
    }
    let output = cargo(manifest_path, &args)?;
    // Each line is `<name> v<version>`, then ` (<path>)`, ` (proc-macro)` or ` (*)` for a
    // package printed before; a blank line separates the trees of two targets.
    Ok(String::from_utf8_lossy(&output)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let name = words.next()?;
            let version = words.next()?.strip_prefix('v')?;
            Some((name.to_string(), version.to_string()))
        })
        .collect())
}

/// Runs `cargo <args> --manifest-path <manifest_path>`, again with `--offline` when it fails,
/// and returns its standard output.
fn cargo(manifest_path: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |offline: bool| -> Result<std::process::Output> {
        let mut command = Command::new(&cargo);
        command.args(args).arg("--manifest-path").arg(manifest_path);
        if offline {
            command.arg("--offline");
        }
        command.output().map_err(messages::io(format!(
            "{} {}",
            cargo.to_string_lossy(),
            args[0]
        )))
    };
    let mut output = run(false)?;
    if !output.status.success() {
        output = run(true)?;
    }
    if !output.status.success() {
        return Err(messages::cargo_metadata(
            args[0],
            manifest_path,
            &String::from_utf8_lossy(&output.stderr),
        ));
    }
    Ok(output.stdout)
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
    resolve: Option<Resolve>,
}

#[derive(Deserialize)]
struct Package {
    id: String,
    name: String,
    version: String,
    license: Option<String>,
    license_file: Option<String>,
    repository: Option<String>,
    manifest_path: PathBuf,
    targets: Vec<Target>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
    kind: Vec<String>,
}

#[derive(Deserialize)]
struct Resolve {
    nodes: Vec<Node>,
    root: Option<String>,
}

#[derive(Deserialize)]
struct Node {
    id: String,
    deps: Vec<NodeDep>,
}

#[derive(Deserialize)]
struct NodeDep {
    pkg: String,
    dep_kinds: Vec<DepKind>,
}

#[derive(Deserialize)]
struct DepKind {
    /// `null` for a normal dependency, `"dev"` or `"build"` otherwise.
    kind: Option<String>,
}

impl NodeDep {
    fn is_normal(&self) -> bool {
        self.dep_kinds.iter().any(|k| k.kind.is_none())
    }
}

/// Which package of the workspace is the library's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// The member whose cdylib is `spark_datasource_<name>` for one of the names; failing that,
    /// the package of the manifest path. For `--manifest-path`, which names the package.
    NamedOrManifest,
    /// Only the member whose cdylib is `spark_datasource_<name>`: the current directory may be
    /// in a cargo workspace that does not build this library.
    Named,
}

/// The library's package in `metadata` (the output of `cargo metadata`) and its normal
/// dependency graph, keeping only the packages that `built` returns (given the library's package
/// name and version: the packages a build of the library compiles, see [`cargo_tree`]; `None`
/// keeps every package of the graph), with the licence files read from each package's source
/// directory. `None` when `root` is [`Root::Named`] and
/// no member builds the library.
///
/// # Errors
///
/// Metadata that does not parse, no package to start from, or the error of `built`.
pub fn from_metadata(
    metadata: &[u8],
    names: &[String],
    root: Root,
    manifest_path: &Path,
    built: impl FnOnce(&str, &str) -> Result<Option<BTreeSet<(String, String)>>>,
) -> Result<Option<ThirdParty>> {
    let metadata: Metadata =
        serde_json::from_slice(metadata).map_err(|e| messages::metadata(manifest_path, &e))?;
    let packages: BTreeMap<&str, &Package> = metadata
        .packages
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();
    let Some(resolve) = &metadata.resolve else {
        return Err(messages::metadata_without_resolve(manifest_path));
    };
    let library_names: Vec<String> = names
        .iter()
        .map(|n| spark_datasource_core::library_file::library_name(n))
        .collect();
    let Some(root_id) = find_root(
        &metadata,
        &packages,
        resolve,
        &library_names,
        root,
        manifest_path,
    )?
    else {
        return Ok(None);
    };
    let root_package = packages
        .get(root_id)
        .ok_or_else(|| messages::no_library_package(manifest_path, &library_names))?;
    let built = built(&root_package.name, &root_package.version)?;
    let graph = Graph {
        packages,
        nodes: resolve.nodes.iter().map(|n| (n.id.as_str(), n)).collect(),
        built,
        root_id,
    };
    let root = graph
        .component(root_id, false)
        .ok_or_else(|| messages::no_library_package(manifest_path, &library_names))?;
    let components = graph.components();
    Ok(Some(ThirdParty { root, components }))
}

/// The id of the package to start from: the workspace member that builds one of the libraries,
/// else (when `root` allows it) the package of the manifest; `None` when neither applies and
/// `root` is [`Root::Named`].
fn find_root<'a>(
    metadata: &'a Metadata,
    packages: &BTreeMap<&str, &'a Package>,
    resolve: &'a Resolve,
    library_names: &[String],
    root: Root,
    manifest_path: &Path,
) -> Result<Option<&'a str>> {
    let builds_library = |p: &Package| {
        p.targets
            .iter()
            .any(|t| t.kind.iter().any(|k| k == "cdylib") && library_names.contains(&t.name))
    };
    let named = metadata
        .workspace_members
        .iter()
        .filter_map(|id| packages.get(id.as_str()))
        .find(|p| builds_library(p))
        .map(|p| p.id.as_str());
    Ok(Some(match (named, root) {
        (Some(id), _) => id,
        (None, Root::Named) => return Ok(None),
        (None, Root::NamedOrManifest) => match &resolve.root {
            Some(id) => id.as_str(),
            None => return Err(messages::no_library_package(manifest_path, library_names)),
        },
    }))
}

/// The dependency graph of the resolve, seen from the root package, through the packages a
/// build of the library compiles.
struct Graph<'a> {
    packages: BTreeMap<&'a str, &'a Package>,
    nodes: BTreeMap<&'a str, &'a Node>,
    /// The name and version of each package the build compiles (`None`: every package).
    built: Option<BTreeSet<(String, String)>>,
    root_id: &'a str,
}

impl<'a> Graph<'a> {
    fn is_built(&self, id: &str) -> bool {
        match (&self.built, self.packages.get(id)) {
            (None, _) => true,
            (Some(built), Some(p)) => built.contains(&(p.name.clone(), p.version.clone())),
            (Some(_), None) => false,
        }
    }

    /// The normal dependencies of `id` that the build compiles.
    fn normal_deps(&self, id: &str) -> Vec<&'a str> {
        self.nodes
            .get(id)
            .map(|n| {
                n.deps
                    .iter()
                    .filter(|d| d.is_normal() && self.is_built(&d.pkg))
                    .map(|d| d.pkg.as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every package the root reaches through normal dependencies, the root excepted.
    fn reached(&self) -> BTreeSet<&'a str> {
        let mut reached: BTreeSet<&str> = BTreeSet::new();
        let mut queue: VecDeque<&str> = self.normal_deps(self.root_id).into();
        while let Some(id) = queue.pop_front() {
            if id != self.root_id && reached.insert(id) {
                queue.extend(self.normal_deps(id));
            }
        }
        reached
    }

    /// The component of the package `id`, with its licence files when `with_files`.
    fn component(&self, id: &str, with_files: bool) -> Option<Component> {
        let p = self.packages.get(id)?;
        let mut depends_on: Vec<String> = self
            .normal_deps(id)
            .into_iter()
            .filter(|d| *d != self.root_id)
            .filter_map(|d| self.packages.get(d))
            .map(|d| format!("pkg:cargo/{}@{}", d.name, d.version))
            .collect();
        depends_on.sort();
        depends_on.dedup();
        Some(Component {
            name: p.name.clone(),
            version: p.version.clone(),
            license: p.license.clone().filter(|l| !l.trim().is_empty()),
            license_file: p.license_file.clone(),
            repository: p.repository.clone(),
            files: if with_files {
                licence_files(p)
            } else {
                Vec::new()
            },
            depends_on,
        })
    }

    /// The components of the packages the root reaches, by name and version, each once.
    fn components(&self) -> Vec<Component> {
        let mut components: Vec<Component> = self
            .reached()
            .iter()
            .filter_map(|id| self.component(id, true))
            .collect();
        components.sort_by(|a, b| (&a.name, &a.version).cmp(&(&b.name, &b.version)));
        // The same name and version from two sources (a git and a registry copy) is one entry of
        // the notices and one component of the SBOM, whose references must be unique.
        components.dedup_by(|a, b| a.name == b.name && a.version == b.version);
        components
    }
}

/// Whether a file of a crate's source directory holds its licence or notices: `LICENSE*`,
/// `LICENCE*`, `COPYING*`, `COPYRIGHT*`, `NOTICE*` and `UNLICENSE*` (the Unlicense, which
/// `memchr` and others offer), in any case.
pub fn is_licence_file(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "LICENSE",
        "LICENCE",
        "COPYING",
        "COPYRIGHT",
        "NOTICE",
        "UNLICENSE",
    ]
    .iter()
    .any(|prefix| upper.starts_with(prefix))
}

/// The licence files of a package, sorted by name: those at the root of its source directory,
/// and its `license-file`, wherever that is.
fn licence_files(package: &Package) -> Vec<(String, String)> {
    let Some(dir) = package.manifest_path.parent() else {
        return Vec::new();
    };
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_licence_file(&name) && entry.path().is_file() {
                files.insert(name, entry.path());
            }
        }
    }
    if let Some(file) = &package.license_file {
        let path = dir.join(file);
        if path.is_file() {
            files.insert(file.replace('\\', "/"), path);
        }
    }
    files
        .into_iter()
        .filter_map(|(name, path)| {
            let bytes = fs::read(&path).ok()?;
            Some((name, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Metadata of a workspace member `demo` (cdylib `spark_datasource_demo`) with a normal
    /// dependency `a`, which depends on `b`, a build-dependency `cc` and a dev-dependency `t`.
    fn metadata() -> String {
        let package = |name: &str, kind: &str, license: Option<&str>| {
            serde_json::json!({
                "id": format!("{name}-id"),
                "name": name,
                "version": "1.0.0",
                "license": license,
                "license_file": null,
                "repository": format!("https://example.com/{name}"),
                "manifest_path": format!("/nonexistent/{name}/Cargo.toml"),
                "targets": [{ "name": format!("spark_datasource_{name}"), "kind": [kind] }],
            })
        };
        let dep = |pkg: &str, kind: Option<&str>| serde_json::json!({ "pkg": format!("{pkg}-id"), "dep_kinds": [{ "kind": kind, "target": null }] });
        serde_json::json!({
            "packages": [
                package("demo", "cdylib", None),
                package("a", "lib", Some("MIT OR Apache-2.0")),
                package("b", "lib", Some("MIT")),
                package("cc", "lib", Some("MIT")),
                package("t", "lib", Some("MIT")),
            ],
            "workspace_members": ["demo-id"],
            "resolve": {
                "root": null,
                "nodes": [
                    { "id": "demo-id", "deps": [dep("a", None), dep("cc", Some("build")), dep("t", Some("dev"))] },
                    { "id": "a-id", "deps": [dep("b", None)] },
                    { "id": "b-id", "deps": [] },
                    { "id": "cc-id", "deps": [] },
                    { "id": "t-id", "deps": [dep("b", None)] },
                ],
            },
        })
        .to_string()
    }

    fn names(third_party: &ThirdParty) -> Vec<String> {
        third_party
            .components
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    #[test]
    fn only_the_normal_dependency_graph_of_the_library_is_listed() {
        let found = from_metadata(
            metadata().as_bytes(),
            &["demo".to_string()],
            Root::Named,
            Path::new("Cargo.toml"),
            |_, _| Ok(None),
        )
        .expect("metadata parses")
        .expect("demo builds the library");
        assert_eq!(found.root.name, "demo");
        assert_eq!(names(&found), ["a", "b"]);
        assert_eq!(found.components[0].depends_on, ["pkg:cargo/b@1.0.0"]);
        assert_eq!(
            found.components[0].license.as_deref(),
            Some("MIT OR Apache-2.0")
        );
    }

    #[test]
    fn only_the_packages_a_build_of_the_library_compiles_are_kept() {
        let found = from_metadata(
            metadata().as_bytes(),
            &["demo".to_string()],
            Root::Named,
            Path::new("Cargo.toml"),
            |name, version| {
                assert_eq!((name, version), ("demo", "1.0.0"));
                Ok(Some(BTreeSet::from([
                    ("demo".to_string(), "1.0.0".to_string()),
                    ("a".to_string(), "1.0.0".to_string()),
                ])))
            },
        )
        .expect("metadata parses")
        .expect("demo builds the library");
        assert_eq!(names(&found), ["a"]);
        assert_eq!(found.components[0].depends_on, Vec::<String>::new());
    }

    #[test]
    fn a_workspace_that_does_not_build_the_library_gives_nothing_unless_named() {
        let other = ["other".to_string()];
        let found = from_metadata(
            metadata().as_bytes(),
            &other,
            Root::Named,
            Path::new("Cargo.toml"),
            |_, _| Ok(None),
        )
        .expect("metadata parses");
        assert_eq!(found, None);
        let error = from_metadata(
            metadata().as_bytes(),
            &other,
            Root::NamedOrManifest,
            Path::new("ws/Cargo.toml"),
            |_, _| Ok(None),
        )
        .expect_err("no root, no member building the library");
        assert_eq!(
            error.to_string(),
            "no package of the cargo workspace of `ws/Cargo.toml` builds the cdylib `spark_datasource_other`: pass --manifest-path with the Cargo.toml of the library's package"
        );
    }

    #[test]
    fn licence_files_are_recognised_by_their_name() {
        for name in [
            "LICENSE",
            "LICENSE-MIT",
            "license.txt",
            "COPYING",
            "NOTICE",
            "Licence.md",
            "UNLICENSE",
        ] {
            assert!(is_licence_file(name), "{name}");
        }
        for name in ["README.md", "Cargo.toml", "src", "CHANGELOG.md"] {
            assert!(!is_licence_file(name), "{name}");
        }
    }
}
