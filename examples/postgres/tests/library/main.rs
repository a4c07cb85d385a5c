//! Runs the built library exactly as Spark does, against a PostgreSQL server of the tests' own
//! (`server`): `sparkds` loads it with dlopen and drives the whole protocol of each declared
//! capability, checking every rule of the interface on each call. A few tests drive the
//! connector's Rust API instead, where they need to act in the middle of a task (a server that
//! restarts during a read, a task attempt that dies before its retry).

mod failures;
mod helpers;
mod read;
mod server;
mod types;
mod write;

use helpers::{exported, library};

#[test]
fn declares_exactly_the_capabilities_of_its_export_line() -> sparkds::Result<()> {
    let capabilities = library()?.capabilities(helpers::NO_OPTIONS)?;
    // The pushdowns are functions of the reader, not capabilities of the library.
    let mut expected: Vec<String> = exported()
        .iter()
        .filter(|name| {
            !matches!(
                name.as_str(),
                "push_limit" | "prune_columns" | "push_filters"
            )
        })
        .map(|name| format!("SPARK_DS_{}", name.to_uppercase()))
        .collect();
    expected.sort();
    let mut declared = capabilities.names();
    declared.sort();
    assert_eq!(declared, expected);
    assert!(library()?.pushes_filters());
    Ok(())
}
