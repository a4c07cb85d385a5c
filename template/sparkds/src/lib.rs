//! sparkds: drives a native data source library the way Spark does, and checks every rule of
//! the interface on the way. See the crate's Cargo.toml for what it is for.

pub mod package;
pub mod verify;
