//! A package built on this machine round-trips through `sparkds package` and `sparkds verify`.

use std::fs;

use tempfile::TempDir;

use crate::helpers::{
    host_library_name, host_platform, host_settings, report, sha256_hex, sparkds, CLibrary,
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
