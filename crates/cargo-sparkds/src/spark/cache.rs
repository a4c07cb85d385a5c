//! The cache of `cargo sparkds spark`: the released plugin's jars (`plugin/<sha256>.jar`), the
//! sources embedded in the command (the JVM plugin's `jvm/` and the Python bridge), the JNI
//! library and the plugin's jar that a command built from a checkout builds from them (its JNI
//! library keyed by its content, the jar by that, the embedded sources and the Spark version),
//! and the pyspark that the command installs when python3 has none. Nothing is written outside
//! it: an SDK's checkout may be read-only or shared. An entry is made under a scratch name and
//! renamed into place, under a lock, so that a second run finds it whole and makes nothing.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use sparkds::{Error, Result};
use sparkds_package::Platform;

use super::tools::{self, Spark, PINNED_PYSPARK};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// The Python side of the session, written next to the sources.
const SESSION_PY: &str = include_str!("session.py");

/// What the venv of the cache installs, every package pinned with the hashes of its files
/// (written by `pin_pyspark.py`), and what builds pyspark, which PyPI has as a source archive.
const PYSPARK_REQUIREMENTS: &str = include_str!("pyspark-requirements.txt");
const PYSPARK_BUILD_REQUIREMENTS: &str = include_str!("pyspark-build-requirements.txt");
/// The Pythons that the pinned packages have wheels for (pyarrow 26: 3.11 and later; pandas
/// 2.3: up to 3.14).
const VENV_PYTHONS: std::ops::RangeInclusive<u32> = 11..=14;

