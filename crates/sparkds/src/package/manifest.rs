//! `spark-native-datasource.json`, the manifest of a `.sparkpkg` (specification, section
//! "Packages"): `{ "abiVersion": 1, "dataSources": [...], "libraries": { "<platform>": "<path>" } }`.

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
