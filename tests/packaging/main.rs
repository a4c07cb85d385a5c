//! Tests: packaging. `sparkds package` and `sparkds verify` on libraries compiled on this
//! machine, on packages crafted to break one rule each, and on hostile archives. (The
//! workflows that build packages are the `workflows` group's; the crates, the `crates` group's.)

mod helpers;
mod hostile_packages;
mod package_and_verify;
mod rejected_packages;
