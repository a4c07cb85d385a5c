//! The release rehearsal: what the README tells a user to do after a release, done in a fresh
//! HOME that no path of the checkout reaches, with every artifact from a local mirror of its
//! registry, each mirror built from a copy of this checkout as the release workflow builds it.
//!
//! The mirrors:
//! - a git repository (bare) at the tag `v<version>`, for `cargo generate --git`;
//! - a local crate registry (cargo's `local-registry` source, which replaces crates.io in the
//!   fresh HOME's cargo configuration): the `.crate` files of the publishable crates, packaged
//!   with `released-plugin.txt` recording the mirror's jar, and of every crate of Cargo.lock at
//!   its locked version (from cargo's download cache, which `.ci/install`'s `cargo fetch`
//!   filled, each checked against Cargo.lock's checksum), and an index written from
//!   `cargo metadata`: a few dozen lines where `cargo vendor` would unpack every crate (337 MB,
//!   25 s);
//! - the Maven repository of the JVM plugin (`jvm/maven.sh`, the release tests' own);
//! - a folder with the wheel of the Python bridge.
//!
//! Then, as the user: `cargo install --locked cargo-sparkds@<version>` from the registry,
//! `cargo generate --git <mirror> --tag v<version>` with the default answers (so the SDK is
//! `version:<version>`, from the registry), `cargo build --release`, `cargo sparkds show` and
//! `check`, `cargo sparkds spark --sql` (the plugin fetched from the Maven mirror, nothing
//! compiled but the project), `spark-submit --packages` reading examples/c_range, and the bridge
//! installed with pip from the wheel folder reading it too. Each step prints its time. At the
//! end, no file of the fresh HOME holds a path of the checkout, and the copy the mirrors were
//! built from is as git committed it.
//!
//! `cargo install` builds in a target directory kept between runs, outside the checkout and the
//! HOME (`<temporary>/sparkds-rehearsal-install-<hash of the repository's path>`; those of
//! checkouts that are gone are removed), and the
//! mirrors and the HOME are made anew each run at the same paths
//! (`<temporary>/sparkds-rehearsal-<hash>`), since cargo's fingerprints hold the paths of the
//! registry's sources: the crates of crates.io it compiles never change at a version, and the
//! workspace's crates, which change under the same version, are rebuilt every run (their
//! fingerprints are removed first), since cargo takes a registry crate of an unchanged version
//! as unchanged. The project's `target/` is kept alike between runs
//! (`<temporary>/sparkds-rehearsal-project-target-<hash>`, moved back into the project, at the
//! same path, before `cargo build`). A fresh clone (CI) installs and builds cold, as a user does.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use super::checkout;
use super::spark_helpers::{checked, output_again_on_worker_timeout, Repository};
use super::{
    entries, pyspark_home, release, sha256_hex, READ_C_RANGE, READ_THROUGH_THE_BRIDGE, VERSION,
};

/// The name of the generated project.
const NAME: &str = "my_source";

/// The time of each step, printed as it ends and once more at the end.
#[derive(Default)]
struct Steps(Vec<(String, f64)>);

impl Steps {
    /// Runs `command`, which must succeed, as the step `name`.
    fn run(&mut self, name: &str, command: &mut Command) -> Output {
        let started = Instant::now();
        let output = checked(command, name);
        self.record(name, started);
        output
    }

    fn record(&mut self, name: &str, started: Instant) {
        let seconds = started.elapsed().as_secs_f64();
        println!("step `{name}`: {seconds:.1} s");
        self.0.push((name.to_string(), seconds));
    }

    fn print(&self) {
        println!("rehearsal, each step's time:");
        for (name, seconds) in &self.0 {
            println!("  {seconds:>7.1} s  {name}");
        }
    }
}

/// The mirrors of the registries, and the copy of the checkout they were built from.
struct Mirrors {
    copy: PathBuf,
    git: PathBuf,
    registry: PathBuf,
    maven: PathBuf,
    wheels: PathBuf,
    /// The workspace's crates in the registry, in publishing order.
    publishable: Vec<String>,
}

/// A user on this machine whose HOME is new: its environment holds nothing of the test's
/// but the toolchain (rustup's), and a PATH where no `cargo-sparkds` is found.
struct User {
    home: PathBuf,
    path: OsString,
}

