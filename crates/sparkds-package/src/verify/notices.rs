//! The rules of a package's third-party notices and SBOM, shared by `verify` (on the files in a
//! package) and `package` (on the files given with `--notices` and `--sbom`): the SBOM is
//! CycloneDX JSON with one component per package, each with a name, a version and a licence; the
//! notices are text that names every component of the SBOM as `<name> <version>`.

use std::collections::BTreeSet;

use serde_json::Value;

/// The CycloneDX versions whose JSON this reads: their `components` and `licenses` agree.
const SPEC_VERSIONS: [&str; 3] = ["1.4", "1.5", "1.6"];

/// A component of an SBOM: its name and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SbomComponent {
    /// The component's `name`.
    pub name: String,
    /// The component's `version`.
    pub version: String,
}

/// Checks an SBOM: the problems found, each a sentence that says what to fix, and the
/// components that have a name and a version.
pub fn check_sbom(bytes: &[u8], data_sources: &[String]) -> (Vec<String>, Vec<SbomComponent>) {
    let mut problems = Vec::new();
    let bom: Value = match serde_json::from_slice(bytes) {
        Ok(bom) => bom,
        Err(e) => {
            return (
                vec![format!("the SBOM is not JSON ({e}): it must be a CycloneDX JSON document, as `sparkds package` writes it")],
                Vec::new(),
            )
        }
    };
    if bom.get("bomFormat").and_then(Value::as_str) != Some("CycloneDX") {
        problems.push(
            "`bomFormat` is not `CycloneDX`: the SBOM must be a CycloneDX JSON document"
                .to_string(),
        );
    }
    let spec_version = bom.get("specVersion").and_then(Value::as_str);
    if !spec_version.is_some_and(|v| SPEC_VERSIONS.contains(&v)) {
        problems.push(format!(
            "`specVersion` is {} but must be one of {}",
            spec_version.map_or("missing".to_string(), |v| format!("`{v}`")),
            SPEC_VERSIONS.join(", ")
        ));
    }
    let subject = bom
        .pointer("/metadata/component/name")
        .and_then(Value::as_str);
    if !subject.is_some_and(|s| data_sources.iter().any(|d| d == s)) {
        problems.push(format!(
            "`metadata.component` must be the data source, named {}: it is what the SBOM describes",
            data_sources
                .iter()
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    let Some(entries) = bom.get("components").and_then(Value::as_array) else {
        problems.push("`components` is missing: list one component per third-party package (an empty list when there is none)".to_string());
        return (problems, Vec::new());
    };
    let mut components = Vec::new();
    let mut refs = BTreeSet::new();
    for (index, entry) in entries.iter().enumerate() {
        let text = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
        };
        let (Some(name), Some(version)) = (text("name"), text("version")) else {
            problems.push(format!(
                "component {index} of `components` has no `name` and `version`: each component is one package, named with its version"
            ));
            continue;
        };
        if let Some(bom_ref) = text("bom-ref") {
            if !refs.insert(bom_ref.to_string()) {
                problems.push(format!(
                    "component `{name} {version}` repeats the `bom-ref` `{bom_ref}`: each component is listed once"
                ));
            }
        }
        if !has_licence(entry) {
            problems.push(format!(
                "component `{name} {version}` has no licence: give it `licenses` with an SPDX `expression`, or a `license` with an `id` or a `name`"
            ));
        }
        components.push(SbomComponent {
            name: name.to_string(),
            version: version.to_string(),
        });
    }
    (problems, components)
}

/// Whether a CycloneDX component states a licence: a non-empty `licenses` array whose every
/// entry is an `expression` or a `license` with an `id` or a `name`.
fn has_licence(component: &Value) -> bool {
    let non_empty = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    };
    let Some(licenses) = component.get("licenses").and_then(Value::as_array) else {
        return false;
    };
    !licenses.is_empty()
        && licenses.iter().all(|l| {
            non_empty(l.get("expression"))
                || non_empty(l.pointer("/license/id"))
                || non_empty(l.pointer("/license/name"))
        })
}

/// Checks the notices against the components of the SBOM: the problems found.
pub fn check_notices(bytes: &[u8], components: &[SbomComponent]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return vec!["the notices are not UTF-8 text".to_string()];
    };
    if text.trim().is_empty() {
        return vec!["the notices are empty".to_string()];
    }
    let missing: Vec<String> = components
        .iter()
        .filter(|c| !names(text, c))
        .map(|c| format!("`{} {}`", c.name, c.version))
        .collect();
    if missing.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "the notices do not name {} of the SBOM: give each component of the SBOM its notice, headed `<name> <version>`",
            missing.join(", ")
        )]
    }
}

