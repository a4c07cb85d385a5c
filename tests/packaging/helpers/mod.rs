//! Builders for the packaging tests: real C libraries compiled on this machine, packages crafted
//! entry by entry (to break one rule at a time), and the `sparkds` command.

#![allow(dead_code)]

pub mod workflows;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::ZipWriter;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The `sparkds` command, built once per test run: a dev-dependency only builds the library of
/// a crate, not its binary, and these tests run the binary exactly as CI and users do.
pub fn sparkds() -> assert_cmd::Command {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let path = BUILT.get_or_init(|| sparkds::sparkds_binary().expect("build the sparkds binary"));
    assert_cmd::Command::new(path)
}

/// The platform key of this machine, the only one whose libraries the tests can compile.
pub fn host_platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x86_64",
        ("linux", "aarch64") => "linux-aarch64",
        ("macos", "x86_64") => "osx-x86_64",
        ("macos", "aarch64") => "osx-aarch64",
        (os, arch) => {
            panic!("the packaging tests compile libraries for linux or macos, not {os}-{arch}")
        }
    }
}

/// The file name Spark looks for on this machine's platform.
pub fn host_library_name(data_source: &str) -> String {
    if cfg!(target_os = "macos") {
        format!("libspark_datasource_{data_source}.dylib")
    } else {
        format!("libspark_datasource_{data_source}.so")
    }
}