/// `dir`, or, when it holds a `cargo-sparkds` (as `~/.cargo/bin` does once the README's first
/// command installed one from a clone), a directory of the HOME with links to everything else in
/// it: cargo, rustc and the other tools stay found, the command is not.
fn without_cargo_sparkds(home: &Path, index: usize, dir: PathBuf) -> PathBuf {
    if !dir.join("cargo-sparkds").exists() {
        return dir;
    }
    let links = home.join(format!("machine-path-{index}"));
    std::fs::create_dir_all(&links).expect("create a directory of links");
    for entry in std::fs::read_dir(&dir)
        .expect("read a PATH directory")
        .flatten()
    {
        if entry.file_name() != "cargo-sparkds" {
            std::os::unix::fs::symlink(entry.path(), links.join(entry.file_name()))
                .expect("link a program of PATH");
        }
    }
    links
}

impl User {
    fn new(home: PathBuf, checkouts: &[PathBuf]) -> User {
        std::fs::create_dir_all(home.join(".cargo/bin")).expect("create the HOME's .cargo/bin");
        std::fs::create_dir_all(home.join("tmp")).expect("create the HOME's tmp");
        let kept = std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .filter(|dir| !checkouts.iter().any(|c| dir.starts_with(c)))
            .enumerate()
            .map(|(i, dir)| without_cargo_sparkds(&home, i, dir))
            .collect::<Vec<_>>();
        let path = std::env::join_paths(std::iter::once(home.join(".cargo/bin")).chain(kept))
            .expect("a PATH");
        User { home, path }
    }

    /// `program` run by the user in `dir`.
    fn command(&self, program: &str, dir: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", &self.path)
            .env("CARGO_HOME", self.home.join(".cargo"))
            .env("TMPDIR", self.home.join("tmp"))
            .env("LANG", "C.UTF-8")
            // Java takes its user.home from the password database, not from HOME: without this,
            // Ivy (spark-submit --packages) and Spark's caches would use this machine's own
            // home, where an earlier run's jar may wait, instead of the fresh one.
            .env(
                "JAVA_TOOL_OPTIONS",
                format!("-Duser.home={}", self.home.display()),
            )
            // A login shell's USER, which cargo generate reads for the project's authors (it
            // stops without one); this process may run without it, as in a container.
            .env(
                "USER",
                std::env::var_os("USER").unwrap_or_else(|| "sparkds-user".into()),
            )
            .current_dir(dir);
        // The machine's toolchains: rustup's (which lives outside any HOME of a user once
        // RUSTUP_HOME names it), pyenv's and the JDK.
        let rustup = std::env::var_os("RUSTUP_HOME").unwrap_or_else(|| {
            Path::new(&std::env::var_os("HOME").expect("HOME is set"))
                .join(".rustup")
                .into_os_string()
        });
        command.env("RUSTUP_HOME", rustup);
        for (key, value) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if key_text.starts_with("RUSTUP_")
                || key_text.starts_with("PYENV_")
                || key_text == "JAVA_HOME"
            {
                command.env(&key, value);
            }
        }
        command
    }

    /// `cargo <args>` in `dir`.
    fn cargo(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = self.command("cargo", dir);
        command.args(args);
        command
    }
}

