//! `THIRD-PARTY-NOTICES`: the licence notices of the third-party code that a package's libraries
//! contain, as plain text. Most licences of the crate ecosystem (MIT, BSD, Apache-2.0) require
//! their notice to accompany every copy of the compiled code, and a package is that copy on every
//! node of a cluster.
//!
//! The file lists every package of the normal dependency graph, sorted by name and version: a
//! heading line `<name> <version>` (which `sparkds verify` looks for, one per SBOM component),
//! its licence expression and repository, then the text of each licence file of its source.

use std::fmt::Write;

use super::thirdparty::{Component, ThirdParty};

/// The name of the notices inside a package, and the value of the manifest's `notices`.
pub const NOTICES_NAME: &str = "THIRD-PARTY-NOTICES";

const RULE: &str =
    "================================================================================";
const THIN_RULE: &str =
    "--------------------------------------------------------------------------------";

/// The notices of `third_party`, for the data source `name` at `version`.
pub fn render(third_party: &ThirdParty, name: &str, version: &str) -> String {
    let mut text = String::new();
    // `write!` into a `String` cannot fail.
    let _ = writeln!(text, "Third-party notices of {name} {version}\n");
    let _ = writeln!(
        text,
        "The libraries of this package contain code of the following {} packages, compiled in.\n\
         Each one is listed with its version, its licence (an SPDX expression), its repository\n\
         and the licence files of its source.\n",
        third_party.components.len()
    );
    for component in &third_party.components {
        let _ = writeln!(
            text,
            "  {} {} ({})",
            component.name,
            component.version,
            licence(component)
        );
    }
    for component in &third_party.components {
        let _ = writeln!(text, "\n{RULE}\n{} {}", component.name, component.version);
        let _ = writeln!(text, "License: {}", licence(component));
        if let Some(repository) = &component.repository {
            let _ = writeln!(text, "Repository: {repository}");
        }
        if component.files.is_empty() {
            let _ = writeln!(
                text,
                "\n(The source of this package holds no licence file; its licence is the expression above.)"
            );
        }
        for (file, body) in &component.files {
            let _ = writeln!(text, "{THIN_RULE}\n{file}:\n");
            text.push_str(body.trim_end());
            text.push('\n');
        }
    }
    text
}

/// The licence of a component as the notices and the SBOM state it.
pub(crate) fn licence(component: &Component) -> String {
    match (&component.license, &component.license_file) {
        (Some(expression), _) => expression.clone(),
        (None, Some(file)) => format!("see {file}"),
        // SPDX's word for "the package states no licence".
        (None, None) => "NOASSERTION".to_string(),
    }
}