/// The cache: `$SPARKDS_CACHE_DIR`, else `$XDG_CACHE_HOME/sparkds`, else `~/.cache/sparkds`.
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    pub fn open() -> Result<Cache> {
        let root =
            if let Some(dir) = std::env::var_os("SPARKDS_CACHE_DIR").filter(|d| !d.is_empty()) {
                PathBuf::from(dir)
            } else if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
                PathBuf::from(dir).join("sparkds")
            } else if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
                PathBuf::from(home).join(".cache").join("sparkds")
            } else {
                return Err(Error::usage(
                    "no cache directory: set SPARKDS_CACHE_DIR (or HOME) to a writable directory",
                ));
            };
        Cache::at(root)
    }

    /// The cache at `root`, created owner-only if missing. A cache that another user owns or
    /// may write to is refused: whoever writes there changes the plugin and the Python that
    /// Spark runs.
    ///
    /// # Errors
    ///
    /// When `root` cannot be created, or is not a directory of this user that only they write.
    pub fn at(root: PathBuf) -> Result<Cache> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&root).map_err(|e| {
            Error::io(
                format!(
                    "cannot create the cache {} (set SPARKDS_CACHE_DIR to another)",
                    root.display()
                ),
                e,
            )
        })?;
        #[cfg(unix)]
        check_private(&root)?;
        Ok(Cache { root })
    }

    /// The directory of this build of the command: its version and its embedded sources.
    fn versioned(&self) -> PathBuf {
        self.root
            .join(format!("{}-{}", env!("CARGO_PKG_VERSION"), embedded::HASH))
    }

    /// Runs `build` into a scratch directory renamed to `entry`, unless `entry` exists: under
    /// the cache's lock, so that concurrent runs build it once.
    fn entry(&self, entry: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        self.locked(entry, |scratch| {
            create_dir(scratch)?;
            build(scratch)
        })
    }

    /// Runs `build` with a scratch path (nothing there yet) renamed to `entry`, unless `entry`
    /// exists: under the cache's lock, so that concurrent runs make it once.
    fn locked(&self, entry: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
        if entry.exists() {
            return Ok(());
        }
        let lock_path = self.root.join(".lock");
        let lock = open_lock(&lock_path)?;
        lock.lock()
            .map_err(|e| Error::io(format!("cannot lock {}", lock_path.display()), e))?;
        if entry.exists() {
            return Ok(());
        }
        let name = entry.file_name().unwrap_or_default().to_string_lossy();
        let scratch = entry.with_file_name(format!("{name}.partial-{}", std::process::id()));
        remove(&scratch);
        build(&scratch).inspect_err(|_| remove(&scratch))?;
        std::fs::rename(&scratch, entry)
            .map_err(|e| Error::io(format!("cannot move {} into place", scratch.display()), e))
    }

    /// The embedded sources, written once: `jvm/`, `python/spark_native_bridge/` and the
    /// session's script, which the directory's name keys (the embedded hash covers the rest),
    /// so that a new build of the command never runs an old script.
    pub fn sources(&self) -> Result<PathBuf> {
        let dir = self
            .versioned()
            .join(format!("sources-{:016x}", fnv(SESSION_PY.as_bytes())));
        self.entry(&dir, |scratch| {
            for (relative, bytes) in embedded::FILES {
                write_file(&scratch.join(relative), bytes)?;
            }
            write_file(&scratch.join("session.py"), SESSION_PY.as_bytes())
        })?;
        Ok(dir)
    }

    /// The released plugin's jar whose SHA-256 is `sha256`: `plugin/<sha256>.jar`, which
    /// `fetch` writes (and checks) on first use.
    pub fn released_jar(
        &self,
        sha256: &str,
        fetch: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<PathBuf> {
        let jar = self.root.join("plugin").join(format!("{sha256}.jar"));
        self.locked(&jar, |partial| {
            create_dir(partial.parent().expect("a file has a directory"))?;
            fetch(partial)
        })?;
        Ok(jar)
    }

    /// The plugin's jar for `spark`, built from the embedded sources with the JNI library of
    /// `jni` (the `sparkds-jni` of the project's SDK), by the embedded `jvm/build.sh`: for a
    /// command that records no released plugin. The JNI library is built on every call (cargo
    /// has nothing to do when the SDK did not change) and kept by its content, so that an SDK
    /// that moves on gets a new plugin.
    pub fn plugin_jar(&self, spark: &Spark, jni: &JniSource) -> Result<PathBuf> {
        let platform = platform()?;
        // The bytes are read once: what is keyed is what is cached.
        let bytes = self.build_jni(jni)?;
        let key = format!("{:016x}", fnv(&bytes));
        // The JNI library depends on the SDK's sources only, not on the embedded ones.
        let jni_dir = self.root.join(format!(
            "jni-{}-{key}-{platform}",
            env!("CARGO_PKG_VERSION")
        ));
        self.entry(&jni_dir, |scratch| {
            write_file(&scratch.join(platform).join(jni_file_name()), &bytes)
        })?;
        let jar_dir = self.versioned().join(format!(
            "plugin-spark-{}-{platform}-jni-{key}",
            spark.version
        ));
        let sources = self.sources()?;
        self.entry(&jar_dir, |scratch| {
            build_jar(&sources, spark, &jni_dir, scratch)
        })?;
        Ok(jar_dir.join("spark-native-datasource.jar"))
    }

    /// Builds the JNI library of `jni` in the cache and returns its bytes: a cdylib crate that
    /// wraps `sparkds-jni` (whose `#[no_mangle]` JNI functions the cdylib exports), in
    /// `jni-build-<key of the source>/`, with the checkout's Cargo.lock for a path SDK (the
    /// versions its tests ran with), built into `jni-target/`, which every source shares. Never
    /// in the SDK's checkout, which may be read-only or someone else's.
    fn build_jni(&self, jni: &JniSource) -> Result<Vec<u8>> {
        let krate = self.root.join(format!("jni-build-{}", jni.key()));
        // Written only when they change: cargo rebuilds a crate whose files are newer.
        write_if_changed(
            &krate.join("Cargo.toml"),
            format!(
                "[package]\nname = \"sparkds-jni-cache\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
                 publish = false\n\n[lib]\nname = \"sparkds_jni_cache\"\ncrate-type = [\"cdylib\"]\n\n\
                 [dependencies]\nsparkds-jni = {}\n\n[profile.release]\npanic = \"unwind\"\n\n[workspace]\n",
                jni.dependency()
            )
            .as_bytes(),
        )?;
        write_if_changed(
            &krate.join("src/lib.rs"),
            b"//! The JNI library of the JVM plugin: sparkds-jni, linked whole into a cdylib.\nextern crate sparkds_jni;\n",
        )?;
        if let Some(lock) = jni.checkout_lock() {
            // The checkout's lock, each time it changes; cargo then adds the wrapper to it.
            let bytes = read_file(&lock)?;
            let mark = krate.join("Cargo.lock.source");
            let hash = format!("{:016x}", fnv(&bytes));
            if std::fs::read_to_string(&mark).ok().as_deref() != Some(hash.as_str()) {
                write_file(&krate.join("Cargo.lock"), &bytes)?;
                write_file(&mark, hash.as_bytes())?;
            }
        }
        let target = self.root.join("jni-target");
        let library = target.join("release").join(format!(
            "{}sparkds_jni_cache.{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_EXTENSION
        ));
        eprintln!(
            "sparkds: building the JVM plugin's JNI library, sparkds-jni of {}, in {} \
             (this cargo-sparkds is built from a checkout and records no released plugin){}",
            jni.describe(),
            target.display(),
            if library.is_file() {
                ""
            } else {
                ": the first build compiles about 100 crates, minutes on two cores"
            }
        );
        // Another build into the same target directory (a second `cargo sparkds spark`) may
        // replace the library between the end of this build and the read: cargo removes the old
        // file before it links the new one. The read then finds no file, and the build runs
        // again (a no-op, or the other build's result), at most three times.
        let mut attempt = 1;
        loop {
            run_shown(
                Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
                    .args(["build", "--release"])
                    .current_dir(&krate)
                    .env("CARGO_TARGET_DIR", &target),
                "cargo cannot build the JVM plugin's JNI library (its errors are above); use \
                 --bridge to run through the Python bridge instead",
            )?;
            match std::fs::read(&library) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempt < 3 => attempt += 1,
                read => {
                    return read
                        .map_err(|e| Error::io(format!("cannot read {}", library.display()), e))
                }
            }
        }
    }

    /// A venv of the cache with the pinned pyspark (and pyarrow, pandas and the Connect
    /// client's packages), installed with pip on first use, every file checked against the
    /// hashes of `pyspark-requirements.txt`. The venv's name holds the hash of that file, so a
    /// command with other pins makes a new one.
    pub fn pyspark_venv(&self, python: &Path) -> Result<PathBuf> {
        let venv = self.root.join(format!(
            "venv-pyspark-{PINNED_PYSPARK}-{:016x}",
            fnv(PYSPARK_REQUIREMENTS.as_bytes())
        ));
        let interpreter = venv.join("bin").join("python3");
        if interpreter.is_file() {
            return Ok(interpreter);
        }
        check_venv_python(python)?;
        eprintln!(
            "sparkds: python3 has no pyspark: installing pyspark {PINNED_PYSPARK} into {} (once)",
            venv.display()
        );
        let fix = format!(
            "install pyspark for python3 (`python3 -m pip install 'pyspark[connect]=={PINNED_PYSPARK}' \
             pyarrow 'pandas<3'`), or set SPARK_HOME to a Spark 4 distribution"
        );
        self.entry(&venv, |scratch| {
            run_quiet(
                Command::new(python).args(["-m", "venv"]).arg(scratch),
                &format!("python3 -m venv cannot create a venv ({fix}; on Debian, `apt-get install python3-venv`)"),
            )?;
            let requirements = scratch.join("pyspark-requirements.txt");
            let build = scratch.join("pyspark-build-requirements.txt");
            write_file(&requirements, PYSPARK_REQUIREMENTS.as_bytes())?;
            write_file(&build, PYSPARK_BUILD_REQUIREMENTS.as_bytes())?;
            let pip = |requirements: &Path, extra: &[&str]| {
                let mut command = Command::new(scratch.join("bin").join("python3"));
                command
                    .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
                    .arg("--require-hashes")
                    .args(extra)
                    .arg("-r")
                    .arg(requirements);
                command
            };
            let failed = format!("pip cannot install pyspark {PINNED_PYSPARK} (no network?): {fix}");
            // pyspark is a source archive: it builds with the pinned setuptools, not with
            // whatever an isolated build would fetch without a hash.
            run_quiet(&mut pip(&build, &[]), &failed)?;
            run_quiet(&mut pip(&requirements, &["--no-build-isolation"]), &failed)
        })?;
        // The interpreter finds its venv by the pyvenv.cfg beside it, renamed with it.
        Ok(interpreter)
    }
}