#[test]
fn a_user_installs_every_released_artifact_from_its_registry_in_a_fresh_home() {
    let mut steps = Steps::default();
    let repository = Repository::locate();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the repository")
        .to_path_buf();
    forget_gone_checkouts();
    // A new directory at the same path each run (cargo's fingerprints hold the paths of the
    // registry's sources, under the HOME), left for a look when the test fails.
    let work = kept_directory("sparkds-rehearsal");
    let project = work.join("home").join(NAME);
    let project_build = kept_directory("sparkds-rehearsal-project-target");
    keep_build(&project.join("target"), &project_build);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("create the rehearsal's directory");
    let mirrors = mirrors(&repository, &work, &mut steps);
    let clean = git_status(&mirrors.copy);
    assert_eq!(
        clean, "",
        "the copy is not as committed before the user's steps"
    );

    let mut checkouts = vec![root, mirrors.copy.clone()];
    checkouts.extend(checkout::shared());
    let user = User::new(work.join("home"), &checkouts);
    let home = user.home.clone();
    // The registry replaces crates.io, as a mirror does: nothing comes from the network.
    std::fs::write(
        home.join(".cargo/config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"rehearsal\"\n\n[source.rehearsal]\nlocal-registry = {:?}\n",
            mirrors.registry.display().to_string()
        ),
    )
    .expect("write the HOME's cargo configuration");

    install_the_command(&user, &mirrors.publishable, &mut steps);
    let version_said = steps.run(
        "cargo sparkds --version",
        &mut user.cargo(&home, &["sparkds", "--version"]),
    );
    assert!(
        String::from_utf8_lossy(&version_said.stdout).contains(VERSION),
        "{version_said:?}"
    );

    steps.run(
        "cargo generate --git <mirror> --tag",
        user.cargo(&home, &["generate", "--git"])
            .arg(format!("file://{}", mirrors.git.display()))
            .args(["--tag", &format!("v{VERSION}"), "--name", NAME, "--silent"]),
    );
    let manifest = std::fs::read_to_string(project.join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        manifest.contains(&format!("spark-datasource = \"{VERSION}\"")),
        "the default `sdk` is version:{VERSION}:\n{manifest}"
    );

    // The build of an earlier run, at the same path, where cargo finds it: the crates of
    // crates.io it holds never change at a version; the project and the SDK's crates are built
    // again. A fresh clone (CI) builds cold, as a user does.
    let warm = project_build.exists();
    if warm {
        let mut ours = mirrors.publishable.clone();
        ours.push(NAME.to_string());
        forget_crates(&project_build.join("release/.fingerprint"), &ours);
        std::fs::rename(&project_build, project.join("target")).expect("restore the build");
    }
    let built = steps.run(
        &format!(
            "cargo build --release ({})",
            if warm {
                "the crates.io crates built by an earlier run"
            } else {
                "cold"
            }
        ),
        &mut user.cargo(&project, &["build", "--release"]),
    );
    let said = String::from_utf8_lossy(&built.stderr);
    for ours in ["spark-datasource-core", "spark-datasource"] {
        assert!(
            said.contains(&format!("Compiling {ours} v{VERSION}")),
            "the SDK's crates of the registry are built each run:\n{said}"
        );
    }
    let lock = std::fs::read_to_string(project.join("Cargo.lock")).expect("Cargo.lock");
    assert!(
        lock.contains(&format!(
            "name = \"spark-datasource\"\nversion = \"{VERSION}\"\nsource = \"registry+"
        )),
        "the SDK comes from the registry:\n{lock}"
    );
    let shown = steps.run(
        "cargo sparkds show --release",
        &mut user.cargo(&project, &["sparkds", "show", "--release", "end=20"]),
    );
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("row 19"),
        "{shown:?}"
    );
    steps.run(
        "cargo sparkds check --release",
        &mut user.cargo(&project, &["sparkds", "check", "--release"]),
    );

    spark_sql(&user, &project, &mirrors, &mut steps);
    spark_submit_packages(&user, &mirrors, &mut steps);
    bridge_from_the_wheel(&user, &mirrors, &mut steps);

    // No path of a checkout anywhere in what the user's HOME holds: not in the installed
    // command, the registry's sources, the project, its build, the caches.
    let started = Instant::now();
    let mut grep = Command::new("grep");
    grep.args(["-rlF", "--no-messages"]);
    for checkout in &checkouts {
        grep.arg("-e").arg(checkout);
    }
    let found = grep.arg(&home).output().expect("grep runs");
    steps.record("grep the HOME for a path of the checkout", started);
    assert!(
        found.stdout.is_empty(),
        "files of the fresh HOME that name a path of the checkout ({checkouts:?}):\n{}",
        String::from_utf8_lossy(&found.stdout)
    );
    assert_eq!(
        git_status(&mirrors.copy),
        "",
        "the user's steps wrote into the checkout"
    );
    steps.print();
    keep_build(&project.join("target"), &project_build);
    let _ = std::fs::remove_dir_all(&work);
}

/// Moves the project's build of a run to `kept`, replacing what was there, for the next run.
fn keep_build(build: &Path, kept: &Path) {
    if build.is_dir() {
        let _ = std::fs::remove_dir_all(kept);
        std::fs::rename(build, kept).expect("keep the project's build");
    }
}

/// Removes the fingerprints of the crates `names` from a cargo build's `fingerprints`, so that
/// cargo builds them again: the registry's crates of this workspace change under the same
/// version, which cargo takes as unchanged.
fn forget_crates(fingerprints: &Path, names: &[String]) {
    for entry in std::fs::read_dir(fingerprints)
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = names.iter().any(|crate_name| {
            name.strip_prefix(crate_name.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|hash| hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()))
        });
        if ours {
            std::fs::remove_dir_all(entry.path()).expect("remove a fingerprint");
        }
    }
}

