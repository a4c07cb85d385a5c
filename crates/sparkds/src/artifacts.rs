//! Finding libraries and binaries that cargo built: the cdylib of the package under test, the
//! `cargo-sparkds` binary, and the cdylib of the current package (built on demand).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// The file name of a library named `name` on this platform: `lib{name}.so`,
/// `lib{name}.dylib` or `{name}.dll`.
pub fn library_file_name(name: &str) -> String {
    spark_datasource_core::library_file::Os::current().file_of_library(name)
}

/// The directory of the build profile that built the running binary: the parent of `deps/` for
/// a test binary (`<target>/<profile>/deps/<test>`), else the binary's own directory. It follows
/// the binary, so it is right whatever CARGO_TARGET_DIR is, even shared between projects.
pub fn profile_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::io("cannot find the path of the running binary", e))?;
    let dir = exe
        .parent()
        .ok_or_else(|| Error::usage("the running binary has no directory"))?;
    Ok(if dir.file_name().is_some_and(|n| n == "deps") {
        dir.parent().unwrap_or(dir).to_path_buf()
    } else {
        dir.to_path_buf()
    })
}

/// The cdylib named `name` (the `[lib] name` of Cargo.toml, such as
/// `spark_datasource_my_source`) that `cargo test` built for the calling package: call it from
/// an integration test.
///
/// `cargo test` leaves it in `deps/`, and `cargo build` copies it to `<target>/<profile>/`:
/// the newer of the two is the one built from the current sources.
///
/// # Errors
///
/// When the file is in neither `<target>/<profile>/` nor its `deps/`.
pub fn cdylib(name: &str) -> Result<PathBuf> {
    let file = library_file_name(name);
    let profile = profile_dir()?;
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    [profile.join("deps").join(&file), profile.join(&file)]
        .into_iter()
        .filter(|p| p.is_file())
        .max_by_key(modified)
        .ok_or_else(|| {
            Error::usage(format!(
                "cannot find `{file}` in `{}`; check the `[lib] name` in Cargo.toml and that its crate-type includes \"cdylib\" (cargo test builds it)",
                profile.display()
            ))
        })
}

/// The cdylib of workspace package `package` that the build running the tests names in
/// `CARGO_CDYLIB_FILE_<PACKAGE>` (upper case, `-` as `_`: the name cargo gives an artifact
/// dependency's library, and the one the test runner of sparkds's repository gives the libraries
/// of its compilation), when that file exists. `None` otherwise: the caller builds it.
pub fn given_cdylib(package: &str) -> Option<PathBuf> {
    let variable = format!(
        "CARGO_CDYLIB_FILE_{}",
        package.to_ascii_uppercase().replace('-', "_")
    );
    let given = PathBuf::from(std::env::var_os(variable)?);
    given.is_file().then_some(given)
}

/// The name of the command's binary: cargo runs `cargo sparkds` as `cargo-sparkds sparkds`.
pub const BINARY: &str = "cargo-sparkds";

/// The `cargo-sparkds` binary, for checks that run in a child process: the file that
/// `CARGO_BIN_EXE_cargo-sparkds` names (cargo sets it for the package's own tests, and the test
/// runner of sparkds's repository for all of its tests, so that they share one build), else the
/// one this workspace builds when sparkds is one of its members (as in the repository of
/// sparkds), else the one next to the running binary, else the installed one on `PATH`.
///
/// # Errors
///
/// When there is none: the message says how to install it.
pub fn sparkds_binary() -> Result<PathBuf> {
    if let Some(built) = std::env::var_os("CARGO_BIN_EXE_cargo-sparkds") {
        let built = PathBuf::from(built);
        if built.is_file() {
            return Ok(built);
        }
    }
    let file = format!("{BINARY}{}", std::env::consts::EXE_SUFFIX);
    let profile = profile_dir()?;
    // Build even when it exists: cargo makes it fresh if the sources changed, and is quick
    // otherwise. Outside sparkds's own workspace this fails quietly, and the others are tried.
    let built = cargo_build(
        Path::new("."),
        &["-p", "cargo-sparkds", "--bin", BINARY],
        |kinds, _| kinds.iter().any(|k| k == "bin"),
        profile.parent(),
        std::process::Stdio::null(),
    );
    if let Ok(mut paths) = built {
        if !paths.is_empty() {
            return Ok(paths.remove(0));
        }
    }
    let beside = profile.join(&file);
    if beside.is_file() {
        return Ok(beside);
    }
    // Only absolute entries: an empty or relative one would run whatever the current
    // directory holds under that name.
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(&file))
        .find(|path| path.is_file())
        .ok_or_else(|| {
            Error::usage(format!(
                "cannot find `{BINARY}`; install the command once with `cargo install --locked \
                 --path crates/cargo-sparkds` from a checkout of spark-datasource-template"
            ))
        })
}

/// The arguments of `cargo build` for the cargo profile `profile`: none for `dev` (cargo's
/// default), `--release` for `release`, else `--profile NAME`.
pub fn profile_args(profile: &str) -> Vec<String> {
    match profile {
        "dev" => Vec::new(),
        "release" => vec!["--release".to_string()],
        name => vec!["--profile".to_string(), name.to_string()],
    }
}

