//! `sbom.cdx.json`: a CycloneDX 1.5 software bill of materials (JSON) of the third-party code
//! that a package's libraries contain, which scanners (Dependency-Track, Grype, Trivy) read to
//! find the components with known vulnerabilities on a cluster.
//!
//! The metadata component is the data source; each package of the normal dependency graph is a
//! `library` component whose `bom-ref` is its package URL, `pkg:cargo/<name>@<version>`, with its
//! licence as an SPDX expression. The file has no `serialNumber` and no `timestamp`: both are
//! optional, and either would make the package differ from one build to the next.

use serde_json::{json, Value};

use super::thirdparty::{Component, ThirdParty};

/// The name of the SBOM inside a package, and the value of the manifest's `sbom`.
pub const SBOM_NAME: &str = "sbom.cdx.json";

/// The CycloneDX version written.
pub const SPEC_VERSION: &str = "1.5";

/// The SBOM of `third_party`, for the data source `name` at `version`: pretty JSON ending with a
/// newline.
pub fn render(third_party: &ThirdParty, name: &str, version: &str) -> String {
    let root = &third_party.root;
    let mut metadata_component = json!({
        "type": "library",
        "bom-ref": format!("{name}@{version}"),
        "name": name,
        "version": version,
        "purl": root.purl(),
    });
    if let Some(expression) = &root.license {
        metadata_component["licenses"] = json!([{ "expression": expression }]);
    }
    let components: Vec<Value> = third_party.components.iter().map(component).collect();
    let mut dependencies = vec![json!({
        "ref": format!("{name}@{version}"),
        "dependsOn": root.depends_on,
    })];
    dependencies.extend(third_party.components.iter().map(|c| {
        json!({
            "ref": c.bom_ref(),
            "dependsOn": c.depends_on,
        })
    }));
    let bom = json!({
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "version": 1,
        "metadata": {
            "tools": {
                "components": [{
                    "type": "application",
                    "name": "sparkds",
                    "version": env!("CARGO_PKG_VERSION"),
                }],
            },
            "component": metadata_component,
        },
        "components": components,
        "dependencies": dependencies,
    });
    // A `Value` of strings, numbers, arrays and objects always serializes.
    let mut text = serde_json::to_string_pretty(&bom).unwrap_or_default();
    text.push('\n');
    text
}

fn component(c: &Component) -> Value {
    let licenses = match (&c.license, &c.license_file) {
        (Some(expression), _) => json!([{ "expression": expression }]),
        // A licence file and no SPDX expression: CycloneDX names such a licence.
        (None, Some(file)) => json!([{ "license": { "name": format!("see {file}") } }]),
        (None, None) => json!([{ "expression": "NOASSERTION" }]),
    };
    let mut value = json!({
        "type": "library",
        "bom-ref": c.bom_ref(),
        "name": c.name,
        "version": c.version,
        "purl": c.purl(),
        "licenses": licenses,
    });
    if let Some(repository) = &c.repository {
        value["externalReferences"] = json!([{ "type": "vcs", "url": repository }]);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::notices::{check_notices, check_sbom};
    use crate::write::notices;

    fn component(name: &str, license: Option<&str>, license_file: Option<&str>) -> Component {
        Component {
            name: name.to_string(),
            version: "1.0.0".to_string(),
            license: license.map(str::to_string),
            license_file: license_file.map(str::to_string),
            repository: None,
            files: vec![("LICENSE".to_string(), format!("{name}: licence text\n"))],
            depends_on: Vec::new(),
        }
    }

    fn third_party() -> ThirdParty {
        ThirdParty {
            root: component("demo", Some("MIT"), None),
            components: vec![
                component("a", Some("MIT OR Apache-2.0"), None),
                component("b", None, Some("LICENSE.txt")),
                component("c", None, None),
            ],
        }
    }

    #[test]
    fn what_package_writes_passes_the_rules_of_verify() {
        let sbom = render(&third_party(), "demo", "0.1.0");
        let (problems, components) = check_sbom(sbom.as_bytes(), &["demo".to_string()]);
        assert_eq!(problems, Vec::<String>::new());
        assert_eq!(components.len(), 3);
        let text = notices::render(&third_party(), "demo", "0.1.0");
        assert_eq!(
            check_notices(text.as_bytes(), &components),
            Vec::<String>::new()
        );
        assert!(
            text.contains("\nb 1.0.0\nLicense: see LICENSE.txt\n"),
            "{text}"
        );
        assert!(text.contains("\nc 1.0.0\nLicense: NOASSERTION\n"), "{text}");
        assert!(text.contains("LICENSE:\n\na: licence text\n"), "{text}");
    }

    #[test]
    fn components_are_referenced_by_package_url() {
        let sbom: Value =
            serde_json::from_str(&render(&third_party(), "demo", "0.1.0")).expect("JSON");
        assert_eq!(sbom["specVersion"], "1.5");
        assert_eq!(sbom["metadata"]["component"]["name"], "demo");
        assert_eq!(sbom["components"][0]["bom-ref"], "pkg:cargo/a@1.0.0");
        assert_eq!(sbom["components"][0]["purl"], "pkg:cargo/a@1.0.0");
        assert_eq!(
            sbom["components"][0]["licenses"],
            json!([{ "expression": "MIT OR Apache-2.0" }])
        );
    }
}
