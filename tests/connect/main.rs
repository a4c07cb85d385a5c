//! Tests: connect. The JVM plugin behind a Spark Connect server (pyspark 4.3's
//! `SparkConnectServer`, local mode), driven only by PySpark's Connect client: reads, writes,
//! streams, SQL, errors as the client sees them, packages per session, and the Python bridge
//! registered from a client.
//!
//! This binary builds the plugin's jar with `jvm/build.sh --profile dev`, the c_range example
//! and the generated read-write variant of the Spark suite (and takes the postgres example of
//! the suite's compilation, or has pytest build it), then runs the pytest suite of
//! `tests/connect`, which starts one server for all its tests and stops it at the end. It needs
//! what `tests/jvm` needs, plus the Connect client's packages of `tests/spark/requirements.txt`.

#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod spark_helpers;

use spark_helpers::{Pytest, Repository};

#[test]
fn the_spark_connect_suite_passes_against_a_local_server() {
    let repository = Repository::locate();
    let jar = repository.build_jar();
    let c_range = repository.build_c_range();
    let writer = repository.generate_and_build_writer_variant();
    let mut pytest = Pytest::new(&repository)
        .suite("tests/connect")
        .env("SPARKDS_JVM_JAR", &jar)
        .env("SPARK_E2E_C_RANGE_LIBRARY", &c_range)
        .env("SPARK_E2E_WRITER_LIBRARY", &writer);
    // The postgres example of the suite's compilation (test_credentials.py); without it, the
    // fixture builds it with cargo.
    if let Some(postgres) = std::env::var_os("CARGO_CDYLIB_FILE_POSTGRES_EXAMPLE") {
        pytest = pytest.env("SPARKDS_POSTGRES_LIBRARY", std::path::Path::new(&postgres));
    }
    pytest.run();
}