/// `<temporary>/<prefix>-<hash of the repository's path>`: one path per checkout, the same in
/// every run, in the system's temporary directory (the suite gives its groups one of the run's,
/// removed at its end). Beside it, `<that>.checkout` names the checkout, so that
/// `forget_gone_checkouts` can tell whose it is.
fn kept_directory(prefix: &str) -> PathBuf {
    let checkout = Repository::locate().path("");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&checkout, &mut hasher);
    let name = format!("{prefix}-{:016x}", std::hash::Hasher::finish(&hasher));
    let base = system_tmpdir();
    std::fs::write(
        base.join(format!("{name}.checkout")),
        checkout.display().to_string(),
    )
    .unwrap_or_else(|e| panic!("cannot write in {}: {e}", base.display()));
    base.join(name)
}

fn system_tmpdir() -> PathBuf {
    std::env::var_os("SPARKDS_SUITE_SYSTEM_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

/// Removes the kept directories of checkouts that no longer exist (a clone made for one run,
/// then deleted), and those of earlier versions of this test, which name no checkout: each
/// holds hundreds of megabytes of builds that no run will use again.
fn forget_gone_checkouts() {
    let base = system_tmpdir();
    let Ok(entries) = std::fs::read_dir(&base) else {
        return;
    };
    let names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sparkds-rehearsal-"))
        .collect();
    for name in &names {
        let (stem, marker) = match name.strip_suffix(".checkout") {
            Some(stem) => (stem.to_string(), Some(base.join(name))),
            None if names.contains(&format!("{name}.checkout")) => continue,
            None => (name.clone(), None),
        };
        let gone = marker.as_ref().is_none_or(|marker| {
            std::fs::read_to_string(marker).is_ok_and(|checkout| !Path::new(&checkout).exists())
        });
        if gone {
            let _ = std::fs::remove_dir_all(base.join(&stem));
            if let Some(marker) = marker {
                let _ = std::fs::remove_file(marker);
            }
        }
    }
}

/// `git status` of `copy`, ignored files included: empty when the tree is as committed.
fn git_status(copy: &Path) -> String {
    let output = checked(
        Command::new("git")
            .args([
                "status",
                "--porcelain",
                "--ignored",
                "--untracked-files=all",
            ])
            .current_dir(copy),
        "git status",
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Builds the mirrors in `work`, from a copy of the repository committed and tagged there.
fn mirrors(repository: &Repository, work: &Path, steps: &mut Steps) -> Mirrors {
    let release = release();
    let started = Instant::now();
    let copy = work.join(checkout::NAME);
    checkout::copy(&repository.path(""), &copy).expect("copy the repository");
    let git = |args: &[&str]| {
        checked(
            Command::new("git")
                .args([
                    "-c",
                    "user.name=release",
                    "-c",
                    "user.email=release@invalid",
                ])
                .args(["-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"])
                .args(args)
                .current_dir(&copy),
            &format!("git {args:?}"),
        )
    };
    git(&["init", "--quiet"]);
    git(&["add", "--all"]);
    git(&["commit", "--quiet", "--message", "release"]);
    git(&["tag", &format!("v{VERSION}")]);
    let bare = work.join("git").join(format!("{}.git", checkout::NAME));
    checked(
        Command::new("git")
            .args(["clone", "--quiet", "--bare"])
            .arg(&copy)
            .arg(&bare),
        "git clone --bare",
    );
    steps.record("mirror: the repository, tagged, as a bare clone", started);
    println!(
        "the git mirror: {} ({} bytes), tag v{VERSION}",
        bare.display(),
        tree_size(&bare)
    );

    // The crates, packaged as `crates.py publish` publishes them, with the record of the
    // mirror's jar that the release writes before (`crates.py record-plugin`).
    let started = Instant::now();
    let record_path = copy.join("crates/cargo-sparkds/released-plugin.txt");
    let record = std::fs::read_to_string(&record_path).expect("released-plugin.txt");
    std::fs::write(&record_path, format!("{record}{}\n", release.record))
        .expect("write the record");
    let order = checked(
        Command::new("python3")
            .arg(copy.join(".github/release/crates.py"))
            .arg("order")
            .current_dir(&copy),
        "crates.py order",
    );
    let publishable: Vec<String> = String::from_utf8_lossy(&order.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let package_target = work.join("package-target");
    let mut package = Command::new(env!("CARGO"));
    package
        .args(["package", "--locked", "--no-verify", "--allow-dirty"])
        .env("CARGO_TARGET_DIR", &package_target)
        .current_dir(&copy);
    for name in &publishable {
        package.args(["-p", name]);
    }
    checked(&mut package, "cargo package");
    // The tree as tagged again: the release writes the record in its runner only.
    std::fs::write(&record_path, record).expect("restore the record");
    let registry = work.join("registry");
    let listing = write_local_registry(
        &copy,
        &package_target.join("package"),
        &publishable,
        &registry,
    );
    steps.record(
        "mirror: the crates, packaged, and a local registry",
        started,
    );
    println!("{listing}");

    // The bridge's wheel, built from a copy of python/ (setuptools writes build/ beside it).
    let started = Instant::now();
    let python = work.join("python");
    checked(
        Command::new("cp")
            .arg("-R")
            .arg(copy.join("python"))
            .arg(&python),
        "cp -R python",
    );
    let wheels = work.join("wheels");
    checked(
        Command::new("python3")
            .args(["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir"])
            .arg(&wheels)
            .arg(&python),
        "pip wheel python/",
    );
    steps.record("mirror: the bridge's wheel", started);
    check_the_wheel(&wheels, &copy);

    let maven = release.maven.clone();
    println!("the Maven mirror: {}", maven.display());
    for file in files_under(&maven) {
        println!(
            "  {:>9} {}",
            std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0),
            file.strip_prefix(&maven).unwrap_or(&file).display()
        );
    }
    Mirrors {
        copy,
        git: bare,
        registry,
        maven,
        wheels,
        publishable,
    }
}

/// The wheel holds the bridge's modules and its metadata; prints its entries.
fn check_the_wheel(wheels: &Path, copy: &Path) {
    let wheel = wheels.join(format!("spark_native_bridge-{VERSION}-py3-none-any.whl"));
    let contents = entries(&wheel);
    let mut listing = String::new();
    for (name, bytes) in &contents {
        listing.push_str(&format!("{:>9} {name}\n", bytes.len()));
    }
    println!(
        "the wheel folder: {} ({} bytes):\n{listing}",
        wheel.file_name().unwrap().to_string_lossy(),
        std::fs::metadata(&wheel).expect("the wheel").len()
    );
    let modules = contents
        .iter()
        .filter(|(n, _)| n.starts_with("spark_native_bridge/"))
        .count();
    let sources = std::fs::read_dir(copy.join("python/spark_native_bridge"))
        .expect("python/spark_native_bridge")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "py"))
        })
        .count();
    assert_eq!(modules, sources, "{listing}");
    let metadata = contents
        .iter()
        .find(|(n, _)| n.ends_with(".dist-info/METADATA"))
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .expect("METADATA");
    for wanted in [
        "Name: spark-native-bridge".to_string(),
        format!("Version: {VERSION}"),
        "License-Expression: Apache-2.0".to_string(),
        "Requires-Dist: pyarrow>=11".to_string(),
    ] {
        assert!(
            metadata.contains(&wanted),
            "METADATA has no {wanted}:\n{metadata}"
        );
    }
}

