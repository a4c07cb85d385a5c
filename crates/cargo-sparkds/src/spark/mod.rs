//! `cargo sparkds spark`: builds the library of the current project and opens a local Spark 4
//! session in which its data source is ready, through the JVM plugin (by default) or the Python
//! bridge: an interactive PySpark shell, one SQL statement (`--sql`), a script (`--python`), or
//! a Spark Connect server (`--connect`). Spark comes from SPARK_HOME, else python3's pyspark,
//! else a pinned pyspark that the command installs in its cache. The plugin's jar of a released
//! command is the released one of the Spark's line, fetched once from Maven and checked against
//! the SHA-256 the command records; a command built from a checkout builds it in its cache from
//! the sources it embeds (`plugin.rs`).

mod cache;
mod connect;
mod listener;
mod network;
mod plugin;
mod signals;
mod tools;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use sparkds::{Error, Result};

use cache::Cache;
use tools::Spark;

/// Arguments of `sparkds spark`.
#[derive(Debug, Clone, clap::Args)]
pub struct SparkArgs {
    /// Build and load the library of this cargo profile (by default `release`, the build that
    /// is installed on Spark).
    #[arg(long, value_name = "NAME", default_value = "release")]
    pub profile: String,
    /// Build and load the `dev` profile, for quick edits: a build of seconds where `release`
    /// takes a minute or more (`--profile dev`).
    #[arg(long, conflicts_with = "profile")]
    pub dev: bool,
    /// Run one SQL statement and print its result as `show()` does, then stop.
    #[arg(long, value_name = "STATEMENT", conflicts_with_all = ["python", "connect"])]
    pub sql: Option<String>,
    /// Run this Python script in the session (`spark` is defined), then stop; the arguments
    /// after `--` are its `sys.argv[1:]`.
    #[arg(long, value_name = "FILE", conflicts_with = "connect")]
    pub python: Option<PathBuf>,
    /// Start a Spark Connect server with the data source on 127.0.0.1:PORT (15002 by default)
    /// and print its URL once it listens; it runs until Ctrl-C. The server takes only clients
    /// that give the token made for this run, which the URL holds: keep it to yourself. The
    /// command holds PORT of ::1, IPv6's loopback, while it runs, where a client of the URL's
    /// `localhost` may go first, and stops when another process has it.
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "15002")]
    pub connect: Option<u16>,
    /// Run on a local cluster of N executor processes (`local-cluster[N,1,1024]`) rather than
    /// in local mode. Like every session of the command, its Master, Workers and executors
    /// listen on 127.0.0.1 only and take only processes that have the run's secret.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub cluster: Option<u16>,
    /// Load the library through the Python bridge (spark-native-bridge, the Python Data Source
    /// API) rather than the JVM plugin.
    #[arg(long, conflicts_with = "connect")]
    pub bridge: bool,
    /// The data source's options, for every read of the session (`end=20`): the plugin's
    /// catalog options, or the bridge's view options. They override those of --options-file.
    #[arg(value_name = "KEY=VALUE", value_parser = crate::options::OptionParser)]
    pub options: Vec<(String, String)>,
    /// Read options from this file, one KEY=VALUE a line (blank lines and lines that start with
    /// `#` are skipped; the value is the rest of the line, as written): for a password, which
    /// on the command line any user of the machine sees (`ps`) for as long as Spark runs.
    #[arg(long, value_name = "FILE")]
    pub options_file: Option<PathBuf>,
    /// The arguments of the `--python` script.
    #[arg(last = true, value_name = "ARGS")]
    pub script_args: Vec<String>,
}

/// How the session's data source is loaded.
enum Loader {
    /// The JVM plugin's jar.
    Plugin(PathBuf),
    /// The directory that holds the `spark_native_bridge` package.
    Bridge(PathBuf),
}

