//! A package built on this machine round-trips through `sparkds package` and `sparkds verify`,
//! with the third-party notices and the SBOM of the library's cargo package.

use std::fs;

use tempfile::TempDir;

use crate::helpers::{
    cargo_project, entry_names, entry_text, host_library_name, host_platform, host_settings,
    report, sbom, sha256_hex, sparkds, CLibrary,
};

#[test]
fn a_library_built_here_round_trips_through_package_and_verify() {
    let dir = TempDir::new().expect("temp dir");
    let library = CLibrary::new("demo").build(dir.path());
    let out = dir.path().join("out");

    let packaged = sparkds()
        .current_dir(dir.path())
        .args(["package", "--name", "demo", "--version", "0.1.0"])
        .arg("--library")
        .arg(format!("{}={}", host_platform(), library.display()))
        .args(["--out-dir", "out"])
        .output()
        .expect("sparkds runs");
    assert!(packaged.status.success(), "{}", report(&packaged));
    let package = out.join("demo-0.1.0.sparkpkg");
    assert!(package.is_file());

    let verified = sparkds()
        .current_dir(dir.path())
        .args(["verify", "out/demo-0.1.0.sparkpkg", "--name", "demo"])
        .output()
        .expect("sparkds runs");
    assert!(verified.status.success(), "{}", report(&verified));
    let stdout = String::from_utf8_lossy(&verified.stdout);
    let expected_sha = sha256_hex(&fs::read(&library).expect("read the library"));
    let entry = format!("{}/{}", host_platform(), host_library_name("demo"));
    assert!(
        stdout.contains(&format!("{expected_sha}  {entry}")),
        "verify must print the SHA-256 of the library as built:\n{stdout}"
    );
    host_settings().bind(|| {
        insta::assert_snapshot!("round_trip_verify", report(&verified));
    });
}

#[test]
fn packaging_the_same_libraries_twice_gives_the_same_bytes() {
    let dir = TempDir::new().expect("temp dir");
    let layout = dir.path().join("libs").join(host_platform());
    fs::create_dir_all(&layout).expect("mkdir");
    CLibrary::new("demo").build(&layout);
    let package = |out: &str| {
        let output = sparkds()
            .current_dir(dir.path())
            .args([
                "package",
                "--name",
                "demo",
                "--version",
                "1.2.3",
                "--dir",
                "libs",
                "--out-dir",
                out,
            ])
            .output()
            .expect("sparkds runs");
        assert!(output.status.success(), "{}", report(&output));
        fs::read(dir.path().join(out).join("demo-1.2.3.sparkpkg")).expect("read the package")
    };
    let first = package("a");
    // A later modification time must not change the archive: entries carry a fixed timestamp.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = package("b");
    assert_eq!(sha256_hex(&first), sha256_hex(&second));
}

#[test]
fn the_manifest_lists_exactly_the_libraries_given() {
    let dir = TempDir::new().expect("temp dir");
    let library = CLibrary::new("demo").build(dir.path());
    let output = sparkds()
        .current_dir(dir.path())
        .args(["package", "--name", "demo", "--version", "0.1.0"])
        .arg("--library")
        .arg(format!("{}={}", host_platform(), library.display()))
        .output()
        .expect("sparkds runs");
    assert!(output.status.success(), "{}", report(&output));
    let file = fs::File::open(dir.path().join("demo-0.1.0.sparkpkg")).expect("open");
    let mut archive = zip::ZipArchive::new(file).expect("a zip file");
    let names: Vec<String> = (0..archive.len())
        .map(|i| {
            let entry = archive.by_index(i).expect("an entry");
            String::from_utf8_lossy(entry.name_raw()).into_owned()
        })
        .collect();
    assert_eq!(
        names,
        vec![
            "spark-native-datasource.json".to_string(),
            format!("{}/{}", host_platform(), host_library_name("demo")),
        ]
    );
    let manifest: serde_json::Value = {
        let entry = archive
            .by_name("spark-native-datasource.json")
            .expect("manifest");
        serde_json::from_reader(entry).expect("JSON")
    };
    assert_eq!(
        manifest,
        serde_json::json!({
            "abiVersion": 1,
            "dataSources": ["demo"],
            "libraries": { host_platform(): format!("{}/{}", host_platform(), host_library_name("demo")) },
        })
    );
}