/// Builds the cargo package in `dir` with the cargo profile `profile` (`dev`, `release`, or a
/// profile of its Cargo.toml) and returns its cdylib.
///
/// # Errors
///
/// When cargo fails, or the package has no cdylib, or several.
pub fn build_current_cdylib(dir: &Path, profile: &str) -> Result<PathBuf> {
    let args = profile_args(profile);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut built = cargo_build(
        dir,
        &args,
        |kinds, _| kinds.iter().any(|k| k == "cdylib"),
        None,
        std::process::Stdio::inherit(),
    )?;
    built.retain(|p| {
        p.extension()
            .is_some_and(|e| e == std::env::consts::DLL_EXTENSION)
    });
    match built.len() {
        1 => Ok(built.remove(0)),
        0 => Err(Error::usage(format!(
            "the cargo package in `{}` builds no cdylib; add `crate-type = [\"cdylib\"]` to its [lib], or pass --lib PATH",
            dir.display()
        ))),
        _ => Err(Error::usage(format!(
            "the cargo package in `{}` builds several cdylibs ({}); pass the one to load with --lib PATH",
            dir.display(),
            built.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ))),
    }
}

fn cargo_build(
    dir: &Path,
    args: &[&str],
    wanted: impl Fn(&[String], &str) -> bool,
    target_dir: Option<&Path>,
    stderr: std::process::Stdio,
) -> Result<Vec<PathBuf>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command
        .current_dir(dir)
        .args(["build", "--message-format=json-render-diagnostics"])
        .args(args)
        .stderr(stderr);
    if let Some(target) = target_dir {
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            command.env("CARGO_TARGET_DIR", target);
        }
    }
    let output = command.output().map_err(|e| {
        Error::io(
            format!(
                "cannot run `{} build`; install cargo or set $CARGO",
                cargo.to_string_lossy()
            ),
            e,
        )
    })?;
    if !output.status.success() {
        return Err(Error::usage(format!(
            "`{}` failed in `{}` (its errors are above); fix them, or pass --lib PATH",
            ["cargo", "build"]
                .iter()
                .chain(args)
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
            dir.display()
        )));
    }
    let mut found = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let kinds: Vec<String> = message["target"]["kind"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let name = message["target"]["name"].as_str().unwrap_or_default();
        if !wanted(&kinds, name) {
            continue;
        }
        if let Some(exe) = message["executable"].as_str() {
            found.push(PathBuf::from(exe));
        } else if let Some(files) = message["filenames"].as_array() {
            found.extend(files.iter().filter_map(|f| f.as_str()).map(PathBuf::from));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_file_names_follow_the_platform() {
        let name = library_file_name("spark_datasource_x");
        if cfg!(target_os = "linux") {
            assert_eq!(name, "libspark_datasource_x.so");
        } else if cfg!(target_os = "macos") {
            assert_eq!(name, "libspark_datasource_x.dylib");
        } else if cfg!(windows) {
            assert_eq!(name, "spark_datasource_x.dll");
        }
    }

    #[test]
    fn each_profile_builds_with_its_cargo_arguments() {
        assert!(profile_args("dev").is_empty());
        assert_eq!(profile_args("release"), ["--release"]);
        assert_eq!(profile_args("bench"), ["--profile", "bench"]);
    }

    /// A cdylib crate without dependencies, which builds in a moment, in a fresh directory.
    fn tiny_cdylib() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sparkds-tiny-cdylib-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).expect("mkdir src");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [lib]\ncrate-type = [\"cdylib\"]\n\n[workspace]\n\n\
             [profile.fast]\ninherits = \"release\"\nopt-level = 1\n",
        )
        .expect("write Cargo.toml");
        std::fs::write(
            dir.join("src/lib.rs"),
            "#[no_mangle]\npub extern \"C\" fn tiny() {}\n",
        )
        .expect("write src/lib.rs");
        dir
    }

    #[test]
    fn the_current_cdylib_is_built_with_the_profile_asked_for() {
        let dir = tiny_cdylib();
        // Cargo names a profile's folder after it, except `dev`'s, which is `debug`.
        for (profile, folder) in [("dev", "debug"), ("release", "release"), ("fast", "fast")] {
            let path =
                build_current_cdylib(&dir, profile).unwrap_or_else(|e| panic!("{profile}: {e}"));
            assert_eq!(
                path.file_name().and_then(|n| n.to_str()),
                Some(library_file_name("tiny").as_str())
            );
            assert_eq!(
                path.parent()
                    .and_then(Path::file_name)
                    .and_then(|n| n.to_str()),
                Some(folder),
                "{}",
                path.display()
            );
        }
        let error = build_current_cdylib(&dir, "nope")
            .err()
            .map(|e| e.to_string());
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            error
                .as_deref()
                .is_some_and(|m| m.starts_with("`cargo build --profile nope` failed in")),
            "{error:?}"
        );
    }

    #[test]
    fn a_missing_cdylib_names_the_file_and_the_fix() {
        let message = cdylib("spark_datasource_does_not_exist")
            .err()
            .map(|e| e.to_string());
        assert!(message.is_some_and(|m| m.contains("check the `[lib] name` in Cargo.toml")));
    }
}
