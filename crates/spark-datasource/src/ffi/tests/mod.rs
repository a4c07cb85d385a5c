//! Tests of the C side against the header itself, and of the tables that `export!` builds.
//! They run in this crate's repository only: a data source's `cargo test` never runs them.

mod capabilities;
mod layout;
mod panics;
mod source;