#[test]
fn package_refuses_a_library_named_for_another_data_source() {
    // Names are checked before any file is read, so the library need not exist.
    let output = sparkds()
        .args(["package", "--name", "demo", "--version", "0.1.0"])
        .args([
            "--library",
            "linux-x86_64=target/libspark_datasource_other.so",
        ])
        .output()
        .expect("sparkds runs");
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!("package_wrong_name", report(&output));
}

#[test]
fn package_refuses_an_unknown_platform() {
    let output = sparkds()
        .args([
            "package",
            "--name",
            "demo",
            "--version",
            "0.1.0",
            "--library",
            "linux-ppc64le=libspark_datasource_demo.so",
        ])
        .output()
        .expect("sparkds runs");
    assert_eq!(output.status.code(), Some(2));
    insta::assert_snapshot!("package_unknown_platform", report(&output));
}

#[test]
fn a_library_of_a_cargo_package_is_packaged_with_the_notices_and_sbom_of_its_normal_dependencies() {
    let dir = TempDir::new().expect("temp dir");
    let library = CLibrary::new("demo").build(dir.path());
    let project = dir.path().join("project");
    cargo_project(&project);
    // From the project's directory, as the generated CI runs it: no --manifest-path.
    let package = |out: &str| {
        let output = sparkds()
            .current_dir(&project)
            .args(["package", "--name", "demo", "--version", "0.1.0"])
            .arg("--library")
            .arg(format!("{}={}", host_platform(), library.display()))
            .args(["--out-dir", out])
            .output()
            .expect("sparkds runs");
        assert!(output.status.success(), "{}", report(&output));
        assert!(output.stderr.is_empty(), "{}", report(&output));
        project.join(out).join("demo-0.1.0.sparkpkg")
    };
    let first = package("a");
    let entry = format!("{}/{}", host_platform(), host_library_name("demo"));
    assert_eq!(
        entry_names(&first),
        [
            "spark-native-datasource.json",
            "THIRD-PARTY-NOTICES",
            "sbom.cdx.json",
            &entry
        ]
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&entry_text(&first, "spark-native-datasource.json")).expect("JSON");
    assert_eq!(
        manifest,
        serde_json::json!({
            "abiVersion": 1,
            "dataSources": ["demo"],
            "libraries": { host_platform(): entry },
            "notices": "THIRD-PARTY-NOTICES",
            "sbom": "sbom.cdx.json",
        })
    );
    // alpha and beta, which it depends on, are compiled into the library; gamma (a
    // build-dependency), delta (a dev-dependency) and epsilon (turned on by delta) are not.
    insta::assert_snapshot!("notices", entry_text(&first, "THIRD-PARTY-NOTICES"));
    insta::assert_snapshot!("sbom", entry_text(&first, "sbom.cdx.json"));

    let verified = sparkds()
        .current_dir(&project)
        .args([
            "verify",
            "a/demo-0.1.0.sparkpkg",
            "--name",
            "demo",
            "--require-notices",
        ])
        .output()
        .expect("sparkds runs");
    assert!(verified.status.success(), "{}", report(&verified));
    host_settings().bind(|| {
        insta::assert_snapshot!("verify_with_notices", report(&verified));
    });

    let second = package("b");
    assert_eq!(
        sha256_hex(&fs::read(&first).expect("read")),
        sha256_hex(&fs::read(&second).expect("read")),
        "the notices and the SBOM are reproducible"
    );
}

#[test]
fn manifest_path_names_the_cargo_package_from_anywhere() {
    let dir = TempDir::new().expect("temp dir");
    let library = CLibrary::new("demo").build(dir.path());
    cargo_project(&dir.path().join("project"));
    let output = sparkds()
        .current_dir(dir.path())
        .args(["package", "--name", "demo", "--version", "0.1.0"])
        .arg("--library")
        .arg(format!("{}={}", host_platform(), library.display()))
        .args(["--manifest-path", "project/Cargo.toml"])
        .output()
        .expect("sparkds runs");
    assert!(output.status.success(), "{}", report(&output));
    let sbom = entry_text(&dir.path().join("demo-0.1.0.sparkpkg"), "sbom.cdx.json");
    assert!(sbom.contains("pkg:cargo/beta@1.2.3"), "{sbom}");
}