/// Refuses a Python for which the pinned packages have no wheels, before anything installs.
fn check_venv_python(python: &Path) -> Result<()> {
    let output = Command::new(python)
        .args([
            "-c",
            "import sys; print(sys.version_info[0], sys.version_info[1])",
        ])
        .output()
        .map_err(|e| Error::usage(format!("cannot run {}: {e}", python.display())))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text.split_whitespace().map(str::parse::<u32>);
    match (parts.next(), parts.next()) {
        (Some(Ok(3)), Some(Ok(minor))) if VENV_PYTHONS.contains(&minor) => Ok(()),
        _ => Err(Error::usage(format!(
            "{} is Python {}, and the pyspark {PINNED_PYSPARK} that cargo sparkds installs \
             needs Python 3.{} to 3.{} (the wheels of pyarrow and pandas it pins): put such a \
             python3 first on PATH, install pyspark for this one yourself, or set SPARK_HOME \
             to a Spark 4 distribution",
            python.display(),
            text.trim().replace(' ', "."),
            VENV_PYTHONS.start(),
            VENV_PYTHONS.end()
        ))),
    }
}

/// Opens the cache's lock file, creating it owner-only, without following a link: a link
/// planted there would have the command create or lock a file elsewhere.
fn open_lock(path: &Path) -> Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path).map_err(|e| {
        Error::io(
            format!(
                "cannot open the lock {} (a link there is refused: remove it)",
                path.display()
            ),
            e,
        )
    })
}

