//! Tests of the tables that `export!` builds and of the guard of every entry point (the layout of
//! the header's structs is tested with the declarations, in `spark-datasource-abi`).
//! They run in this crate's repository only: a data source's `cargo test` never runs them.

mod capabilities;
mod panics;
mod source;
