//! Runs the built library exactly as Spark does, against a PostgreSQL server of the tests' own
//! (`server`): `sparkds` loads it with dlopen and drives the whole protocol of each declared
//! capability, checking every rule of the interface on each call. A few tests drive the
//! connector's Rust API instead, where they need to act in the middle of a task (a server that
//! restarts during a read, a task attempt that dies before its retry).

mod cdc;
mod certificates;
mod client_tls;
mod conformance;
mod failures;
mod helpers;
mod integrity;
mod pages;
mod read;
mod server;
mod tls;
mod types;
mod write;

use helpers::library;

#[test]
fn declares_exactly_the_capabilities_of_its_export_line() -> sparkds::Result<()> {
    sparkds::testing::check_export_line(library()?)?;
    // The pushdowns are functions of the reader, not capabilities of the library.
    assert!(library()?.pushes_filters());
    Ok(())
}