/// Refuses a cache directory that another user owns or that others may write to, and a link
/// to one, or a link that another user owns.
#[cfg(unix)]
fn check_private(root: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let fix = "set SPARKDS_CACHE_DIR to a directory of your own";
    let link = std::fs::symlink_metadata(root)
        .map_err(|e| Error::io(format!("cannot read {}", root.display()), e))?;
    if link.file_type().is_symlink() && link.uid() != me {
        return Err(Error::usage(format!(
            "the cache {} is a link that another user owns (uid {}): {fix}",
            root.display(),
            link.uid()
        )));
    }
    let meta = std::fs::metadata(root)
        .map_err(|e| Error::io(format!("cannot read {}", root.display()), e))?;
    if !meta.is_dir() {
        return Err(Error::usage(format!(
            "the cache {} is not a directory: {fix}",
            root.display()
        )));
    }
    if meta.uid() != me {
        return Err(Error::usage(format!(
            "the cache {} belongs to another user (uid {}), who could change the plugin and \
             the Python that Spark runs: {fix}",
            root.display(),
            meta.uid()
        )));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(Error::usage(format!(
            "other users may write to the cache {} (mode {:o}) and change the plugin and the \
             Python that Spark runs: `chmod go-w {}`, or {fix}",
            root.display(),
            meta.mode() & 0o777,
            root.display()
        )));
    }
    Ok(())
}

/// Where `sparkds-jni` comes from: the same place as the project's SDK.
pub enum JniSource {
    /// `crates/sparkds-jni` of a checkout, next to `crates/spark-datasource`.
    Path(PathBuf),
    /// A git repository at a commit.
    Git { url: String, rev: String },
}

impl JniSource {
    /// The dependency line of the wrapper crate's Cargo.toml.
    fn dependency(&self) -> String {
        match self {
            JniSource::Path(path) => format!("{{ path = {:?} }}", path.display().to_string()),
            JniSource::Git { url, rev } => format!("{{ git = {url:?}, rev = {rev:?} }}"),
        }
    }

    /// A short key of the source, for the cache.
    fn key(&self) -> String {
        format!("{:016x}", fnv(self.dependency().as_bytes()))
    }

    /// The source, as a message names it.
    fn describe(&self) -> String {
        match self {
            JniSource::Path(path) => format!("the SDK's checkout ({})", path.display()),
            JniSource::Git { url, rev } => format!("{url} at {rev}"),
        }
    }

    /// The Cargo.lock of the checkout of a path source (`<checkout>/crates/sparkds-jni`).
    fn checkout_lock(&self) -> Option<PathBuf> {
        match self {
            JniSource::Path(crate_dir) => crate_dir
                .parent()
                .and_then(Path::parent)
                .map(|root| root.join("Cargo.lock"))
                .filter(|lock| lock.is_file()),
            JniSource::Git { .. } => None,
        }
    }
}

/// Runs the embedded `jvm/build.sh --jni-dir` with Spark's jars, and keeps its jar in `out`.
fn build_jar(sources: &Path, spark: &Spark, jni_dir: &Path, out: &Path) -> Result<()> {
    for tool in ["javac", "jar"] {
        tools::java_tool(tool)?;
    }
    eprintln!(
        "sparkds: compiling the JVM plugin for Spark {} with javac, from the sources this \
         command carries (once per Spark version and JNI library)",
        spark.version
    );
    let script = sources.join("jvm").join("build.sh");
    let output = Command::new("bash")
        .arg(&script)
        .arg("--jni-dir")
        .arg(jni_dir)
        .env("SPARK_HOME", &spark.home)
        .env("CARGO_TARGET_DIR", out.join("build"))
        .env("PATH", path_with_java()?)
        .output()
        .map_err(|e| {
            Error::usage(format!(
                "cannot run bash {}: {e}; install bash",
                script.display()
            ))
        })?;
    if !output.status.success() {
        return Err(Error::usage(format!(
            "the JVM plugin's build ({}) failed: {}; use --bridge to run through the Python \
             bridge instead",
            script.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let jar = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    std::fs::copy(&jar, out.join("spark-native-datasource.jar"))
        .map_err(|e| Error::io(format!("cannot copy {}", jar.display()), e))?;
    let _ = std::fs::remove_dir_all(out.join("build"));
    Ok(())
}

/// PATH with `$JAVA_HOME/bin` first when JAVA_HOME is set, so that build.sh finds its javac.
pub fn path_with_java() -> Result<std::ffi::OsString> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        dirs.push(Path::new(&home).join("bin"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).map_err(|e| Error::usage(format!("cannot build PATH: {e}")))
}

/// The platform key of this machine, as packages and the plugin name them.
fn platform() -> Result<&'static str> {
    Platform::current().map(Platform::key).ok_or_else(|| {
        Error::usage(format!(
            "the JVM plugin has no build for {} {}: use --bridge",
            std::env::consts::OS,
            std::env::consts::ARCH
        ))
    })
}

fn jni_file_name() -> String {
    format!(
        "{}sparkds_jni.{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_EXTENSION
    )
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))
}

/// Removes a file or a directory, if there is one.
fn remove(path: &Path) {
    if path.is_dir() {
        let _ = std::fs::remove_dir_all(path);
    } else {
        let _ = std::fs::remove_file(path);
    }
}

/// Writes `bytes` to `path` unless it holds them already.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).ok().as_deref() == Some(bytes) {
        return Ok(());
    }
    write_file(path, bytes)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    create_dir(path.parent().expect("a file has a directory"))?;
    std::fs::write(path, bytes)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    #[cfg(unix)]
    if path.extension().is_some_and(|e| e == "sh") {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io(format!("cannot make {} executable", path.display()), e))?;
    }
    Ok(())
}

