//! `sparkds verify` rejects each broken rule with its own message naming the file and the rule,
//! reports every problem rather than the first, and exits with 1.

use std::fs;
use std::path::Path;
use std::process::Output;

use tempfile::TempDir;

use crate::helpers::{
    host_library_name, host_platform, host_settings, macho_x86_64_blob, patched_to_aarch64, report,
    sbom, sparkds, CLibrary, CraftedPackage,
};

const MANIFEST: &str = "spark-native-datasource.json";

fn verify(dir: &Path, args: &[&str]) -> Output {
    sparkds()
        .current_dir(dir)
        .arg("verify")
        .arg("demo.sparkpkg")
        .args(args)
        .output()
        .expect("sparkds runs")
}

/// Asserts that verify failed with exit code 1 and snapshots its report.
fn assert_rejected(name: &str, output: &Output) {
    assert_eq!(output.status.code(), Some(1), "{}", report(output));
    host_settings().bind(|| {
        insta::assert_snapshot!(name, report(output));
    });
}

/// A package of one host library, `entry` inside the archive.
fn host_package(library: &[u8]) -> CraftedPackage {
    let entry = format!("{}/{}", host_platform(), host_library_name("demo"));
    CraftedPackage::new()
        .manifest(&["demo"], &[(host_platform(), &entry)])
        .file(&entry, library)
}

fn demo_library(dir: &Path) -> Vec<u8> {
    fs::read(CLibrary::new("demo").build(dir)).expect("read the library")
}

#[test]
fn a_library_of_the_wrong_architecture_is_rejected() {
    if !cfg!(target_os = "linux") {
        return; // The crafted aarch64 library is an ELF file.
    }
    let dir = TempDir::new().expect("temp dir");
    let library = patched_to_aarch64(&demo_library(dir.path()));
    CraftedPackage::new()
        .manifest(
            &["demo"],
            &[("linux-x86_64", "linux-x86_64/libspark_datasource_demo.so")],
        )
        .file("linux-x86_64/libspark_datasource_demo.so", &library)
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected(
        "wrong_architecture",
        &verify(dir.path(), &["--name", "demo"]),
    );
}

#[test]
fn a_mach_o_blob_listed_for_linux_and_for_apple_silicon_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let blob = macho_x86_64_blob();
    CraftedPackage::new()
        .manifest(
            &["demo"],
            &[
                ("linux-x86_64", "linux-x86_64/libspark_datasource_demo.so"),
                ("osx-aarch64", "osx-aarch64/libspark_datasource_demo.dylib"),
            ],
        )
        .file("linux-x86_64/libspark_datasource_demo.so", &blob)
        .file("osx-aarch64/libspark_datasource_demo.dylib", &blob)
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("mach_o_blob", &verify(dir.path(), &[]));
}

#[test]
fn a_missing_file_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    let entry = format!("{}/{}", host_platform(), host_library_name("demo"));
    CraftedPackage::new()
        .manifest(
            &["demo"],
            &[
                (host_platform(), &entry),
                ("windows-x86_64", "windows-x86_64/spark_datasource_demo.dll"),
            ],
        )
        .file(&entry, &library)
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("missing_file", &verify(dir.path(), &[]));
}

#[test]
fn an_extra_file_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    host_package(&library)
        .file("README.txt", b"not listed")
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("extra_file", &verify(dir.path(), &[]));
}

#[test]
fn directory_entries_of_listed_libraries_are_accepted() {
    // `zip -r`, as the specification's example packs a package, writes directory entries.
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    host_package(&library)
        .directory(&format!("{}/", host_platform()))
        .write(&dir.path().join("demo.sparkpkg"));
    let output = verify(dir.path(), &[]);
    assert!(output.status.success(), "{}", report(&output));
}

#[test]
fn a_directory_entry_of_nothing_listed_is_an_extra_file() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    host_package(&library)
        .directory("linux/")
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("extra_directory", &verify(dir.path(), &[]));
}

#[test]
fn a_traversal_path_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    host_package(&library)
        .file("../libspark_datasource_demo.so", &library)
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("traversal_path", &verify(dir.path(), &[]));
}