/// Whether a line of `text` names the component: `<name> <version>` (or `v<version>`), or
/// `<name>@<version>`, as words.
fn names(text: &str, component: &SbomComponent) -> bool {
    let (name, version) = (component.name.as_str(), component.version.as_str());
    let at = format!("{name}@{version}");
    let v_version = format!("v{version}");
    text.lines().any(|line| {
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '(' | ')' | '"')))
            .collect();
        words.contains(&at.as_str())
            || words
                .windows(2)
                .any(|w| w[0] == name && (w[1] == version || w[1] == v_version))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sbom(components: serde_json::Value) -> Vec<u8> {
        serde_json::json!({
            "bomFormat": "CycloneDX",
            "specVersion": "1.5",
            "version": 1,
            "metadata": { "component": { "type": "library", "name": "demo", "version": "0.1.0" } },
            "components": components,
        })
        .to_string()
        .into_bytes()
    }

    fn demo() -> Vec<String> {
        vec!["demo".to_string()]
    }

    #[test]
    fn an_sbom_with_a_licence_for_each_component_passes() {
        let (problems, components) = check_sbom(
            &sbom(serde_json::json!([
                { "bom-ref": "pkg:cargo/a@1.0.0", "name": "a", "version": "1.0.0", "licenses": [{ "expression": "MIT OR Apache-2.0" }] },
                { "name": "b", "version": "2.0.0", "licenses": [{ "license": { "id": "MIT" } }] },
            ])),
            &demo(),
        );
        assert_eq!(problems, Vec::<String>::new());
        assert_eq!(components.len(), 2);
    }

    #[test]
    fn each_broken_rule_of_an_sbom_is_reported() {
        let bytes = serde_json::json!({
            "bomFormat": "SPDX",
            "specVersion": "2.3",
            "components": [
                { "bom-ref": "x", "name": "a", "version": "1.0.0" },
                { "bom-ref": "x", "name": "b", "version": "1.0.0", "licenses": [{ "expression": "MIT" }] },
                { "name": "c" },
            ],
        })
        .to_string();
        let (problems, components) = check_sbom(bytes.as_bytes(), &demo());
        assert_eq!(
            problems,
            [
                "`bomFormat` is not `CycloneDX`: the SBOM must be a CycloneDX JSON document",
                "`specVersion` is `2.3` but must be one of 1.4, 1.5, 1.6",
                "`metadata.component` must be the data source, named `demo`: it is what the SBOM describes",
                "component `a 1.0.0` has no licence: give it `licenses` with an SPDX `expression`, or a `license` with an `id` or a `name`",
                "component `b 1.0.0` repeats the `bom-ref` `x`: each component is listed once",
                "component 2 of `components` has no `name` and `version`: each component is one package, named with its version",
            ]
        );
        assert_eq!(components.len(), 2);
    }

    #[test]
    fn the_notices_must_name_every_component_as_a_word() {
        let components = [
            SbomComponent {
                name: "serde".to_string(),
                version: "1.0.1".to_string(),
            },
            SbomComponent {
                name: "zlib".to_string(),
                version: "1.3".to_string(),
            },
        ];
        let notices = "serde 1.0.10\nserde_json 1.0.1\nzlib@1.3\n";
        assert_eq!(
            check_notices(notices.as_bytes(), &components),
            ["the notices do not name `serde 1.0.1` of the SBOM: give each component of the SBOM its notice, headed `<name> <version>`"]
        );
        assert!(check_notices(b"  serde 1.0.1 (MIT)\nzlib v1.3:\n", &components).is_empty());
    }
}
