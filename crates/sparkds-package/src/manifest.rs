//! `spark-native-datasource.json`, the manifest of a `.sparkpkg` (specification, section
//! "Packages"): `{ "abiVersion": 1, "dataSources": [...], "libraries": { "<platform>": "<path>" } }`,
//! and two fields of this project's, `notices` and `sbom`, the paths of the third-party notices
//! and of the CycloneDX SBOM inside the package. Readers ignore fields they do not know (serde
//! does by default, the specification names only the three), so a package with the two fields
//! loads wherever one without them does.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The name of the manifest inside a package.
pub const MANIFEST_NAME: &str = "spark-native-datasource.json";

/// The interface version that this tool writes and checks, `SPARK_DS_ABI_VERSION`.
pub const ABI_VERSION: i64 = 1;

/// The manifest of a package.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// `SPARK_DS_ABI_VERSION` of the libraries.
    pub abi_version: i64,
    /// The data sources that the libraries implement.
    pub data_sources: Vec<String>,
    /// Platform key to the path of its library inside the package. A `BTreeMap` so the manifest
    /// is written in one order and packages are reproducible.
    pub libraries: BTreeMap<String, String>,
    /// The path of the third-party licence notices inside the package, if it carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notices: Option<String>,
    /// The path of the CycloneDX JSON SBOM inside the package, if it carries one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sbom: Option<String>,
}

impl Manifest {
    /// Parses a manifest.
    ///
    /// # Errors
    ///
    /// The JSON error, which names the missing or mistyped field.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The manifest as written into a package: pretty JSON ending with a newline.
    ///
    /// # Errors
    ///
    /// None in practice: the manifest only holds strings and integers.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let mut json = serde_json::to_string_pretty(self)?;
        json.push('\n');
        Ok(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_without_notices_and_sbom_reads_and_writes_as_before() {
        let json = r#"{"abiVersion":1,"dataSources":["demo"],"libraries":{"linux-x86_64":"linux-x86_64/libspark_datasource_demo.so"},"futureField":true}"#;
        let manifest = Manifest::parse(json.as_bytes()).expect("unknown fields are ignored");
        assert_eq!(manifest.notices, None);
        assert_eq!(manifest.sbom, None);
        let written = manifest.to_json().expect("serializes");
        assert!(!written.contains("notices") && !written.contains("sbom"));
    }
}
