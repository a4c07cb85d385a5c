//! The conformance suite: sparkds's host drives a good library through every protocol, and
//! deliberately broken libraries (fixtures in plain C11 and one Rust cdylib), each of whose
//! broken rules (the book's rules chapter) must be reported with its exact message, without
//! crashing the host.

mod helpers;

mod broken_libraries;
mod command_line;
mod coverage;
mod crash_isolation;
mod filter_compatibility;
mod filter_pushdown;
mod good_library;
mod kit;
mod layout;
mod secret_options;