/// Writes a local registry at `registry`: the `.crate` file of every package of the copy's
/// Cargo.lock (the publishable crates from `packaged`, the others from cargo's download cache)
/// and the index of cargo's registries, one JSON line per version, written from what
/// `cargo metadata` reads in each manifest. Returns a listing of what it holds.
fn write_local_registry(
    copy: &Path,
    packaged: &Path,
    publishable: &[String],
    registry: &Path,
) -> String {
    let metadata = checked(
        Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--locked", "--offline"])
            .current_dir(copy),
        "cargo metadata",
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&metadata.stdout).expect("cargo metadata's JSON");
    let checksums = locked_checksums(&copy.join("Cargo.lock"));
    let downloads = download_cache();
    std::fs::create_dir_all(registry.join("index")).expect("create the registry");
    let mut index: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut listing = String::new();
    let (mut crates, mut bytes) = (0, 0);
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("a name");
        let version = package["version"].as_str().expect("a version");
        let file_name = format!("{name}-{version}.crate");
        let from = match package["source"].as_str() {
            Some(source) if source.starts_with("registry+") => {
                let file = downloads.join(&file_name);
                assert!(
                    file.is_file(),
                    "{} is not in cargo's download cache: run `cargo fetch --locked` (.ci/install does)",
                    file_name
                );
                file
            }
            None if publishable.iter().any(|p| p == name) => packaged.join(&file_name),
            _ => continue,
        };
        let data = std::fs::read(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        let checksum = sha256_hex(&data);
        if let Some(locked) = checksums.get(&(name.to_string(), version.to_string())) {
            assert_eq!(
                &checksum, locked,
                "{file_name} is not the crate Cargo.lock records"
            );
        }
        std::fs::write(registry.join(&file_name), &data).expect("write a .crate");
        crates += 1;
        bytes += data.len();
        if package["source"].is_null() {
            listing.push_str(&format!("  {file_name}, {} bytes:\n", data.len()));
            listing.push_str(&crate_files(&from));
        }
        let line = index_line(package, &checksum);
        index
            .entry(name.to_lowercase())
            .or_default()
            .push(line.to_string());
    }
    for (name, lines) in &index {
        let file = registry.join("index").join(index_path(name));
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("create an index dir");
        std::fs::write(&file, lines.join("\n") + "\n").expect("write an index file");
    }
    format!(
        "the crate registry: {} ({crates} crates, {bytes} bytes), the workspace's:\n{listing}",
        registry.display()
    )
}

