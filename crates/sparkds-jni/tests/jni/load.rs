use spark_datasource_core::library_file::Os;
use sparkds_jni::checksum::sha256_file;
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
    let path = dir.join(Os::current().library_file_name("c_range"));
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
    let path = dir.join(Os::current().library_file_name("c_range"));
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
    let text = dir.join(Os::current().library_file_name("text"));
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
    assert!(e.message.contains("(rule 2: the table's size covers version 1; see https://sparkds.github.io/spark-datasource-template/reference/rules.html#rule-2)"), "{e}");
}

#[test]
fn the_bytes_that_were_hashed_are_the_bytes_that_run_whatever_the_path_holds_by_then() {
    let dir = fresh_dir("hashed-then-replaced");
    let path = dir.join(Os::current().library_file_name("c_range"));
    // A build of its own (bytes appended, which the loader ignores), so that no other test of
    // this process has loaded it.
    let mut bytes = std::fs::read(c_range()).expect("c_range");
    bytes.extend_from_slice(b"hashed-then-replaced");
    std::fs::write(&path, &bytes).expect("written");
    let build = sparkds_jni::build::Build::read_file(&path).expect("read");
    assert_eq!(build.sha256, sparkds_jni::checksum::sha256_bytes(&bytes));

    // Between the check and the load, someone replaces the file with another library.
    std::fs::copy(fixture(None), &path).expect("replaced");
    let loaded =
        loaded::load_build(build, None, &dir, "4.3.0", sparkds_jni::library_log).expect("loads");
    assert_eq!(loaded.sha256, sparkds_jni::checksum::sha256_bytes(&bytes));
    // What runs is c_range, the build that was hashed (its table is c_range's, not the
    // fixture's); and nothing of its private copy is left in `dir`.
    let functions =
        |path: &std::path::Path| sparkds::Library::load(path).expect("loads").functions();
    assert_ne!(functions(c_range()), functions(&fixture(None)));
    assert_eq!(loaded.library.functions(), functions(c_range()));
    let left: Vec<_> = std::fs::read_dir(&dir)
        .expect("listed")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(
        left,
        [std::ffi::OsString::from(
            Os::current().library_file_name("c_range")
        )]
    );
}

#[test]
fn a_build_already_loaded_is_found_by_its_checksum_without_reading_a_file() {
    let dir = fresh_dir("by-checksum");
    let path = dir.join(Os::current().library_file_name("c_range"));
    let mut bytes = std::fs::read(c_range()).expect("c_range");
    bytes.extend_from_slice(b"by-checksum");
    std::fs::write(&path, &bytes).expect("written");
    let sum = sparkds_jni::checksum::sha256_bytes(&bytes);
    assert!(loaded::by_checksum(&sum).is_none());
    let first = load(&path, Some(&sum)).expect("loads");
    std::fs::remove_file(&path).expect("removed");
    let again = loaded::by_checksum(&sum.to_uppercase()).expect("by its checksum");
    assert!(std::ptr::eq(first, again));
}
