//! Tests: spark. The end-to-end tests on real Spark (pyspark 4.3), through the Python Data
//! Source bridge of the template (the package `python/`, `spark_native_bridge`).
//!
//! This binary builds the native libraries that the suite reads and writes, then runs the pytest
//! suite of `tests/spark` once and fails with its output if any test fails. It needs Python 3
//! with `pip install -r tests/spark/requirements.txt`, Java 17 or 21, `make` and a C compiler,
//! and `cargo-generate` for the generated read-write variant.

mod helpers;

use helpers::{Pytest, Repository};

#[test]
fn the_end_to_end_suite_passes_on_real_spark() {
    let repository = Repository::locate();
    let c_range = repository.build_c_range();
    let writer = repository.generate_and_build_writer_variant();
    Pytest::new(&repository)
        .suite("tests/spark")
        .env("SPARK_E2E_C_RANGE_LIBRARY", &c_range)
        .env("SPARK_E2E_WRITER_LIBRARY", &writer)
        .run();
}
