//! `cargo suite`: the whole test suite, its groups run side by side.
//!
//! `cargo test --workspace` runs its test binaries one after another. Groups that wait (Spark's
//! JVMs starting, executors killed and replaced, streams polled) overlap with groups that build
//! and compute. This command builds every test binary once (`cargo test --no-run`), then runs
//! them as cargo would, each in its package's directory, `--jobs` at a time (2 by default), the
//! longest first by the last run's times (`times.rs`; `tests/suite/times.tsv` for a checkout
//! that has not run it). On two cores a whole run keeps the processors busy nearly all the time (the
//! table at the end says how busy): what shortens it is less work, not more groups at once.
//! Groups may share anything: cargo locks its target directories, the plugin's jar and the C
//! example are renamed into place, the generated projects are rebuilt only when they change (so
//! no library is replaced under a running session), and `cargo sparkds spark` builds again when
//! another build replaced its JNI library under it.
//!
//! The same compilation builds `cargo-sparkds` and every cdylib of the workspace (the JNI
//! library, the examples): the groups get copies of them (`groups::keep_apart`) instead of
//! building them again with `cargo build -p`, which resolves features apart and rebuilds arrow.
//!
//! The groups' JVMs start with options for short lives and a class archive of Spark (`jvm`).
//!
//! Every group generates its projects from one copy of the repository, made for the run
//! (`SPARKDS_SUITE_CHECKOUT`, tests/support/checkout.rs), so that the SDK's crates, which the
//! projects depend on by path, build once for all of them.
//!
//! Every group's temporary files go to a directory of the run (`TMPDIR`, and `java.io.tmpdir`
//! through `JAVA_TOOL_OPTIONS` when the suite sets it), removed when the run passes, else by
//! the next run: tests kill processes (Spark's JVMs, streaming queries) that cannot clean up
//! after themselves, and a machine that runs the suite again and again must not fill its disk.
//! The release rehearsal's builds, kept between runs on purpose, stay in the system's temporary
//! directory (`SPARKDS_SUITE_SYSTEM_TMPDIR`).
//!
//! Each group's output goes to `target/suite/<group>.log`, printed whole when the group fails.
//! The run ends with the time of each group and of the compilation, and how busy the processors
//! were meanwhile, and fails if a group failed.
//!
//! ```text
//! cargo suite                  every group
//! cargo suite jvm spark        these groups only
//! cargo suite --jobs 3         three groups at a time
//! cargo suite --jobs 1         one at a time, as cargo test runs them
//! cargo suite --list           the groups, in the order they start
//! ```

#[path = "../support/checkout.rs"]
mod checkout;
mod cpu;
mod groups;
mod jvm;
mod report;
mod run;
mod times;

use std::process::ExitCode;
use std::time::Instant;

use groups::Group;

/// What the command line asks.
struct Arguments {
    jobs: usize,
    list: bool,
    only: Vec<String>,
}

fn parse_arguments() -> Result<Arguments, String> {
    let mut arguments = Arguments {
        jobs: 2,
        list: false,
        only: Vec::new(),
    };
    let mut given = std::env::args().skip(1);
    while let Some(argument) = given.next() {
        match argument.as_str() {
            "--jobs" | "-j" => {
                let value = given.next().unwrap_or_default();
                arguments.jobs = match value.parse::<usize>() {
                    Ok(jobs) if jobs >= 1 => jobs,
                    _ => return Err(format!("--jobs takes a number of 1 or more, not `{value}`")),
                };
            }
            "--list" => arguments.list = true,
            "-h" | "--help" => {
                return Err("usage: cargo suite [--jobs N] [--list] [GROUP ...]".to_string())
            }
            flag if flag.starts_with('-') => {
                return Err(format!(
                    "unknown option `{flag}`; the options are --jobs N and --list"
                ))
            }
            group => arguments.only.push(group.to_string()),
        }
    }
    Ok(arguments)
}

