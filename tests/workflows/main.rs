//! Tests: workflows. The GitHub Actions workflows of `ci-templates/` and the template's caller
//! of them: rendered for every answer `sdk`, linted, calling what they should with the inputs
//! they declare, the copies GitHub calls identical to `ci-templates/`, every action a recorded
//! Node 24 release, and their build and package steps run on a library built here.

#[path = "../packaging/helpers/mod.rs"]
mod helpers;
mod workflows;
