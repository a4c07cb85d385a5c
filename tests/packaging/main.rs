//! Tests: packaging. `sparkds package` and `sparkds verify` on libraries compiled on this
//! machine, on packages crafted to break one rule each, and on hostile archives, and the
//! bridge's copy of the library file name rule against the Rust one. (The workflows that build
//! packages are the `workflows` group's; the crates, the `crates` group's.)

mod file_names;
mod helpers;
mod hostile_packages;
mod package_and_verify;
mod rejected_packages;
