//! The crates are ready for crates.io: `cargo package` takes each with its README, its
//! metadata, and (for the SDK) the header, which `spark_datasource::HEADER` includes.

use std::process::Command;

use crate::helpers::repo_root;

/// The files that `cargo package --list` would publish for `package`, and what it warned.
fn package_list(package: &str) -> (Vec<String>, String) {
    let output = Command::new(env!("CARGO"))
        .args(["package", "--list", "--allow-dirty", "-p", package])
        .current_dir(repo_root())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo package --list -p {package} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let files = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    (files, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn the_sdk_crate_packages_with_its_header_and_readme_without_a_warning() {
    let (files, warnings) = package_list("spark-datasource");
    for file in [
        "spark_datasource.h",
        "README.md",
        "src/lib.rs",
        "src/macros.rs",
    ] {
        assert!(
            files.iter().any(|f| f == file),
            "{file} is not packaged: {files:?}"
        );
    }
    assert!(!warnings.contains("warning"), "{warnings}");
}

#[test]
fn the_sparkds_crate_packages_with_its_readme_without_a_warning() {
    let (files, warnings) = package_list("sparkds");
    for file in ["README.md", "src/lib.rs", "src/main.rs"] {
        assert!(
            files.iter().any(|f| f == file),
            "{file} is not packaged: {files:?}"
        );
    }
    assert!(!warnings.contains("warning"), "{warnings}");
}