/// Runs `command` with its output shown, failing with `message`.
fn run_shown(command: &mut Command, message: &str) -> Result<()> {
    let status = command
        .status()
        .map_err(|e| Error::usage(format!("{message}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::usage(message.to_string()))
    }
}

/// Runs `command` quietly; on failure, `message` and what it printed.
fn run_quiet(command: &mut Command, message: &str) -> Result<()> {
    let output = command
        .output()
        .map_err(|e| Error::usage(format!("{message}: {e}")))?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let last: Vec<&str> = said.lines().rev().take(3).collect();
    Err(Error::usage(format!(
        "{message}\n  ({})",
        last.into_iter().rev().collect::<Vec<_>>().join("\n   ")
    )))
}

/// FNV-1a, 64 bits.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_cache_that_others_may_write_to_is_refused() {
        let dir = tempfile::tempdir().expect("a directory");
        let root = dir.path().join("cache");
        Cache::at(root.clone()).expect("a new cache is the user's");
        let mode = std::fs::metadata(&root).expect("made").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let error = Cache::at(root.clone()).err().map(|e| e.to_string());
        assert_eq!(
            error,
            Some(format!(
                "other users may write to the cache {0} (mode 777) and change the plugin and \
                 the Python that Spark runs: `chmod go-w {0}`, or set SPARKDS_CACHE_DIR to a \
                 directory of your own",
                root.display()
            ))
        );
    }

    #[test]
    fn a_cache_of_another_user_is_refused() {
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return; // Only root can give a directory to another user.
        }
        let dir = tempfile::tempdir().expect("a directory");
        let root = dir.path().join("cache");
        std::fs::create_dir(&root).expect("mkdir");
        std::os::unix::fs::chown(&root, Some(65534), None).expect("chown");
        let error = Cache::at(root.clone()).err().map(|e| e.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|e| e.contains("belongs to another user (uid 65534)")),
            "{error:?}"
        );
    }

    #[test]
    fn the_lock_is_not_opened_through_a_link() {
        let dir = tempfile::tempdir().expect("a directory");
        let cache = Cache::at(dir.path().join("cache")).expect("a cache");
        let elsewhere = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, cache.root.join(".lock")).expect("a link");
        let entry = cache.root.join("entry");
        let result = cache.entry(&entry, create_dir);
        assert!(result
            .err()
            .is_some_and(|e| e.to_string().contains("a link there is refused")),);
        assert!(!elsewhere.exists() && !entry.exists());
    }

    #[test]
    fn every_pinned_package_has_a_version_and_hashes() {
        for text in [PYSPARK_REQUIREMENTS, PYSPARK_BUILD_REQUIREMENTS] {
            let requirements: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.starts_with(' '))
                .collect();
            assert!(!requirements.is_empty());
            for requirement in &requirements {
                assert!(
                    requirement.contains("==") && requirement.ends_with('\\'),
                    "{requirement}"
                );
            }
            assert!(text.matches("--hash=sha256:").count() >= requirements.len());
        }
        for package in ["pyspark==4.3.0", "pyarrow==", "pandas==2.", "numpy=="] {
            assert!(PYSPARK_REQUIREMENTS.contains(package), "{package}");
        }
    }
}