/// Snapshot settings that replace this machine's library entry, e.g.
/// `linux-x86_64/libspark_datasource_demo.so`, so reports read the same on every host.
pub fn host_settings() -> insta::Settings {
    let escape = |s: String| s.replace('.', r"\.").replace('+', r"\+");
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(
        &escape(format!("{}/{}", host_platform(), host_library_name("demo"))),
        "[host]/[host library of demo]",
    );
    settings
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A tiny C data source library, compiled with `$CC` (default `cc`) against the SDK's
/// `spark_datasource.h`.
pub struct CLibrary {
    data_source: String,
    export_init: bool,
    call_pthread_create: bool,
    link: Vec<String>,
}

impl CLibrary {
    /// A library that exports `spark_ds_init`, named for `data_source`.
    pub fn new(data_source: &str) -> CLibrary {
        CLibrary {
            data_source: data_source.to_string(),
            export_init: true,
            call_pthread_create: false,
            link: Vec::new(),
        }
    }

    /// Exports another function instead of `spark_ds_init`.
    pub fn without_init(mut self) -> CLibrary {
        self.export_init = false;
        self
    }

    /// Calls `pthread_create`, which glibc 2.34 and later version `GLIBC_2.34` (it moved from
    /// libpthread into libc).
    pub fn calling_pthread_create(mut self) -> CLibrary {
        self.call_pthread_create = true;
        self
    }

    /// Links a library, kept even if unused (`--no-as-needed`).
    pub fn linking(mut self, flag: &str) -> CLibrary {
        self.link.push(flag.to_string());
        self
    }

    /// Compiles the library into `dir` and returns its path.
    pub fn build(&self, dir: &Path) -> PathBuf {
        let function = if self.export_init {
            "spark_ds_init"
        } else {
            "spark_ds_init_renamed"
        };
        let thread = if self.call_pthread_create {
            "#include <pthread.h>\nstatic void* run(void* arg) { return arg; }\n\
             static void start(void) { pthread_t t; if (pthread_create(&t, 0, run, 0) == 0) pthread_join(t, 0); }\n"
        } else {
            "static void start(void) {}\n"
        };
        let source = format!(
            "#include \"spark_datasource.h\"\n{thread}\
             SPARK_DS_EXPORT int {function}(const SparkDsHost* host, const SparkDsLibrary** library) {{\n\
             \x20 (void)host; start(); *library = 0; return 1;\n}}\n"
        );
        // The source goes elsewhere so that `dir` holds only the library, as `--dir` expects.
        let source_dir = tempfile::TempDir::new().expect("temp dir");
        let source_path = source_dir.path().join(format!("{}.c", self.data_source));
        std::fs::write(&source_path, source).expect("write the C source");
        let output = dir.join(host_library_name(&self.data_source));
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let mut command = Command::new(&cc);
        command
            .arg(if cfg!(target_os = "macos") {
                "-dynamiclib"
            } else {
                "-shared"
            })
            .arg("-fPIC")
            .arg("-I")
            .arg(repo_root().join("crates/spark-datasource"))
            .arg("-o")
            .arg(&output)
            .arg(&source_path);
        if !self.link.is_empty() && cfg!(target_os = "linux") {
            command.arg("-Wl,--no-as-needed");
        }
        command.args(&self.link);
        if self.call_pthread_create && cfg!(target_os = "linux") {
            command.arg("-pthread");
        }
        let status = command.status().unwrap_or_else(|e| panic!("run {cc}: {e}"));
        assert!(
            status.success(),
            "{cc} failed to build {}",
            output.display()
        );
        output
    }
}

/// One entry of a crafted package.
enum Entry {
    File(Vec<u8>),
    Directory,
    Symlink(String),
}

/// A package written entry by entry, to break exactly one rule.
#[derive(Default)]
pub struct CraftedPackage {
    entries: Vec<(String, Entry)>,
}

impl CraftedPackage {
    pub fn new() -> CraftedPackage {
        CraftedPackage::default()
    }

    /// Adds a manifest with these data sources and `platform -> path` libraries.
    pub fn manifest(self, data_sources: &[&str], libraries: &[(&str, &str)]) -> CraftedPackage {
        self.manifest_with(data_sources, libraries, &[])
    }

    /// Adds a manifest with these data sources, libraries, and other fields such as
    /// `("notices", "THIRD-PARTY-NOTICES")`.
    pub fn manifest_with(
        self,
        data_sources: &[&str],
        libraries: &[(&str, &str)],
        fields: &[(&str, &str)],
    ) -> CraftedPackage {
        let libraries: serde_json::Map<String, serde_json::Value> = libraries
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect();
        let mut json = serde_json::json!({
            "abiVersion": 1,
            "dataSources": data_sources,
            "libraries": libraries,
        });
        for (key, value) in fields {
            json[*key] = serde_json::Value::from(*value);
        }
        self.file("spark-native-datasource.json", json.to_string().as_bytes())
    }

    /// Adds a regular file.
    pub fn file(mut self, name: &str, bytes: &[u8]) -> CraftedPackage {
        self.entries
            .push((name.to_string(), Entry::File(bytes.to_vec())));
        self
    }

    /// Adds a directory entry, as `zip -r` writes them.
    pub fn directory(mut self, name: &str) -> CraftedPackage {
        self.entries.push((name.to_string(), Entry::Directory));
        self
    }

    /// Adds a symbolic link.
    pub fn symlink(mut self, name: &str, target: &str) -> CraftedPackage {
        self.entries
            .push((name.to_string(), Entry::Symlink(target.to_string())));
        self
    }

    /// Writes the package to `path`.
    pub fn write(self, path: &Path) -> PathBuf {
        let file = std::fs::File::create(path).expect("create the package");
        let mut zip = ZipWriter::new(file);
        let options = SimpleFileOptions::default();
        for (name, entry) in self.entries {
            match entry {
                Entry::File(bytes) => {
                    zip.start_file(name, options).expect("start an entry");
                    zip.write_all(&bytes).expect("write an entry");
                }
                Entry::Directory => zip.add_directory(name, options).expect("add a directory"),
                Entry::Symlink(target) => {
                    zip.add_symlink(name, target, options).expect("add a link")
                }
            }
        }
        zip.finish().expect("finish the package");
        path.to_path_buf()
    }
}

/// A CycloneDX 1.5 SBOM of the data source `demo` with these components: name, version and
/// licence expression (none: no `licenses`).
pub fn sbom(components: &[(&str, &str, Option<&str>)]) -> String {
    let components: Vec<serde_json::Value> = components
        .iter()
        .map(|(name, version, licence)| {
            let mut component = serde_json::json!({
                "type": "library",
                "bom-ref": format!("pkg:cargo/{name}@{version}"),
                "name": name,
                "version": version,
                "purl": format!("pkg:cargo/{name}@{version}"),
            });
            if let Some(licence) = licence {
                component["licenses"] = serde_json::json!([{ "expression": licence }]);
            }
            component
        })
        .collect();
    serde_json::json!({
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "version": 1,
        "metadata": { "component": { "type": "library", "name": "demo", "version": "0.1.0" } },
        "components": components,
    })
    .to_string()
}

/// A cargo workspace whose member `demo` builds the cdylib `spark_datasource_demo`, with path
/// dependencies only, so that `cargo metadata` needs no network: `alpha` (normal, which depends
/// on `beta`), `gamma` (build) and `delta` (dev). Each has a licence and licence files. `delta`
/// turns on alpha's feature `extra`, which adds `epsilon`: only in tests, not in the library.
pub fn cargo_project(dir: &Path) -> PathBuf {
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\nlicense = \"MIT\"\n\n\
         [lib]\nname = \"spark_datasource_demo\"\ncrate-type = [\"cdylib\"]\npath = \"lib.rs\"\n\n\
         [dependencies]\nalpha = { path = \"alpha\" }\n\n\
         [build-dependencies]\ngamma = { path = \"gamma\" }\n\n\
         [dev-dependencies]\ndelta = { path = \"delta\" }\n\n[workspace]\n",
    );
    write("lib.rs", "");
    let crate_ = |name: &str, licence: &str, deps: &str, files: &[(&str, &str)]| {
        write(
            &format!("{name}/Cargo.toml"),
            &format!(
                "[package]\nname = \"{name}\"\nversion = \"1.2.3\"\nedition = \"2021\"\n\
                 license = \"{licence}\"\nrepository = \"https://example.com/{name}\"\n\n\
                 [lib]\npath = \"lib.rs\"\n\n[dependencies]\n{deps}"
            ),
        );
        write(&format!("{name}/lib.rs"), "");
        for (file, text) in files {
            write(&format!("{name}/{file}"), text);
        }
    };
    crate_(
        "alpha",
        "MIT OR Apache-2.0",
        "beta = { path = \"../beta\" }\n\
         epsilon = { path = \"../epsilon\", optional = true }\n\n\
         [features]\nextra = [\"dep:epsilon\"]\n",
        &[
            ("LICENSE-MIT", "alpha: the MIT licence\n"),
            ("LICENSE-APACHE", "alpha: the Apache licence\n"),
        ],
    );
    crate_(
        "beta",
        "BSD-3-Clause",
        "",
        &[
            ("COPYING", "beta: the BSD licence\n"),
            ("NOTICE", "beta: a notice\n"),
        ],
    );
    crate_(
        "gamma",
        "MIT",
        "",
        &[("LICENSE", "gamma: the MIT licence\n")],
    );
    crate_(
        "delta",
        "MIT",
        "alpha = { path = \"../alpha\", features = [\"extra\"] }\n",
        &[("LICENSE", "delta: the MIT licence\n")],
    );
    crate_(
        "epsilon",
        "MIT",
        "",
        &[("LICENSE", "epsilon: the MIT licence\n")],
    );
    dir.join("Cargo.toml")
}

