//! Runs the built library exactly as Spark does: `sparkds` loads it with dlopen and drives the
//! whole protocol of each declared capability, checking every rule of the interface on each
//! call. The snapshots (`cargo insta review` after a change) show what Spark would get.

mod helpers;
#[cfg(feature = "micro_batch_read")]
mod stream_read;
#[cfg(any(feature = "batch_write", feature = "streaming_write"))]
mod write;

use helpers::library;

#[test]
fn declares_exactly_the_capabilities_of_its_features() -> sparkds::Result<()> {
    let capabilities = library()?.capabilities(helpers::NO_OPTIONS)?;
    let declared = capabilities.names();
    let expected: Vec<&str> = [
        ("SPARK_DS_BATCH_READ", cfg!(feature = "batch_read")),
        (
            "SPARK_DS_MICRO_BATCH_READ",
            cfg!(feature = "micro_batch_read"),
        ),
        ("SPARK_DS_BATCH_WRITE", cfg!(feature = "batch_write")),
        (
            "SPARK_DS_STREAMING_WRITE",
            cfg!(feature = "streaming_write"),
        ),
        ("SPARK_DS_TRUNCATE", cfg!(feature = "truncate")),
    ]
    .into_iter()
    .filter_map(|(name, enabled)| enabled.then_some(name))
    .collect();
    assert_eq!(declared, expected);
    Ok(())
}
