use sparkds_jni::checksum::sha256_file;
use sparkds_jni::discovery::library_file_name;
use sparkds_jni::error::ErrorClass;
use sparkds_jni::loaded;

use crate::helpers::{c_range, fixture, fresh_dir};

fn load(
    path: &std::path::Path,
    sha256: Option<&str>,
) -> sparkds_jni::error::Result<&'static loaded::Loaded> {
    loaded::load(path, sha256, "4.3.0", sparkds_jni::library_log)
}

#[test]
fn a_path_loads_once_and_a_new_build_there_is_replaced() {
    let dir = fresh_dir("replaced");
    let path = dir.join(library_file_name("c_range"));
    std::fs::copy(c_range(), &path).expect("copied");
    let sum = sha256_file(&path).expect("sum");
    let first = load(&path, Some(&sum)).expect("loads");
    assert_eq!(first.name, "c_range");
    assert_eq!(first.sha256, sum);
    let again = load(&path, None).expect("loads again");
    assert!(std::ptr::eq(first, again), "the same library");

    // Another build asked for at a path this process loaded.
    let e = load(&path, Some(&"0".repeat(64))).expect_err("another build");
    assert_eq!(e.class, ErrorClass::Replaced);

    // A new build installed at the same path (written aside and renamed, as installers do).
    let staged = dir.join("staged.so");
    std::fs::copy(fixture(None), &staged).expect("copied");
    std::fs::rename(&staged, &path).expect("installed");
    let now = sha256_file(&path).expect("sum");
    let e = load(&path, None).expect_err("replaced");
    assert_eq!(e.class, ErrorClass::Replaced);
    assert_eq!(
        e.message,
        format!(
            "the library {} was replaced since this JVM loaded it (SHA-256 {sum} then, {now} now); restart the application to use the new build",
            path.display()
        )
    );
}

#[test]
fn a_first_load_of_another_checksum_than_asked_is_replaced() {
    let dir = fresh_dir("replaced-before");
    let path = dir.join(library_file_name("c_range"));
    std::fs::copy(c_range(), &path).expect("copied");
    let e = load(&path, Some(&"a".repeat(64))).expect_err("another build");
    assert_eq!(e.class, ErrorClass::Replaced);
}

#[test]
fn a_missing_file_is_not_found_and_a_broken_library_is_invalid() {
    let e = load(
        std::path::Path::new("/nonexistent/libspark_datasource_x.so"),
        None,
    )
    .expect_err("missing");
    assert_eq!(e.class, ErrorClass::NotFound);
    assert_eq!(
        e.message,
        "there is no library at /nonexistent/libspark_datasource_x.so; install it there, or resolve the data source again"
    );

    let dir = fresh_dir("not-a-library");
    let text = dir.join(library_file_name("text"));
    std::fs::write(&text, b"not a shared library").expect("written");
    let e = load(&text, None).expect_err("not a library");
    assert_eq!(e.class, ErrorClass::InitFailed);
    assert!(
        e.message.starts_with(&format!(
            "the library `{}` cannot be used: cannot load the library",
            text.display()
        )),
        "{e}"
    );

    let e = load(&fixture(Some("ABI_VERSION")), None).expect_err("version 2");
    assert_eq!(e.class, ErrorClass::UnsupportedAbi);
    assert!(
        e.message.contains("the table declares abi_version 2"),
        "{e}"
    );

    let e = load(&fixture(Some("SMALL_TABLE")), None).expect_err("a small table");
    assert_eq!(e.class, ErrorClass::InitFailed);
    assert!(e.message.contains("(rule 2)"), "{e}");
}