/// The names of the entries of a zip archive, in order.
pub fn entry_names(package: &Path) -> Vec<String> {
    let file = std::fs::File::open(package).expect("open the package");
    let mut archive = zip::ZipArchive::new(file).expect("a zip file");
    (0..archive.len())
        .map(|i| {
            let entry = archive.by_index(i).expect("an entry");
            String::from_utf8_lossy(entry.name_raw()).into_owned()
        })
        .collect()
}

/// The text of one entry of a zip archive.
pub fn entry_text(package: &Path, name: &str) -> String {
    use std::io::Read;
    let file = std::fs::File::open(package).expect("open the package");
    let mut archive = zip::ZipArchive::new(file).expect("a zip file");
    let mut entry = archive.by_name(name).expect("the entry");
    let mut text = String::new();
    entry.read_to_string(&mut text).expect("UTF-8 text");
    text
}

/// The ELF machine number of aarch64.
const EM_AARCH64: u16 = 183;

/// A copy of an ELF library claiming to be for aarch64: it cannot be compiled here, and the
/// architecture rule only reads `e_machine`.
pub fn patched_to_aarch64(elf: &[u8]) -> Vec<u8> {
    assert_eq!(&elf[..4], b"\x7fELF", "patching needs an ELF file");
    let mut bytes = elf.to_vec();
    // e_machine is the 2-byte field at offset 18 of the ELF header, little-endian here.
    bytes[18..20].copy_from_slice(&EM_AARCH64.to_le_bytes());
    bytes
}

/// The smallest Mach-O dynamic library header for x86_64, with no load commands: enough for the
/// format and architecture rules.
pub fn macho_x86_64_blob() -> Vec<u8> {
    let mut bytes = Vec::new();
    for word in [
        0xfeed_facf_u32, // MH_MAGIC_64
        0x0100_0007,     // CPU_TYPE_X86_64
        3,               // CPU_SUBTYPE_X86_64_ALL
        6,               // MH_DYLIB
        0,               // ncmds
        0,               // sizeofcmds
        0,               // flags
        0,               // reserved
    ] {
        bytes.extend_from_slice(&word.to_le_bytes());
    }
    bytes
}

/// Output of a command as one text: standard output, then standard error, with every SHA-256
/// replaced so snapshots hold across compilers.
pub fn report(output: &std::process::Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let mut redacted = String::new();
    for line in text.lines() {
        let mut words: Vec<String> = Vec::new();
        for word in line.split(' ') {
            let is_sha = word.len() == 64 && word.chars().all(|c| c.is_ascii_hexdigit());
            words.push(if is_sha {
                "[sha256]".to_string()
            } else {
                word.to_string()
            });
        }
        redacted.push_str(&words.join(" "));
        redacted.push('\n');
    }
    redacted
}