/// Runs `cargo sparkds spark`: what is missing is said before anything builds.
///
/// # Errors
///
/// When Java, Python or Spark is missing or unusable, the build fails, or Spark cannot start.
pub fn run(args: &SparkArgs) -> Result<ExitCode> {
    if !args.script_args.is_empty() && args.python.is_none() {
        return Err(Error::usage(
            "arguments after `--` go to a script: add --python FILE, or remove them",
        ));
    }
    let options = options(args)?;
    // What Spark writes for the session (a local cluster's executor logs in $SPARK_HOME/work,
    // which may be a shared pyspark's folder, the tables of the warehouse, its temporary files)
    // is this user's alone: Spark creates them with the umask it inherits.
    #[cfg(unix)]
    // SAFETY: umask only sets this process's file mode creation mask, which the children inherit.
    unsafe {
        libc::umask(0o077);
    }
    tools::check_java()?;
    let python = tools::python()?;
    let cache = Cache::open()?;
    let spark = locate_spark(&cache, &python)?;
    if args.bridge && !tools::imports(&spark, "pyarrow")? {
        return Err(Error::usage(format!(
            "the bridge needs pyarrow, which {} does not import: `{} -m pip install pyarrow`",
            spark.python.display(),
            spark.python.display()
        )));
    }
    let dir =
        std::env::current_dir().map_err(|e| Error::io("cannot read the current directory", e))?;
    let profile = if args.dev {
        "dev"
    } else {
        args.profile.as_str()
    };
    let library = sparkds::build_current_cdylib(&dir, profile)?;
    let name = data_source_name(&library)?;
    let loader = if args.bridge {
        Loader::Bridge(cache.sources()?.join("python"))
    } else {
        Loader::Plugin(plugin::jar(&cache, &spark, &dir)?)
    };
    eprintln!(
        "sparkds: Spark {} from {}; {} loads {} (built with the `{}` profile)",
        spark.version,
        spark.origin,
        match loader {
            Loader::Plugin(_) => "the JVM plugin",
            Loader::Bridge(_) => "the Python bridge",
        },
        library.display(),
        profile
    );
    let master = match args.cluster {
        Some(n) => format!("local-cluster[{n},1,1024]"),
        None => "local[*]".to_string(),
    };
    let session = Session {
        spark: &spark,
        library: &library,
        name: &name,
        loader: &loader,
        master: &master,
    };
    match (args.connect, &loader) {
        (Some(port), Loader::Plugin(jar)) => connect::serve(&session, jar, port, &options),
        _ => session.run_python(args, &options, &cache.sources()?.join("session.py"), &dir),
    }
}

/// The options of the session: those of `--options-file`, then those of the command line (a
/// key given twice keeps its last value, as `.option` does).
fn options(args: &SparkArgs) -> Result<Vec<(String, String)>> {
    let mut options = match &args.options_file {
        Some(path) => crate::options::from_file(path)?,
        None => Vec::new(),
    };
    options.extend(args.options.iter().cloned());
    Ok(options)
}

/// Spark from SPARK_HOME, else from python3's pyspark, else the cache's pinned pyspark.
fn locate_spark(cache: &Cache, python: &Path) -> Result<Spark> {
    let spark = match tools::spark_from_home(python)? {
        Some(spark) => spark,
        None => match tools::spark_from_python(python, "python3's pyspark")? {
            Some(spark) => spark,
            None => {
                let venv = cache.pyspark_venv(python)?;
                tools::spark_from_python(&venv, "the pyspark that cargo sparkds installed")?
                    .ok_or_else(|| {
                        Error::usage(format!(
                            "{} does not import pyspark: remove its venv to install it again",
                            venv.display()
                        ))
                    })?
            }
        },
    };
    tools::check_spark(&spark)?;
    Ok(spark)
}

/// The data source of `libspark_datasource_<name>.so`: the name Spark finds it by.
fn data_source_name(library: &Path) -> Result<String> {
    let file = library
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    spark_datasource_core::library_file::data_source_name(&file).ok_or_else(|| {
        Error::usage(format!(
            "{} is not named spark_datasource_<name>, so Spark cannot find it by a data \
                 source name: set `name = \"spark_datasource_<name>\"` in the [lib] of Cargo.toml",
            library.display()
        ))
    })
}

/// The session that the Python side opens.
struct Session<'a> {
    spark: &'a Spark,
    library: &'a Path,
    name: &'a str,
    loader: &'a Loader,
    master: &'a str,
}

