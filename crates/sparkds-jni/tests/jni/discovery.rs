use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use spark_datasource_core::library_file::Os;
use sparkds_jni::build::Origin;
use sparkds_jni::discovery::{self, DriverBuild, Located, Search};
use sparkds_jni::error::ErrorClass;
use sparkds_package::write::{write_package, PackageSpec};
use sparkds_package::Platform;

use crate::helpers::{c_range, fresh_dir};

fn platform() -> Platform {
    Platform::current().expect("the tests run on a platform that packages serve")
}

/// A package of c_range under `name`, with the c_range library renamed for it.
fn package(dir: &Path, file: &str, name: &str) -> PathBuf {
    let staged = dir.join(format!("stage-{file}"));
    std::fs::create_dir_all(&staged).expect("a stage");
    let library = staged.join(Os::current().library_file_name(name));
    std::fs::copy(c_range(), &library).expect("copied");
    let spec = PackageSpec {
        names: vec![name.to_string()],
        version: "1.0".into(),
        libraries: BTreeMap::from([(platform(), library)]),
        notices: None,
        sbom: None,
    };
    let out = dir.join(file);
    write_package(&spec, &out).expect("packaged");
    out
}

/// A package whose manifest is `manifest`, with no library.
fn raw_package(dir: &Path, file: &str, manifest: &str) -> PathBuf {
    let out = dir.join(file);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&out).expect("created"));
    zip.start_file(
        "spark-native-datasource.json",
        zip::write::SimpleFileOptions::default(),
    )
    .expect("an entry");
    zip.write_all(manifest.as_bytes()).expect("written");
    zip.finish().expect("finished");
    out
}

fn installed(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).expect("a directory");
    let path = dir.join(Os::current().library_file_name(name));
    std::fs::copy(c_range(), &path).expect("copied");
    path
}

fn search(_dir: &Path) -> Search {
    Search::default()
}

fn quiet(_: i32, _: &str) {}

#[test]
fn an_unchanged_library_or_package_is_not_read_again_and_a_changed_one_is() {
    let dir = fresh_dir("unchanged");
    let lib_dir = dir.join("lib");
    let path = installed(&lib_dir, "c_range");
    let package_path = package(&dir, "c.sparkpkg", "c_range");
    // Only a file that has not changed for a while is trusted by its stamp.
    std::thread::sleep(sparkds_jni::stamp::SETTLED + std::time::Duration::from_millis(200));
    let installed_only = Search {
        library_dirs: vec![lib_dir.clone()],
        ..Search::default()
    };
    let in_package = Search {
        session_packages: vec![package_path.clone()],
        ..Search::default()
    };
    for s in [&installed_only, &in_package] {
        let resolve = || discovery::resolve("c_range", s, &quiet).expect("found");
        let first = resolve();
        assert!(matches!(first.build, Located::Read(_)), "{first:?}");
        let loaded = first
            .build
            .load(None, &dir, "4.3.0", sparkds_jni::library_log)
            .expect("loads");
        // Loaded and unchanged: not read again, the same build.
        let again = resolve();
        match &again.build {
            Located::Loaded { loaded: known, .. } => assert!(std::ptr::eq(*known, loaded)),
            other @ Located::Read(_) => panic!("read again: {other:?}"),
        }
        assert_eq!(again.place, first.place);
    }

    // Written again, with the same bytes: read again (and, just written, read every time).
    std::fs::copy(c_range(), &path).expect("copied");
    let found = discovery::resolve("c_range", &installed_only, &quiet).expect("found");
    assert!(matches!(found.build, Located::Read(_)), "{found:?}");
    found
        .build
        .load(None, &dir, "4.3.0", sparkds_jni::library_log)
        .expect("the same build");
    // Another build there: read, and refused as a replacement.
    std::fs::write(&path, b"another build").expect("replaced");
    let found = discovery::resolve("c_range", &installed_only, &quiet).expect("found");
    let e = found
        .build
        .load(None, &dir, "4.3.0", sparkds_jni::library_log)
        .expect_err("replaced");
    assert_eq!(e.class, ErrorClass::Replaced, "{e}");
}