/// The files of a `.crate` (a gzipped tar), with their sizes.
fn crate_files(archive: &Path) -> String {
    let listed = checked(Command::new("tar").arg("-tzvf").arg(archive), "tar -tzvf");
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|line| {
            // `-rw-r--r-- 0/0 1234 1970-01-01 00:00 name-version/path`
            let fields: Vec<&str> = line.split_whitespace().collect();
            format!(
                "    {:>8} {}\n",
                fields.get(2).unwrap_or(&"?"),
                fields.last().unwrap_or(&"?")
            )
        })
        .collect()
}

/// The index entry of `package` (from `cargo metadata`), as crates.io's index writes it.
fn index_line(package: &serde_json::Value, checksum: &str) -> serde_json::Value {
    let deps: Vec<serde_json::Value> = package["dependencies"]
        .as_array()
        .expect("dependencies")
        .iter()
        // A dependency by path alone (a dev-dependency in the workspace) is not published.
        .filter(|d| !(d["path"].is_string() && d["req"] == "*"))
        .map(|d| {
            let renamed = d["rename"].as_str();
            let mut dep = serde_json::json!({
                "name": renamed.unwrap_or(d["name"].as_str().expect("a name")),
                "req": d["req"],
                "features": d["features"],
                "optional": d["optional"],
                "default_features": d["uses_default_features"],
                "target": d["target"],
                "kind": d["kind"].as_str().unwrap_or("normal"),
                "registry": null,
            });
            if renamed.is_some() {
                dep["package"] = d["name"].clone();
            }
            dep
        })
        .collect();
    serde_json::json!({
        "name": package["name"],
        "vers": package["version"],
        "deps": deps,
        "cksum": checksum,
        "features": package["features"],
        "yanked": false,
        "links": package["links"],
        "rust_version": package["rust_version"],
        "v": 2,
    })
}

/// Where the index of a registry keeps the versions of `name` (lower case).
fn index_path(name: &str) -> PathBuf {
    match name.len() {
        1 => PathBuf::from("1").join(name),
        2 => PathBuf::from("2").join(name),
        3 => PathBuf::from("3").join(&name[..1]).join(name),
        _ => PathBuf::from(&name[..2]).join(&name[2..4]).join(name),
    }
}

/// The checksum of each crates.io package of a Cargo.lock, by name and version.
fn locked_checksums(lock: &Path) -> BTreeMap<(String, String), String> {
    let text = std::fs::read_to_string(lock).expect("Cargo.lock");
    let mut checksums = BTreeMap::new();
    for block in text.split("[[package]]") {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                l.strip_prefix(&format!("{key} = \""))
                    .and_then(|v| v.strip_suffix('"'))
            })
        };
        if let (Some(name), Some(version), Some(checksum)) =
            (field("name"), field("version"), field("checksum"))
        {
            checksums.insert(
                (name.to_string(), version.to_string()),
                checksum.to_string(),
            );
        }
    }
    checksums
}