fn main() -> ExitCode {
    let arguments = match parse_arguments() {
        Ok(arguments) => arguments,
        Err(message) => {
            eprintln!("cargo suite: {message}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let at_start = cpu::sample();
    // The JVMs' options, unless the caller chose some: Spark's class archive is made (the first
    // time) while the test binaries compile.
    let archive = (std::env::var_os("JAVA_TOOL_OPTIONS").is_none() && !arguments.list)
        .then(|| std::thread::spawn(|| jvm::spark_archive(&suite_directory().join("classes"))));
    let mut all = match groups::build_all() {
        Ok(all) => all,
        Err(message) => {
            eprintln!("cargo suite: {message}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(archive) = archive {
        let archive = match archive.join() {
            Ok(Ok(archive)) => Some(archive),
            Ok(Err(why)) => {
                eprintln!("suite: the JVMs start without a class archive of Spark: {why}");
                None
            }
            Err(_) => None,
        };
        let options = jvm::tool_options(archive.as_deref());
        for group in &mut all {
            group
                .env
                .push(("JAVA_TOOL_OPTIONS".to_string(), options.clone()));
        }
    }
    let compilation = started.elapsed();
    let compiled = cpu::sample();
    if arguments.list {
        for group in &all {
            println!("{}", group.name);
        }
        return ExitCode::SUCCESS;
    }
    if !arguments.only.is_empty() {
        if let Some(unknown) = arguments
            .only
            .iter()
            .find(|name| !all.iter().any(|g| &g.name == *name))
        {
            let names: Vec<&str> = all.iter().map(|g| g.name.as_str()).collect();
            eprintln!(
                "cargo suite: no group `{unknown}`; the groups are: {}",
                names.join(", ")
            );
            return ExitCode::from(2);
        }
        all.retain(|g| arguments.only.contains(&g.name));
    }
    let shared = match SharedCheckout::make() {
        Ok(shared) => shared,
        Err(message) => {
            eprintln!("cargo suite: {message}");
            return ExitCode::FAILURE;
        }
    };
    let system_tmpdir = std::env::temp_dir().display().to_string();
    for group in &mut all {
        group.env.push((
            checkout::VARIABLE.to_string(),
            shared.path.display().to_string(),
        ));
        group
            .env
            .push(("TMPDIR".to_string(), shared.tmp.display().to_string()));
        group.env.push((
            "SPARKDS_SUITE_SYSTEM_TMPDIR".to_string(),
            system_tmpdir.clone(),
        ));
        jvm::add_tmpdir(&mut group.env, &shared.tmp);
    }
    let outcomes = run::run_all(all, arguments.jobs);
    if outcomes.iter().any(|o| !o.passed) {
        println!(
            "suite: the groups' temporary files are kept for a look in {} (the next run removes \
             them)",
            shared.tmp.display()
        );
        shared.keep_tmp();
    } else {
        drop(shared);
    }
    let busy = report::Busy {
        compilation: cpu::busy_percent(at_start, compiled),
        groups: cpu::busy_percent(compiled, cpu::sample()),
    };
    report::print_table(&outcomes, compilation, started.elapsed(), busy);
    times::record(&outcomes);
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.passed)
        .map(|o| o.name.as_str())
        .collect();
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("cargo suite: failed: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}

/// `target/suite`, beside the runner's own binary (`target/debug/suite`): the groups' logs, and
/// the files that the compilation built for them (`built/`).
fn suite_directory() -> std::path::PathBuf {
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| std::path::PathBuf::from("target"));
    let directory = target.join("suite");
    std::fs::create_dir_all(&directory).expect("create target/suite");
    directory
}

/// The run's copy of the repository, `<temporary>/sparkds-suite-<hash of the repository's
/// path>/spark-datasource-template` (named as a clone is, since the tutorial generates from
/// there), removed when the run ends.
/// Its `target` is a link to the repository's, as the tutorial's copy has.
struct SharedCheckout {
    path: std::path::PathBuf,
    /// The groups' temporary directory, `<temporary>/sparkds-suite-<hash>-tmp`.
    tmp: std::path::PathBuf,
    /// `<temporary>/sparkds-suite-<hash>.lock`, locked for the run.
    _lock: std::fs::File,
}

impl SharedCheckout {
    fn make() -> Result<Self, String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("tests/ is inside the repository");
        // Named after the repository's path, not the run: cargo tells the SDK's crates by their
        // path, so that the next run's projects reuse this run's builds of them.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(root, &mut hasher);
        let parent = std::env::temp_dir().join(format!(
            "sparkds-suite-{:016x}",
            std::hash::Hasher::finish(&hasher)
        ));
        // One run a checkout: a second one would remove the first's copy under its groups.
        let lock_path = parent.with_extension("lock");
        let lock = std::fs::File::create(&lock_path)
            .map_err(|e| format!("cannot open {} ({e})", lock_path.display()))?;
        lock.try_lock().map_err(|_| {
            format!(
                "another run of the suite uses this checkout (it holds {}): wait for it to end",
                lock_path.display()
            )
        })?;
        let _ = std::fs::remove_dir_all(&parent);
        // The projects of every group build and run what is in it: made here, owner-only, and
        // refused when it exists (someone else's, or another run's), so that nobody else can
        // put or replace a file in it.
        let mut folder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
        folder.create(&parent).map_err(|e| {
            format!(
                "cannot make {} for the run's copy of the repository ({e}): remove it, or wait \
                 for the other run of the suite to end",
                parent.display()
            )
        })?;
        let path = parent.join(checkout::NAME);
        checkout::copy(root, &path)?;
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("target"), path.join("target"))
            .map_err(|e| format!("cannot link {}/target: {e}", path.display()))?;
        // Beside the copy, not in its owner-only folder: the groups' other users (the
        // PostgreSQL server's) reach their files in it, as in the system's temporary directory,
        // whose modes it has (anyone writes, only the owner of a file removes it).
        let tmp = parent.with_file_name(format!(
            "{}-tmp",
            parent.file_name().expect("a name").to_string_lossy()
        ));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir(&tmp).map_err(|e| format!("cannot make {} ({e})", tmp.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o1777))
                .map_err(|e| format!("cannot chmod {} ({e})", tmp.display()))?;
        }
        Ok(SharedCheckout {
            path,
            tmp,
            _lock: lock,
        })
    }

    /// Leaves the groups' temporary files when the run ends (the copy goes all the same).
    fn keep_tmp(mut self) {
        self.tmp = std::path::PathBuf::new();
    }
}

impl Drop for SharedCheckout {
    fn drop(&mut self) {
        if let Some(parent) = self.path.parent() {
            let _ = std::fs::remove_dir_all(parent);
        }
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

/// How one group ended.
pub struct Outcome {
    pub name: String,
    pub passed: bool,
    pub seconds: f64,
}

impl Group {
    fn outcome(&self, passed: bool, seconds: f64) -> Outcome {
        Outcome {
            name: self.name.clone(),
            passed,
            seconds,
        }
    }
}