#[test]
fn session_packages_come_first_the_last_added_winning_then_configured_then_installed() {
    let dir = fresh_dir("precedence");
    let first = package(&dir, "c-1.0.sparkpkg", "c_range");
    let second = package(&dir, "c-1.1.sparkpkg", "c_range");
    let configured = fresh_dir("precedence-configured");
    let configured_package = package(&configured, "c.sparkpkg", "c_range");
    let lib_dir = dir.join("lib");
    let installed_path = installed(&lib_dir, "c_range");

    let mut s = search(&dir);
    s.library_dirs = vec![dir.join("empty"), lib_dir.clone()];
    let found = discovery::resolve("c_range", &s, &quiet).expect("installed");
    assert_eq!(found.build.origin(), &Origin::File(installed_path));
    assert_eq!(found.place, format!("library path {}", lib_dir.display()));
    let c_range_sum = sparkds_jni::checksum::sha256_file(c_range()).expect("sum");
    assert_eq!(found.build.sha256(), c_range_sum);

    // A configured directory of packages wins over the installed library.
    s.configured_packages = vec![configured.clone()];
    let found = discovery::resolve("C_RANGE", &s, &quiet).expect("configured");
    assert_eq!(
        found.place,
        format!("configured package {}", configured_package.display())
    );
    // Read from the package, never extracted: the checksum is the entry's.
    assert_eq!(
        *found.build.origin(),
        Origin::Package {
            package: configured_package.clone(),
            entry: format!(
                "{}/{}",
                platform().key(),
                Os::current().library_file_name("c_range")
            ),
        }
    );
    assert_eq!(found.build.sha256(), c_range_sum);

    // The session's packages win, the last added first.
    s.session_packages = vec![first.clone(), second.clone()];
    let found = discovery::resolve("c_range", &s, &quiet).expect("session");
    assert_eq!(found.place, format!("session package {}", second.display()));
    assert_eq!(found.build.origin().path(), second);
}

#[test]
fn relative_directories_of_the_library_path_are_not_searched() {
    let dir = fresh_dir("relative");
    installed(&dir.join("lib"), "c_range");
    // A relative entry, resolved against the current directory, would find the library.
    let cwd = std::env::current_dir().expect("cwd");
    let up: PathBuf = cwd.components().skip(1).map(|_| "..").collect();
    let relative = up.join(dir.join("lib").strip_prefix("/").expect("absolute"));
    assert!(relative
        .join(Os::current().library_file_name("c_range"))
        .is_file());
    let mut s = search(&dir);
    s.library_dirs = vec![PathBuf::from(""), PathBuf::from("."), relative];
    let e = discovery::resolve("c_range", &s, &quiet);
    let e = e.expect_err("relative directories are ignored");
    assert_eq!(e.class, ErrorClass::NotFound);
    assert!(
        e.message.contains("in the native library path (empty)"),
        "{e}"
    );
}

#[test]
fn two_configured_packages_of_one_name_are_an_error_naming_both() {
    let dir = fresh_dir("ambiguous");
    let a = package(&dir, "a.sparkpkg", "c_range");
    let b = package(&dir, "b.sparkpkg", "c_range");
    let mut s = search(&dir);
    s.configured_packages = vec![a.clone(), b.clone()];
    let e = discovery::resolve("c_range", &s, &quiet).expect_err("ambiguous");
    assert_eq!(e.class, ErrorClass::Ambiguous);
    assert_eq!(
        e.message,
        format!(
            "native data source `c_range` is provided by 2 configured packages: {}, {}; keep one of them in spark.sql.dataSource.native.paths",
            a.display(),
            b.display()
        )
    );
}

