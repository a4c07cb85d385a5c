//! Tests: cluster. The end-to-end tests on a Spark cluster of separate processes
//! (`local-cluster[2,1,1024]`: two executor JVMs besides the driver), through the Python bridge:
//! where the executors find the bridge and the libraries, a package shipped with the session,
//! another build on an executor, and an executor killed in the middle of reads and writes; and
//! through the JVM plugin: reads and writes on both executors, a killed executor, and a Spark
//! Connect server whose isolated session's package each executor finds in its own copy of the
//! session's files (the driver's copy out of its reach, in a mount namespace).
//!
//! The bridge's modules share one plain cluster in one pytest process (`plain_cluster`: its driver
//! runs in a working directory of its own, its executors have a library path of their own), the
//! failures last (they kill executors); the JVM plugin's module needs a cluster with its jar,
//! started from a fresh JVM in a pytest process of its own (a JVM keeps the class path and the
//! environment it started with). The two processes run at the same time.

#[path = "../spark/helpers/mod.rs"]
mod helpers;

use std::time::Instant;

use helpers::{Pytest, Repository};

#[test]
fn the_cluster_suite_passes_on_real_spark() {
    let repository = Repository::locate();
    // Copies, so that a later build into the shared target directory cannot replace a library
    // while the cluster runs it (the bridge would rightly refuse the new build).
    let libraries = tempfile::tempdir().expect("create a temporary directory");
    let copy = |built: std::path::PathBuf| {
        let copied = libraries
            .path()
            .join(built.file_name().expect("a library file name"));
        std::fs::copy(&built, &copied).expect("copy a built library");
        copied
    };
    let c_range = copy(repository.build_c_range());
    let writer = copy(repository.generate_and_build_writer_variant());
    let jar = copy(repository.build_jar());
    // Two clusters at a time: most of a module's time is spent waiting (executors starting,
    // killed and replaced), and each cluster is an application of its own (a test kills only
    // its own application's executors). A run is one pytest process, of one or more modules.
    let lanes: [&[&[&str]]; 2] = [
        &[&["test_distribution.py", "test_builds.py", "test_failures.py"]],
        // A Spark Connect server of its own, whose client runs in a pytest process of its own.
        &[&["test_jvm_plugin.py"], &["test_connect_packages.py"]],
    ];
    std::thread::scope(|scope| {
        for modules in lanes {
            let (repository, c_range, writer, jar) = (&repository, &c_range, &writer, &jar);
            scope.spawn(move || {
                for run in modules {
                    let started = Instant::now();
                    let mut pytest = Pytest::new(repository);
                    for module in *run {
                        pytest = pytest.suite(&format!("tests/cluster/{module}"));
                    }
                    pytest
                        .env("SPARK_E2E_C_RANGE_LIBRARY", c_range)
                        .env("SPARK_E2E_WRITER_LIBRARY", writer)
                        .env("SPARKDS_JVM_JAR", jar)
                        .run();
                    let modules = run.join(" ");
                    println!("{modules}: {:.1} s", started.elapsed().as_secs_f64());
                }
            });
        }
    });
}
