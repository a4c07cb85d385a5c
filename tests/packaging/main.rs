//! Tests: packaging. `sparkds package` and `sparkds verify` on libraries compiled on this
//! machine and on packages crafted to break one rule each, and the GitHub Actions workflows of
//! `ci-templates/` and the template's caller of them (rendered for every answer `sdk`, linted,
//! calling what they should with the inputs they declare, the copies GitHub calls identical to
//! `ci-templates/`, every action a recorded Node 24 release), the crates as `cargo package` would publish them, and the
//! dependency policy of `deny.toml` (`cargo deny`, offline) here and in a generated project.

mod crates;
mod deny;
mod file_names;
mod helpers;
mod hostile_packages;
mod package_and_verify;
mod rejected_packages;
mod workflows;
