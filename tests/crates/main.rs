//! Tests: crates. The crates of `crates/` as `cargo package` would publish them (metadata,
//! files, versions, the order of publication), and the dependency policy of `deny.toml`
//! (`cargo deny`, offline) here and in a generated project.

#[path = "../packaging/helpers/mod.rs"]
mod helpers;

mod crates;
mod deny;
mod graph;