/// Cargo's cache of the `.crate` files it downloaded from crates.io.
fn download_cache() -> PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(&std::env::var_os("HOME").expect("HOME is set")).join(".cargo")
        });
    let cache = cargo_home.join("registry/cache");
    std::fs::read_dir(&cache)
        .unwrap_or_else(|e| panic!("{}: {e}: run `cargo fetch --locked`", cache.display()))
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index.crates.io-"))
        })
        .unwrap_or_else(|| panic!("no crates.io cache in {}", cache.display()))
}

/// `cargo install --locked cargo-sparkds@<version>`, from the registry, in the kept target
/// directory (see the module's documentation).
fn install_the_command(user: &User, publishable: &[String], steps: &mut Steps) {
    let target = kept_directory("sparkds-rehearsal-install");
    let cold = !target.exists();
    // Every crate of the workspace that the registry holds (the SDK's core and eval crates
    // too, which the command depends on).
    forget_crates(&target.join("release/.fingerprint"), publishable);
    let output = steps.run(
        &format!(
            "cargo install --locked cargo-sparkds@{VERSION} ({})",
            if cold {
                "cold"
            } else {
                "the crates.io crates built by an earlier run"
            }
        ),
        user.cargo(
            &user.home,
            &["install", "--locked", &format!("cargo-sparkds@{VERSION}")],
        )
        .env("CARGO_TARGET_DIR", &target),
    );
    let said = String::from_utf8_lossy(&output.stderr);
    let compiled = said
        .lines()
        .filter(|l| l.trim_start().starts_with("Compiling "))
        .count();
    println!("cargo install compiled {compiled} crates");
    assert!(
        said.contains(&format!("Compiling cargo-sparkds v{VERSION}")),
        "the workspace's crates are built each run:\n{said}"
    );
}

/// `cargo sparkds spark --sql` in the project: the plugin from the Maven mirror, nothing built
/// but the project (already built: nothing at all). Prints what it cost beyond Spark's own
/// start, measured just after with the same statement and jar in a bare PySpark session.
fn spark_sql(user: &User, project: &Path, mirrors: &Mirrors, steps: &mut Steps) {
    let release = release();
    let statement = format!("SELECT * FROM native.{NAME} LIMIT 5");
    let started = Instant::now();
    let output = steps.run(
        "cargo sparkds spark --sql (first run)",
        user.cargo(project, &["sparkds", "spark", "--sql", &statement])
            .env(
                "SPARKDS_MAVEN_REPOSITORY",
                format!("file://{}", mirrors.maven.display()),
            ),
    );
    let first = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let rows = stdout.lines().filter(|l| l.starts_with("|")).count();
    assert!(
        stdout.contains("| id|") && rows == 6,
        "five rows and a header:\n{stdout}\n{stderr}"
    );
    let line = release.record.split_whitespace().next().expect("a line");
    assert!(
        stderr.contains(&format!("fetching the JVM plugin of Spark {line}")),
        "{stderr}"
    );
    for built in ["Compiling", "building the JVM plugin", "javac"] {
        assert!(!stderr.contains(built), "`{built}` in:\n{stderr}");
    }
    let sha256 = release.record.split_whitespace().last().expect("a hash");
    let cached = user
        .home
        .join(".cache/sparkds/plugin")
        .join(format!("{sha256}.jar"));
    assert_eq!(
        std::fs::read(&cached).unwrap_or_else(|e| panic!("{}: {e}", cached.display())),
        std::fs::read(release.artifact(".jar")).expect("the jar"),
        "the cache holds the released jar"
    );

    let library_dir = project.join("target/release");
    let bare = format!(
        r#"
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false")
         .config("spark.jars", "{jar}")
         .config("spark.driver.extraLibraryPath", "{dir}")
         .config("spark.sql.catalog.native", "dev.sparkds.spark.NativeCatalog").getOrCreate())
spark.sql("{statement}").show()
spark.stop()
"#,
        jar = cached.display(),
        dir = library_dir.display()
    );
    let started = Instant::now();
    steps.run(
        "Spark alone: a PySpark session, the same statement",
        user.command("python3", project).args(["-c", &bare]),
    );
    let alone = started.elapsed().as_secs_f64();
    println!(
        "the first cargo sparkds spark --sql cost {:.1} s beyond Spark's own start and the \
         statement ({first:.1} s against {alone:.1} s; the goal is at most 30 s)",
        first - alone
    );
}