#[test]
fn an_absolute_path_and_a_link_are_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    host_package(&library)
        .file("/etc/libspark_datasource_demo.so", &library)
        .symlink(
            "linux-aarch64/libspark_datasource_demo.so",
            "/usr/lib/libc.so.6",
        )
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("absolute_path_and_link", &verify(dir.path(), &[]));
}

#[test]
fn a_manifest_naming_another_data_source_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    let entry = format!("{}/{}", host_platform(), host_library_name("demo"));
    CraftedPackage::new()
        .manifest(&["other"], &[(host_platform(), &entry)])
        .file(&entry, &library)
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected(
        "another_data_source",
        &verify(dir.path(), &["--name", "demo"]),
    );
}

#[test]
fn a_library_without_spark_ds_init_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = fs::read(CLibrary::new("demo").without_init().build(dir.path())).expect("read");
    host_package(&library).write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("no_spark_ds_init", &verify(dir.path(), &[]));
}

#[test]
fn a_glibc_symbol_version_above_the_baseline_is_rejected() {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return; // Symbol versions are a glibc matter.
    }
    let dir = TempDir::new().expect("temp dir");
    let library = fs::read(
        CLibrary::new("demo")
            .calling_pthread_create()
            .build(dir.path()),
    )
    .expect("read");
    host_package(&library).write(&dir.path().join("demo.sparkpkg"));
    // pthread_create@GLIBC_2.34 needs a glibc of 2.34 or later to build against; Debian 12, the
    // image of this suite, has 2.36.
    assert_rejected(
        "glibc_above_baseline",
        &verify(dir.path(), &["--glibc", "2.28"]),
    );
    let raised = verify(dir.path(), &["--glibc", "2.34"]);
    assert!(raised.status.success(), "{}", report(&raised));
}

#[test]
fn a_disallowed_dependency_is_rejected_unless_allowed() {
    if !cfg!(target_os = "linux") {
        return; // libstdc++ is the Linux C++ runtime.
    }
    let dir = TempDir::new().expect("temp dir");
    let library =
        fs::read(CLibrary::new("demo").linking("-lstdc++").build(dir.path())).expect("read");
    host_package(&library).write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("disallowed_dependency", &verify(dir.path(), &[]));
    let allowed = verify(dir.path(), &["--allow", "libstdc++.so.6"]);
    assert!(allowed.status.success(), "{}", report(&allowed));
}

#[test]
fn every_problem_is_reported_not_only_the_first() {
    let dir = TempDir::new().expect("temp dir");
    let library = fs::read(CLibrary::new("demo").without_init().build(dir.path())).expect("read");
    let json = serde_json::json!({
        "abiVersion": 2,
        "dataSources": ["Demo"],
        "libraries": {
            host_platform(): format!("{}/{}", host_platform(), host_library_name("demo")),
            "linux-ppc64le": "linux-ppc64le/libspark_datasource_demo.so",
        },
    });
    CraftedPackage::new()
        .file(MANIFEST, json.to_string().as_bytes())
        .file(
            &format!("{}/{}", host_platform(), host_library_name("demo")),
            &library,
        )
        .file("notes.txt", b"")
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("many_problems", &verify(dir.path(), &["--name", "demo"]));
}

#[test]
fn a_manifest_that_does_not_parse_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    CraftedPackage::new()
        .file(MANIFEST, br#"{"abiVersion": 1, "dataSources": ["demo"]}"#)
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("manifest_without_libraries", &verify(dir.path(), &[]));
}

