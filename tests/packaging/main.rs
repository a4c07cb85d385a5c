//! Tests: packaging. `sparkds package` and `sparkds verify` on libraries compiled on this
//! machine and on packages crafted to break one rule each, and the GitHub Actions workflows of
//! the template and of `ci-templates/` (rendered, linted, and kept from drifting apart), and the
//! crates as `cargo package` would publish them.

mod crates;
mod helpers;
mod package_and_verify;
mod rejected_packages;
mod workflows;