#[test]
fn an_unreadable_package_is_skipped_and_logged_unless_only_it_lists_the_name() {
    let dir = fresh_dir("unusable");
    let broken = dir.join("broken.sparkpkg");
    std::fs::write(&broken, b"not a zip").expect("written");
    let future = raw_package(
        &dir,
        "future.sparkpkg",
        r#"{"abiVersion":2,"dataSources":["c_range"],"libraries":{}}"#,
    );
    let lib_dir = dir.join("lib");
    installed(&lib_dir, "c_range");
    let mut s = search(&dir);
    s.session_packages = vec![broken.clone(), future.clone()];
    s.library_dirs = vec![lib_dir];
    let logged = Mutex::new(Vec::new());
    let found = discovery::resolve("c_range", &s, &|level, m| {
        logged.lock().expect("log").push((level, m.to_string()));
    })
    .expect("the installed library");
    assert!(found.place.starts_with("library path"));
    let logged = logged.into_inner().expect("log");
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert!(logged.iter().all(|(level, _)| *level == 2));
    assert!(logged[0].1.starts_with(&format!(
        "skipped the package {}: its abiVersion is 2",
        future.display()
    )));
    assert!(logged[1].1.starts_with(&format!(
        "skipped the package {}: it is not a zip archive",
        broken.display()
    )));

    // Without the installed library, the package that lists the name gives its error.
    s.library_dirs.clear();
    let e = discovery::resolve("c_range", &s, &quiet).expect_err("unsupported");
    assert_eq!(e.class, ErrorClass::UnsupportedAbi);
    assert!(e.message.starts_with(&format!(
        "native data source `c_range`: the package {} lists it but cannot provide it: its abiVersion is 2",
        future.display()
    )), "{e}");
}

#[test]
fn a_hostile_package_is_refused_before_anything_is_decompressed() {
    let dir = fresh_dir("hostile");
    // A valid manifest among a thousand entries: more than a package may hold.
    let out = dir.join("many.sparkpkg");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&out).expect("created"));
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("spark-native-datasource.json", options)
        .expect("an entry");
    zip.write_all(br#"{"abiVersion":1,"dataSources":["c_range"],"libraries":{}}"#)
        .expect("written");
    for i in 0..1000 {
        zip.start_file(format!("filler/{i}"), options)
            .expect("an entry");
    }
    zip.finish().expect("finished");
    let mut s = search(&dir);
    s.session_packages = vec![out.clone()];
    let e = discovery::resolve("c_range", &s, &quiet).expect_err("refused");
    assert!(
        e.message
            .contains("`sparkds verify` refuses it: (package): the archive declares 1001 entries"),
        "{e}"
    );
}

#[test]
fn a_package_without_this_platform_names_the_platforms_it_has() {
    let dir = fresh_dir("other-platform");
    let other = if platform() == Platform::OsxAarch64 {
        "linux-x86_64"
    } else {
        "osx-aarch64"
    };
    let p = raw_package(
        &dir,
        "mac.sparkpkg",
        &format!(
            r#"{{"abiVersion":1,"dataSources":["c_range"],"libraries":{{"{other}":"x/libspark_datasource_c_range.dylib"}}}}"#
        ),
    );
    let mut s = search(&dir);
    s.session_packages = vec![p];
    let e = discovery::resolve("c_range", &s, &quiet).expect_err("no library here");
    assert_eq!(e.class, ErrorClass::NotFound);
    assert!(
        e.message.contains(&format!(
            "it has no library for {} (it has {other})",
            platform()
        )),
        "{e}"
    );
}

#[test]
fn a_package_entry_that_escapes_the_extraction_directory_is_refused() {
    let dir = fresh_dir("zip-slip");
    let p = raw_package(
        &dir,
        "slip.sparkpkg",
        &format!(
            r#"{{"abiVersion":1,"dataSources":["c_range"],"libraries":{{"{}":"../../evil.so"}}}}"#,
            platform().key()
        ),
    );
    let mut s = search(&dir);
    s.session_packages = vec![p];
    let e = discovery::resolve("c_range", &s, &quiet).expect_err("refused");
    assert_eq!(e.class, ErrorClass::InitFailed);
    assert!(e.message.ends_with("the library entry `../../evil.so` is refused: the path contains `..`: paths in a package stay inside it"), "{e}");
    assert!(!dir.join("evil.so").exists());
}

