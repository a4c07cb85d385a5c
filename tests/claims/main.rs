//! Tests: claims. What a native data source does in Spark, each claim written once and run on
//! every runtime: the JVM plugin and the Python bridge in one classic session, then the plugin
//! behind a Spark Connect server in a pytest process of its own (tests/claims/conftest.py says
//! why). Reads, streams, writes, filter pushdown and the option `acceptedFilters`, on c_range,
//! the generated read-write variant, the sample with filter pushdown and the conformance
//! fixture's fault switches.
//!
//! What only one runtime has stays in its suite: tests/jvm (the plugin's plans, discovery,
//! packages, types, logs), tests/spark (the bridge's encoding and packages) and tests/connect
//! (tokens, sessions, the bridge from a client).

#[allow(dead_code)]
#[path = "../spark/helpers/mod.rs"]
mod spark_helpers;

use std::path::Path;

use spark_helpers::{Pytest, Repository};

#[test]
fn every_claim_holds_on_every_runtime() {
    let repository = Repository::locate();
    let jar = repository.build_jar();
    let c_range = repository.build_c_range();
    let writer = repository.generate_and_build_writer_variant();
    for runtimes in ["plugin,bridge", "connect"] {
        Pytest::new(&repository)
            .suite("tests/claims")
            .env("SPARKDS_CLAIMS_RUNTIMES", Path::new(runtimes))
            .env("SPARKDS_JVM_JAR", &jar)
            .env("SPARK_E2E_C_RANGE_LIBRARY", &c_range)
            .env("SPARK_E2E_WRITER_LIBRARY", &writer)
            .run();
    }
}
