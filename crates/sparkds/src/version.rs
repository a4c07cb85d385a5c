//! Whether the installed command matches the SDK that a project builds with: both are released
//! together with the same version, and a host of another version may check rules that the
//! project's SDK does not follow yet (or no longer).

use std::path::Path;

/// The version of sparkds, which is that of the `spark-datasource` crate released with it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The versions of `spark-datasource` that `Cargo.lock` (its text) locks, usually one.
pub fn locked_sdk_versions(lock: &str) -> Vec<String> {
    let mut versions = Vec::new();
    let mut in_sdk = false;
    for line in lock.lines().map(str::trim) {
        if line == "[[package]]" {
            in_sdk = false;
        } else if line == "name = \"spark-datasource\"" {
            in_sdk = true;
        } else if let Some(version) = line.strip_prefix("version = \"") {
            if in_sdk {
                versions.push(version.trim_end_matches('"').to_string());
            }
        }
    }
    versions
}

/// A warning when the `Cargo.lock` in `dir` or one of its parents (the project's workspace)
/// locks a `spark-datasource` of another version than this sparkds.
pub fn mismatch(dir: &Path) -> Option<String> {
    let lock = dir
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file())?;
    let text = std::fs::read_to_string(&lock).ok()?;
    let other: Vec<String> = locked_sdk_versions(&text)
        .into_iter()
        .filter(|v| v != VERSION)
        .collect();
    (!other.is_empty()).then(|| {
        format!(
            "cargo sparkds is version {VERSION}, but {} locks spark-datasource {}: install the \
             same version (`cargo install --locked cargo-sparkds@{}`, or from the same \
             checkout or tag), or upgrade the project's spark-datasource to {VERSION}",
            lock.display(),
            other.join(", "),
            other[0],
        )
    })
}

/// [`mismatch`] for the current directory.
pub fn mismatch_in_current_project() -> Option<String> {
    mismatch(&std::env::current_dir().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
[[package]]
name = "serde"
version = "1.0.0"

[[package]]
name = "spark-datasource"
version = "0.0.9"
dependencies = [
 "arrow-array",
]
"#;

    #[test]
    fn reads_the_locked_sdk_version() {
        assert_eq!(locked_sdk_versions(LOCK), vec!["0.0.9"]);
        assert!(locked_sdk_versions("[[package]]\nname = \"serde\"\nversion = \"1\"").is_empty());
    }

    #[test]
    fn another_locked_version_is_reported_with_the_fix() {
        let dir = tempfile_dir();
        std::fs::write(dir.join("Cargo.lock"), LOCK).expect("write Cargo.lock");
        let warning = mismatch(&dir).expect("a warning");
        assert!(
            warning.contains(&format!("cargo sparkds is version {VERSION}, but ")),
            "{warning}"
        );
        assert!(
            warning.contains("locks spark-datasource 0.0.9"),
            "{warning}"
        );
        std::fs::write(dir.join("Cargo.lock"), LOCK.replace("0.0.9", VERSION))
            .expect("write Cargo.lock");
        assert_eq!(mismatch(&dir), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("sparkds-version-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    }
}
