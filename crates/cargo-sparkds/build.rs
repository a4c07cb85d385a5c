//! Embeds what `cargo sparkds spark` needs, so that the installed command needs no checkout:
//!
//! - `embedded/`: the plugin's build script, its Spark lines and its Java sources (`jvm/`), and
//!   the Python bridge (`python/spark_native_bridge`). In the repository these are symbolic links
//!   to the folders of the same names; `cargo package` follows them, so the published crate holds
//!   the files themselves, and this script reads only inside the crate in both cases. The
//!   command writes them to its cache on first use; a hash of their paths and contents goes into
//!   the cache's keys (`embedded.rs`).
//! - `released-plugin.txt`: the Maven coordinates and SHA-256 of the plugin's jar of each Spark
//!   line, written by the release workflow into the crate it publishes; in the repository it
//!   lists none (`released_plugin.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The folder of the embedded files, in the crate.
const EMBEDDED: &str = "embedded";

/// The record of the released plugin, in the crate.
const RELEASED_PLUGIN: &str = "released-plugin.txt";

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    embed(&manifest, &out);
    record_released_plugin(&manifest, &out);
}

/// Writes `embedded.rs`: every file under `embedded/` as `(path, bytes)`, its path relative to
/// that folder (`jvm/build.sh`, `python/spark_native_bridge/__init__.py`), and their hash.
fn embed(manifest: &Path, out: &Path) {
    let root = manifest.join(EMBEDDED);
    let mut files = Vec::new();
    for part in ["jvm", "python/spark_native_bridge"] {
        let dir = root.join(part);
        if !dir.is_dir() {
            panic!(
                "cargo-sparkds embeds `{}`, which is not a directory. In a checkout of \
                 spark-datasource-template it is a symbolic link to `{part}` of the repository: \
                 on Windows, clone with `git clone -c core.symlinks=true` (with Developer Mode \
                 on); anywhere else, install the published crate (`cargo install --locked \
                 cargo-sparkds`)",
                dir.display()
            );
        }
    }
    println!("cargo:rerun-if-changed={}", root.display());
    walk(&root, &root, &mut files);
    files.sort();
    let mut hash = Fnv::default();
    let mut code = String::from(
        "/// The embedded files: their paths from the repository's root, and their bytes.\n",
    );
    code.push_str("pub static FILES: &[(&str, &[u8])] = &[\n");
    for relative in &files {
        let absolute = root
            .join(relative)
            .canonicalize()
            .expect("an embedded file exists");
        // Cargo's change detection does not look through the symbolic links: name each file.
        println!("cargo:rerun-if-changed={}", absolute.display());
        let bytes = std::fs::read(&absolute).expect("an embedded file reads");
        hash.add(relative.as_bytes());
        hash.add(&[0]);
        hash.add(&bytes);
        let _ = writeln!(code, "    ({relative:?}, include_bytes!({absolute:?})),");
    }
    code.push_str("];\n");
    let _ = writeln!(
        code,
        "/// A hash of the embedded paths and contents, in the cache's keys.\npub const HASH: &str = \"{:016x}\";",
        hash.0
    );
    std::fs::write(out.join("embedded.rs"), code).expect("write embedded.rs");
}

/// The files under `dir`, as paths from `root` with `/`, leaving out hidden entries, build
/// output (`target`) and Python's caches, as the crate's `exclude` does.
fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) {
    // Also watch the directories behind the links, for files added or removed.
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(dir).expect("an embedded directory reads");
    for entry in entries {
        let entry = entry.expect("a directory entry reads");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.')
            || name == "target"
            || name == "__pycache__"
            || name.ends_with(".pyc")
        {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, files);
        } else if path.is_file() {
            let relative = path.strip_prefix(root).expect("under the root");
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            files.push(parts.join("/"));
        }
    }
}

/// Writes `released_plugin.rs` from `released-plugin.txt`: each line
/// `<spark line> <group>:<artifact>:<version> <sha256>` becomes an entry of `JARS`, with the
/// jar's path in a Maven repository. A record that is not of this form, or of another version
/// than this crate's, stops the build: a published command must never fetch a jar it cannot
/// check.
fn record_released_plugin(manifest: &Path, out: &Path) {
    let path = manifest.join(RELEASED_PLUGIN);
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    let mut code = String::from(
        "/// The Maven repository that the released plugin's jars are published to.\n\
         pub const MAVEN_REPOSITORY: &str = \"https://repo1.maven.org/maven2\";\n\
         /// The released plugin's jar of each Spark line: the line, the Maven coordinates, the\n\
         /// jar's path in the repository and its SHA-256 (lower-case hex). Empty in a build from\n\
         /// a checkout, whose plugin is built from the embedded sources.\n\
         pub static JARS: &[(&str, &str, &str, &str)] = &[\n",
    );
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let jar = parse_released_jar(line, &version).unwrap_or_else(|e| {
            panic!("{}:{}: {e}: `{line}`", path.display(), number + 1);
        });
        let _ = writeln!(
            code,
            "    ({:?}, {:?}, {:?}, {:?}),",
            jar.line, jar.coordinates, jar.path, jar.sha256
        );
    }
    code.push_str("];\n");
    std::fs::write(out.join("released_plugin.rs"), code).expect("write released_plugin.rs");
}

struct ReleasedJar {
    line: String,
    coordinates: String,
    path: String,
    sha256: String,
}

/// One line of `released-plugin.txt`.
fn parse_released_jar(line: &str, version: &str) -> Result<ReleasedJar, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [spark_line, coordinates, sha256] = fields.as_slice() else {
        return Err("expected `<spark line> <group>:<artifact>:<version> <sha256>`".to_string());
    };
    let parts: Vec<&str> = coordinates.split(':').collect();
    let [group, artifact, jar_version] = parts.as_slice() else {
        return Err(format!(
            "`{coordinates}` is not Maven coordinates <group>:<artifact>:<version>"
        ));
    };
    if *jar_version != version {
        return Err(format!(
            "the jar's version is {jar_version}, and this crate's is {version}"
        ));
    }
    if sha256.len() != 64 || !sha256.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')) {
        return Err(format!(
            "`{sha256}` is not a SHA-256 in lower-case hex (64 digits)"
        ));
    }
    Ok(ReleasedJar {
        line: spark_line.to_string(),
        coordinates: coordinates.to_string(),
        path: format!(
            "{}/{artifact}/{version}/{artifact}-{version}.jar",
            group.replace('.', "/")
        ),
        sha256: sha256.to_string(),
    })
}

/// FNV-1a, 64 bits: a stable hash without a dependency.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn add(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