#[test]
fn a_c_library_is_packaged_with_notices_and_an_sbom_made_elsewhere() {
    let dir = TempDir::new().expect("temp dir");
    let library = CLibrary::new("demo").build(dir.path());
    fs::write(
        dir.path().join("notices.txt"),
        "zlib 1.3.1\n\nCopyright (C) 1995-2024 Jean-loup Gailly and Mark Adler\n",
    )
    .expect("write");
    fs::write(
        dir.path().join("bom.json"),
        sbom(&[("zlib", "1.3.1", Some("Zlib"))]),
    )
    .expect("write");
    let packaged = sparkds()
        .current_dir(dir.path())
        .args(["package", "--name", "demo", "--version", "0.1.0"])
        .arg("--library")
        .arg(format!("{}={}", host_platform(), library.display()))
        .args(["--notices", "notices.txt", "--sbom", "bom.json"])
        .output()
        .expect("sparkds runs");
    assert!(packaged.status.success(), "{}", report(&packaged));
    let package = dir.path().join("demo-0.1.0.sparkpkg");
    assert_eq!(
        entry_text(&package, "THIRD-PARTY-NOTICES"),
        fs::read_to_string(dir.path().join("notices.txt")).expect("read")
    );
    let verified = sparkds()
        .current_dir(dir.path())
        .args(["verify", "demo-0.1.0.sparkpkg", "--require-notices"])
        .output()
        .expect("sparkds runs");
    assert!(verified.status.success(), "{}", report(&verified));
    assert!(verified.stderr.is_empty(), "{}", report(&verified));
}

#[test]
fn package_refuses_an_sbom_made_elsewhere_that_breaks_a_rule_of_verify() {
    let dir = TempDir::new().expect("temp dir");
    let library = CLibrary::new("demo").build(dir.path());
    fs::write(dir.path().join("notices.txt"), "zlib 1.3.1\n").expect("write");
    fs::write(
        dir.path().join("bom.json"),
        sbom(&[("zlib", "1.3.1", None)]),
    )
    .expect("write");
    let output = sparkds()
        .current_dir(dir.path())
        .args(["package", "--name", "demo", "--version", "0.1.0"])
        .arg("--library")
        .arg(format!("{}={}", host_platform(), library.display()))
        .args(["--notices", "notices.txt", "--sbom", "bom.json"])
        .output()
        .expect("sparkds runs");
    assert_eq!(output.status.code(), Some(2), "{}", report(&output));
    insta::assert_snapshot!("package_sbom_without_licence", report(&output));
}

#[test]
fn a_package_without_notices_passes_verify_with_a_warning_unless_they_are_required() {
    let dir = TempDir::new().expect("temp dir");
    let library = CLibrary::new("demo").build(dir.path());
    let packaged = sparkds()
        .current_dir(dir.path())
        .args([
            "package",
            "--name",
            "demo",
            "--version",
            "0.1.0",
            "--no-notices",
        ])
        .arg("--library")
        .arg(format!("{}={}", host_platform(), library.display()))
        .output()
        .expect("sparkds runs");
    assert!(packaged.status.success(), "{}", report(&packaged));
    assert!(packaged.stderr.is_empty(), "{}", report(&packaged));
    let warned = sparkds()
        .current_dir(dir.path())
        .args(["verify", "demo-0.1.0.sparkpkg"])
        .output()
        .expect("sparkds runs");
    assert!(warned.status.success(), "{}", report(&warned));
    let required = sparkds()
        .current_dir(dir.path())
        .args(["verify", "demo-0.1.0.sparkpkg", "--require-notices"])
        .output()
        .expect("sparkds runs");
    assert_eq!(required.status.code(), Some(1), "{}", report(&required));
    host_settings().bind(|| {
        insta::assert_snapshot!("verify_without_notices_required", report(&required));
    });
}
