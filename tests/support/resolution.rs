//! The features that cargo resolves for each crate, read from `cargo tree -f "{p}|{f}"`: two
//! resolutions that give a shared crate different features build it, and every crate above it
//! (arrow, for the crates below arrow), twice.

use std::collections::BTreeMap;

/// Each crate of a `cargo tree --prefix none -f "{p}|{f}"` output (`name vX.Y.Z`) and the
/// feature sets it resolves with (one, unless a crate is built twice). The crates that say where
/// they are (path crates) are left out: they are built apart anyway.
pub fn resolved_features(tree: &str) -> BTreeMap<String, Vec<String>> {
    let mut resolved = BTreeMap::<String, Vec<String>>::new();
    for line in tree.lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((crate_, features)) = line.split_once('|') else {
            continue;
        };
        if crate_.contains(" (/") || crate_.contains(" (\\") || crate_.contains(":\\") {
            continue;
        }
        let name = crate_.trim_end_matches(" (proc-macro)").to_string();
        let entry = resolved.entry(name).or_default();
        if !entry.iter().any(|f| f == features) {
            entry.push(features.to_string());
            entry.sort();
        }
    }
    resolved
}

/// The crates that both resolutions hold with different features, one line each.
pub fn resolved_apart(
    (first_name, first): (&str, &BTreeMap<String, Vec<String>>),
    (second_name, second): (&str, &BTreeMap<String, Vec<String>>),
) -> Vec<String> {
    first
        .iter()
        .filter_map(|(name, features)| {
            let other = second.get(name)?;
            (other != features)
                .then(|| format!("{name}: {first_name} {features:?}, {second_name} {other:?}"))
        })
        .collect()
}
