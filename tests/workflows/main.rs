//! Tests: workflows. The GitHub Actions workflows of `.github/workflows/` (the reusable ones,
//! the release and the contributors' tests) and the template's caller of them: rendered for
//! every answer `sdk` by cargo-generate, linted, calling what they should with the inputs they
//! declare, at the commit the template pins (which git checks), every action a recorded Node 24
//! release, the supply chain of what they publish, and their build and package steps run on a
//! library built here.

mod contributors;
#[path = "../packaging/helpers/mod.rs"]
mod helpers;
mod pin;
mod supply_chain;
mod workflows;