/// `spark-submit --packages <coordinates> --repositories file://<mirror>` reads examples/c_range:
/// Ivy resolves the plugin from the mirror into the HOME's cache.
fn spark_submit_packages(user: &User, mirrors: &Mirrors, steps: &mut Steps) {
    let release = release();
    let work = user.home.join("submit");
    std::fs::create_dir_all(&work).expect("create a work directory");
    let app = work.join("read_c_range.py");
    std::fs::write(&app, READ_C_RANGE).expect("write the app");
    let library_path = release.c_range_dir.display().to_string();
    let output = steps.run(
        "spark-submit --packages --repositories file://",
        user.command(
            pyspark_home()
                .join("bin/spark-submit")
                .to_str()
                .expect("UTF-8"),
            &work,
        )
        .args(["--packages", &release.coordinates, "--repositories"])
        .arg(format!("file://{}", mirrors.maven.display()))
        .args(["--master", "local[2]", "--conf", "spark.ui.enabled=false"])
        .arg("--conf")
        .arg(format!("spark.driver.extraLibraryPath={library_path}"))
        .arg("--conf")
        .arg(format!("spark.executor.extraLibraryPath={library_path}"))
        .arg(&app)
        .env("PYSPARK_PYTHON", "python3"),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let printed = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        stdout.contains("RESULT 1000 499500"),
        "c_range's 1000 ids were not read:\n{printed}"
    );
    let (group, rest) = release.coordinates.split_once(':').expect("coordinates");
    let (artifact, version) = rest.split_once(':').expect("coordinates");
    assert!(
        printed.contains(&format!("found {group}#{artifact};{version}")),
        "Ivy did not resolve {}:\n{printed}",
        release.coordinates
    );
    // What Ivy fetched, into the HOME's cache, is the jar of the mirror.
    let fetched = files_under(&user.home)
        .into_iter()
        .find(|f| f.ends_with(format!("jars/{group}_{artifact}-{version}.jar")))
        .unwrap_or_else(|| panic!("Ivy put no jar of {} in the HOME", release.coordinates));
    assert_eq!(
        std::fs::read(&fetched).expect("the fetched jar"),
        std::fs::read(release.artifact(".jar")).expect("the jar")
    );
}

/// `pip install spark-native-bridge` from the wheel folder into a fresh environment (which
/// sees the machine's pyspark and pyarrow), and a read of c_range through it.
fn bridge_from_the_wheel(user: &User, mirrors: &Mirrors, steps: &mut Steps) {
    let release = release();
    let venv = user.home.join("venv");
    steps.run(
        "python3 -m venv",
        user.command("python3", &user.home)
            .args(["-m", "venv", "--system-site-packages", "--without-pip"])
            .arg(&venv),
    );
    let venv_python = venv.join("bin/python3");
    // The machine's pip installs into the environment (`--python`), which spares it one of its
    // own; --no-index: nothing but the wheel folder.
    steps.run(
        "pip install spark-native-bridge (the wheel folder)",
        user.command("python3", &user.home)
            .args(["-m", "pip", "--python"])
            .arg(&venv_python)
            .args(["install", "--quiet", "--no-index", "--find-links"])
            .arg(&mirrors.wheels)
            .arg(format!("spark-native-bridge=={VERSION}")),
    );
    let app = user.home.join("read_through_the_bridge.py");
    std::fs::write(&app, READ_THROUGH_THE_BRIDGE).expect("write the app");
    let c_range = std::fs::read_dir(&release.c_range_dir)
        .expect("lib/")
        .next()
        .expect("c_range's library")
        .expect("an entry")
        .path();
    // Spark's Python workers may miss their 10 s to connect back on a loaded machine: that
    // failure alone is run once more (tests/support/checked.rs).
    let started = Instant::now();
    let output = output_again_on_worker_timeout(
        user.command(venv_python.to_str().expect("UTF-8"), &user.home)
            .arg(&app)
            .arg(&c_range)
            .env("PYSPARK_PYTHON", &venv_python),
    );
    steps.record("a read through the installed bridge", started);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("RESULT 1000 499500 from {}", venv.display())),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every file under `dir`, not following links.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten().flatten() {
            let kind = entry.file_type().expect("a file type");
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    files
}

/// The bytes of the files under `dir`.
fn tree_size(dir: &Path) -> u64 {
    files_under(dir)
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum()
}