#[test]
fn nothing_found_names_every_place_searched_and_the_fix() {
    let dir = fresh_dir("not-found");
    let other = package(&dir, "other.sparkpkg", "other");
    let mut s = search(&dir);
    s.session_packages = vec![other.clone()];
    s.library_dirs = vec![PathBuf::from("/opt/a"), PathBuf::from("/opt/b")];
    let e = discovery::resolve("missing", &s, &quiet).expect_err("not found");
    assert_eq!(e.class, ErrorClass::NotFound);
    let file = Os::current().library_file_name("missing");
    assert_eq!(
        e.message,
        format!(
            "no native data source `missing`: no {file} in the native library path (/opt/a, /opt/b), and no package that provides it among {} (session); copy {file} into one of these directories, or set spark.driver.extraLibraryPath and spark.executor.extraLibraryPath to its directory, or add a .sparkpkg that provides `missing` (spark.sql.dataSource.native.paths or a session artifact)",
            other.display()
        )
    );
}

#[test]
fn an_executor_finds_the_drivers_build_by_its_checksum_or_names_the_builds_it_has() {
    let dir = fresh_dir("locate");
    let driver = installed(&dir.join("driver"), "c_range");
    let sum = sparkds_jni::checksum::sha256_file(&driver).expect("sum");
    let elsewhere = dir.join("node");
    let node = installed(&elsewhere, "c_range");
    let wanted = |driver_path: &Path| DriverBuild {
        name: "c_range".into(),
        sha256: sum.clone(),
        driver_path: driver_path.to_path_buf(),
        ..DriverBuild::default()
    };
    // The driver's path has the build: it wins.
    let build =
        discovery::locate_build(&wanted(&driver), std::slice::from_ref(&elsewhere)).expect("found");
    assert_eq!(build.origin(), &Origin::File(driver.clone()));
    // Not at the driver's path: the library path.
    let gone = dir
        .join("gone")
        .join(Os::current().library_file_name("c_range"));
    let build =
        discovery::locate_build(&wanted(&gone), std::slice::from_ref(&elsewhere)).expect("found");
    assert_eq!(build.origin(), &Origin::File(node.clone()));
    // Another build at the driver's path and in the library path: refused, naming both
    // checksums.
    std::fs::write(&node, b"another build").expect("replaced");
    std::fs::write(&driver, b"a third build").expect("replaced");
    let other_sum = sparkds_jni::checksum::sha256_bytes(b"another build");
    let third_sum = sparkds_jni::checksum::sha256_bytes(b"a third build");
    let e = discovery::locate_build(&wanted(&driver), std::slice::from_ref(&elsewhere))
        .expect_err("not this build");
    assert_eq!(e.class, ErrorClass::NotFound);
    assert!(e.message.starts_with(&format!(
        "native data source `c_range`: this executor has no build with the driver's SHA-256 {sum}: it has {} (SHA-256 {third_sum}), {} (SHA-256 {other_sum})",
        driver.display(),
        node.display()
    )), "{e}");
}