impl Session<'_> {
    /// Runs `session.py`: the shell (`python3 -i`), `--sql` or `--python`, in `dir`.
    fn run_python(
        &self,
        args: &SparkArgs,
        options: &[(String, String)],
        script: &Path,
        dir: &Path,
    ) -> Result<ExitCode> {
        let (mode, interactive) = match (&args.sql, &args.python) {
            (Some(_), _) => ("sql", false),
            (_, Some(_)) => ("python", false),
            _ => ("shell", true),
        };
        let script_path = match &args.python {
            Some(file) if !file.is_file() => {
                return Err(Error::usage(format!(
                    "--python {}: no such file",
                    file.display()
                )))
            }
            Some(file) => dir.join(file).display().to_string(),
            None => String::new(),
        };
        let (jar, bridge) = match self.loader {
            Loader::Plugin(jar) => (Some(jar.display().to_string()), None),
            Loader::Bridge(dir) => (None, Some(dir.clone())),
        };
        // The session's secret (spark.authenticate) goes in a properties file that Spark reads
        // as it starts, which session.py removes once it has.
        let secret = network::random_secret("the session's authentication secret")?;
        let conf: std::collections::BTreeMap<_, _> = network::configuration().into();
        let signals = signals::Guard::install(false)?;
        let properties = private_file(
            &signals,
            ".properties",
            &connect::properties_text(&[network::secret_configuration(&secret)]),
        )?;
        let settings = serde_json::json!({
            "mode": mode,
            "sql": args.sql,
            "script": script_path,
            "args": args.script_args,
            "master": self.master,
            "library": self.library.display().to_string(),
            "name": self.name,
            "jar": jar,
            "bridge": bridge.as_ref().map(|b| b.display().to_string()),
            "options": options.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "warehouse": self.scratch()?.join("warehouse").display().to_string(),
            "redaction_regex": connect::REDACTION_REGEX,
            "conf": conf,
            "properties": properties.display().to_string(),
        });
        // The settings hold the options: in a file only this user reads, which session.py
        // removes once read, not in an environment variable that every process Spark starts
        // would inherit. Ctrl-C is the shell's (a cancel): only SIGTERM is passed on.
        let settings_file = private_file(&signals, ".json", &settings.to_string())?;
        let mut command = Command::new(&self.spark.python);
        if interactive {
            command.arg("-i");
        }
        let extra: Vec<PathBuf> = bridge.into_iter().collect();
        let mut child = command
            .arg(script)
            .current_dir(dir)
            .env("SPARKDS_SPARK_SESSION_FILE", &settings_file)
            .env("PYTHONPATH", self.spark.python_path_with(&extra)?)
            .envs(self.spark_env()?)
            .spawn()
            .map_err(|e| {
                Error::usage(format!("cannot run {}: {e}", self.spark.python.display()))
            })?;
        signals.child(child.id());
        let status = child.wait();
        signals.child(0);
        let status = status.map_err(|e| {
            Error::usage(format!(
                "cannot wait for {}: {e}",
                self.spark.python.display()
            ))
        })?;
        Ok(ExitCode::from(
            u8::try_from(status.code().unwrap_or(1)).unwrap_or(1),
        ))
    }

    /// What Spark's launcher needs: its home, the Python of its workers, Java on PATH, and the
    /// loopback address to bind to ([`network::environment`]).
    fn spark_env(&self) -> Result<Vec<(&'static str, std::ffi::OsString)>> {
        let mut env = vec![
            ("SPARK_HOME", self.spark.home.clone().into_os_string()),
            ("PYSPARK_PYTHON", self.spark.python.clone().into_os_string()),
            (
                "PYSPARK_DRIVER_PYTHON",
                self.spark.python.clone().into_os_string(),
            ),
            ("PATH", cache::path_with_java()?),
        ];
        env.extend(
            network::environment()
                .into_iter()
                .map(|(key, value)| (key, value.into())),
        );
        Ok(env)
    }

    /// A directory of the session's files (the warehouse of its tables) in the project's
    /// target directory, beside the library's profile directory.
    fn scratch(&self) -> Result<PathBuf> {
        let target = self
            .library
            .parent()
            .and_then(Path::parent)
            .unwrap_or(Path::new("."));
        let dir = target.join("sparkds-spark");
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        Ok(dir)
    }
}

/// A new file in the temporary directory that only this user reads (`tempfile` makes it with
/// mode 0600, under a name no one can guess), holding `text`: removed when the returned path is
/// dropped, and on Ctrl-C or SIGTERM by `signals`.
fn private_file(signals: &signals::Guard, suffix: &str, text: &str) -> Result<tempfile::TempPath> {
    let path = tempfile::Builder::new()
        .prefix("sparkds-spark-session-")
        .suffix(suffix)
        .tempfile()
        .map_err(|e| Error::io("cannot create a file for the session's settings", e))?
        .into_temp_path();
    signals.remove_on_signal(&path);
    std::fs::write(&path, text)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_source_is_named_by_the_library_file() {
        let file = format!(
            "{}spark_datasource_my_source.{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_EXTENSION
        );
        assert_eq!(
            data_source_name(Path::new(&file)).ok().as_deref(),
            Some("my_source")
        );
        let error = data_source_name(Path::new("libother.so"))
            .err()
            .map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("spark_datasource_<name>")));
    }
}
