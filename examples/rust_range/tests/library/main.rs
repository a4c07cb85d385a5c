//! Runs the built library exactly as Spark does: `sparkds` loads it with dlopen and drives the
//! whole protocol of each declared capability, checking every rule of the interface on each
//! call. The snapshots (`cargo insta review` after a change) show what Spark would get.

mod batch_read;
mod helpers;

use helpers::{exported, library};

#[test]
fn declares_exactly_the_capabilities_of_its_export_line() -> sparkds::Result<()> {
    let capabilities = library()?.capabilities(helpers::NO_OPTIONS)?;
    // The pushdowns are functions of the reader, not capabilities of the library.
    let mut expected: Vec<String> = exported()
        .iter()
        .filter(|name| !matches!(name.as_str(), "push_limit" | "prune_columns"))
        .map(|name| format!("SPARK_DS_{}", name.to_uppercase()))
        .collect();
    expected.sort();
    let mut declared = capabilities.names();
    declared.sort();
    assert_eq!(declared, expected);
    Ok(())
}