#[test]
fn an_executor_takes_the_drivers_package_build_from_its_session_copy() {
    let dir = fresh_dir("locate-package");
    let package_path = package(&dir, "c-1.0.sparkpkg", "c_range");
    let sum = sparkds_jni::checksum::sha256_file(c_range()).expect("sum");
    let entry = format!(
        "{}/{}",
        platform().key(),
        Os::current().library_file_name("c_range")
    );
    let copy = dir.join("copy.sparkpkg");
    std::fs::copy(&package_path, &copy).expect("copied");
    let wanted = DriverBuild {
        name: "c_range".into(),
        sha256: sum.clone(),
        driver_path: dir.join("not-on-this-node.sparkpkg"),
        entry: Some(entry.clone()),
        package_files: vec![copy.clone()],
    };
    let build = discovery::locate_build(&wanted, &[]).expect("from the copy");
    assert_eq!(
        *build.origin(),
        Origin::Package {
            package: copy.clone(),
            entry: entry.clone()
        }
    );
    assert_eq!(build.sha256(), sum);
    // A session copy holding another build is not taken.
    let other = package(&dir, "other.sparkpkg", "c_range");
    let other_package = dir.join("other-copy.sparkpkg");
    std::fs::copy(&other, &other_package).expect("copied");
    let wanted = DriverBuild {
        sha256: "0".repeat(64),
        package_files: vec![other_package.clone()],
        ..wanted
    };
    let e = discovery::locate_build(&wanted, &[]).expect_err("another build");
    assert!(
        e.message.contains(&format!(
            "it has `{entry}` of the package {} (SHA-256 {sum})",
            other_package.display()
        )),
        "{e}"
    );
}

/// A named pipe at `path`, which a plain open would wait on until a writer came.
fn fifo(path: &Path) -> PathBuf {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
    path.to_path_buf()
}

/// Runs `f` on a thread and fails if it has not returned within 20 s: what a blocking open of a
/// named pipe would do.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    received
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("returns at once instead of waiting on a named pipe")
}

#[test]
fn a_named_pipe_in_the_library_path_is_refused_by_its_name() {
    let dir = fresh_dir("fifo-library");
    let lib_dir = dir.join("lib");
    std::fs::create_dir_all(&lib_dir).expect("a directory");
    let pipe = fifo(&lib_dir.join(Os::current().library_file_name("piped")));
    // The same name further down the path is not reached: the first directory holds it.
    installed(&dir.join("later"), "piped");
    let mut s = search(&dir);
    s.library_dirs = vec![lib_dir, dir.join("later")];
    let e = within_seconds(move || discovery::resolve("piped", &s, &quiet))
        .expect_err("a named pipe is not a library");
    assert_eq!(e.class, ErrorClass::InitFailed);
    assert_eq!(
        e.message,
        format!(
            "the library {} is refused: it is a named pipe (FIFO), not a regular file; put the library's file there, or remove what is there",
            pipe.display()
        )
    );
}

#[test]
fn a_named_pipe_as_a_package_is_skipped_with_its_reason() {
    let dir = fresh_dir("fifo-package");
    let session = fifo(&dir.join("session.sparkpkg"));
    let configured = fresh_dir("fifo-package-configured");
    let in_dir = fifo(&configured.join("in-dir.sparkpkg"));
    let mut s = search(&dir);
    s.session_packages = vec![session.clone()];
    s.configured_packages = vec![configured];
    let e = within_seconds(move || discovery::resolve("piped", &s, &quiet))
        .expect_err("no package can be read");
    assert_eq!(e.class, ErrorClass::NotFound);
    for pipe in [session, in_dir] {
        let reason = format!(
            "{}: cannot open it: it is a named pipe (FIFO), not a regular file",
            pipe.display()
        );
        assert!(e.message.contains(&reason), "{}", e.message);
    }
}

#[test]
fn an_executor_names_a_named_pipe_where_it_looked_for_the_driver_s_build() {
    let dir = fresh_dir("fifo-executor");
    let driver = fifo(&dir.join(Os::current().library_file_name("piped")));
    let wanted = DriverBuild {
        name: "piped".into(),
        sha256: "0".repeat(64),
        driver_path: driver.clone(),
        entry: None,
        package_files: Vec::new(),
    };
    let e =
        within_seconds(move || discovery::locate_build(&wanted, &[])).expect_err("nothing to load");
    assert_eq!(e.class, ErrorClass::NotFound);
    assert!(
        e.message.contains(&format!(
            "it has {} (unreadable: it is a named pipe (FIFO), not a regular file)",
            driver.display()
        )),
        "{}",
        e.message
    );
}