#[test]
fn a_file_that_is_not_a_zip_archive_stops_verify() {
    let dir = TempDir::new().expect("temp dir");
    fs::write(dir.path().join("demo.sparkpkg"), b"not a zip").expect("write");
    let output = verify(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!("not_a_zip", report(&output));
}

const NOTICES: &str = "THIRD-PARTY-NOTICES";
const SBOM: &str = "sbom.cdx.json";

/// A package of one host library that lists notices and an SBOM, with these contents (`None`:
/// listed but not in the archive).
fn package_with(library: &[u8], notices: Option<&str>, sbom: Option<&str>) -> CraftedPackage {
    let entry = format!("{}/{}", host_platform(), host_library_name("demo"));
    let mut package = CraftedPackage::new()
        .manifest_with(
            &["demo"],
            &[(host_platform(), &entry)],
            &[("notices", NOTICES), ("sbom", SBOM)],
        )
        .file(&entry, library);
    if let Some(notices) = notices {
        package = package.file(NOTICES, notices.as_bytes());
    }
    if let Some(sbom) = sbom {
        package = package.file(SBOM, sbom.as_bytes());
    }
    package
}

#[test]
fn a_package_with_notices_and_an_sbom_that_agree_is_accepted() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    package_with(
        &library,
        Some("zlib 1.3.1\nZlib licence text\n"),
        Some(&sbom(&[("zlib", "1.3.1", Some("Zlib"))])),
    )
    .write(&dir.path().join("demo.sparkpkg"));
    let output = verify(dir.path(), &["--require-notices"]);
    assert!(output.status.success(), "{}", report(&output));
}

#[test]
fn listed_notices_and_sbom_missing_from_the_archive_are_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    package_with(&library, None, None).write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("missing_notices_and_sbom", &verify(dir.path(), &[]));
}

#[test]
fn an_sbom_that_is_not_cyclonedx_json_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    package_with(
        &library,
        Some("no components\n"),
        Some("SPDXVersion: SPDX-2.3\n"),
    )
    .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("sbom_not_json", &verify(dir.path(), &[]));
}

#[test]
fn an_sbom_of_another_format_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    let spdx = serde_json::json!({ "spdxVersion": "SPDX-2.3", "packages": [] }).to_string();
    package_with(&library, Some("no components\n"), Some(&spdx))
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("sbom_not_cyclonedx", &verify(dir.path(), &[]));
}

#[test]
fn an_sbom_component_without_a_licence_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    package_with(
        &library,
        Some("zlib 1.3.1\nlibfoo 2.0\n"),
        Some(&sbom(&[
            ("zlib", "1.3.1", Some("Zlib")),
            ("libfoo", "2.0", None),
        ])),
    )
    .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("sbom_component_without_licence", &verify(dir.path(), &[]));
}

#[test]
fn an_sbom_listing_a_component_twice_is_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    package_with(
        &library,
        Some("zlib 1.3.1\n"),
        Some(&sbom(&[
            ("zlib", "1.3.1", Some("Zlib")),
            ("zlib", "1.3.1", Some("Zlib")),
        ])),
    )
    .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("sbom_component_twice", &verify(dir.path(), &[]));
}

#[test]
fn notices_that_do_not_name_every_sbom_component_are_rejected() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    package_with(
        &library,
        Some("zlib 1.3.1\nZlib licence text\n"),
        Some(&sbom(&[
            ("zlib", "1.3.1", Some("Zlib")),
            ("openssl", "3.0.13", Some("Apache-2.0")),
        ])),
    )
    .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("notices_missing_a_component", &verify(dir.path(), &[]));
}

#[test]
fn notices_and_an_sbom_the_manifest_does_not_list_are_extra_files() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    host_package(&library)
        .file(NOTICES, b"zlib 1.3.1\n")
        .file(SBOM, sbom(&[("zlib", "1.3.1", Some("Zlib"))]).as_bytes())
        .write(&dir.path().join("demo.sparkpkg"));
    assert_rejected("unlisted_notices_and_sbom", &verify(dir.path(), &[]));
}

#[test]
fn a_package_without_notices_and_sbom_is_rejected_when_they_are_required() {
    let dir = TempDir::new().expect("temp dir");
    let library = demo_library(dir.path());
    host_package(&library).write(&dir.path().join("demo.sparkpkg"));
    let warned = verify(dir.path(), &[]);
    assert!(warned.status.success(), "{}", report(&warned));
    assert_rejected(
        "notices_required",
        &verify(dir.path(), &["--require-notices"]),
    );
}
