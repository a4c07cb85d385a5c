//! Embeds what `cargo sparkds spark` needs from this repository, so that the installed command
//! needs no checkout: every file of `jvm/` (the plugin's build script and its Java sources,
//! whatever their layout) and of `python/spark_native_bridge`. The command writes them to its
//! cache on first use. A hash of their paths and contents goes into the cache's keys.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The directories embedded, relative to the repository's root.
const EMBEDDED: [&str; 2] = ["jvm", "python/spark_native_bridge"];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.join("../..");
    let mut files = Vec::new();
    for dir in EMBEDDED {
        let path = root.join(dir);
        if !path.is_dir() {
            panic!(
                "cargo-sparkds embeds `{dir}` of its repository, and `{}` is not a directory: \
                 install cargo-sparkds from a checkout of spark-datasource-template \
                 (`cargo install --locked --path crates/cargo-sparkds`) or with `cargo install \
                 --git <repository>`",
                path.display()
            );
        }
        println!("cargo:rerun-if-changed={}", path.display());
        walk(&root, &path, &mut files);
    }
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
        let bytes = std::fs::read(&absolute).expect("an embedded file reads");
        hash.add(relative.as_bytes());
        hash.add(&[0]);
        hash.add(&bytes);
        let _ = writeln!(code, "    ({relative:?}, include_bytes!({:?})),", absolute);
    }
    code.push_str("];\n");
    let _ = writeln!(
        code,
        "/// A hash of the embedded paths and contents, in the cache's keys.\npub const HASH: &str = \"{:016x}\";",
        hash.0
    );
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("embedded.rs"), code).expect("write embedded.rs");
}

/// The files under `dir`, as paths from `root` with `/`, leaving out hidden entries, build
/// output (`target`) and Python's caches.
fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).expect("an embedded directory reads");
    for entry in entries {
        let entry = entry.expect("a directory entry reads");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "__pycache__" {
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
