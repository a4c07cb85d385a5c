//! Runs the built library exactly as Spark does: `sparkds` loads it with dlopen and drives the
//! whole protocol of each declared capability, checking every rule of the interface on each
//! call. The snapshots (`cargo insta review` after a change) show what Spark would get.

mod batch_read;
mod filters;
mod write;

#[test]
fn declares_exactly_the_capabilities_of_its_export_line() -> sparkds::Result<()> {
    sparkds::testing::check_export_line(sparkds::testing::library()?)
}
