//! How long each group took, which orders the next run: the longest first, so that the workers
//! end close together. Each run records its groups' times in `target/suite/times.tsv`, over
//! those of earlier runs (a run of some groups keeps the others'); a checkout that has none
//! takes `tests/suite/times.tsv`, the times of a cold run of the whole suite on two cores,
//! recorded on purpose when the groups change. A group of neither starts first: nothing says
//! it is short.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::Outcome;

/// The times of a checkout without a run of its own, kept in the repository.
fn recorded_in_repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("suite/times.tsv")
}

/// The times of this checkout's runs.
fn recorded_by_runs() -> PathBuf {
    crate::suite_directory().join("times.tsv")
}

/// Seconds by group: this checkout's runs', else the repository's.
pub fn load() -> HashMap<String, f64> {
    read(&recorded_by_runs())
        .or_else(|| read(&recorded_in_repository()))
        .unwrap_or_default()
}

/// Records the times of `outcomes` over the earlier ones (a failed group's too: its time is
/// still what it costs).
pub fn record(outcomes: &[Outcome]) {
    let path = recorded_by_runs();
    let mut times = read(&path)
        .or_else(|| read(&recorded_in_repository()))
        .unwrap_or_default();
    for outcome in outcomes {
        times.insert(outcome.name.clone(), outcome.seconds);
    }
    if let Err(e) = std::fs::write(&path, format(&times)) {
        eprintln!(
            "suite: cannot record the groups' times in {}: {e}",
            path.display()
        );
    }
}

/// The order in which `names` start: unknown ones first, then the longest first.
pub fn order(times: &HashMap<String, f64>, name: &str) -> (bool, std::cmp::Reverse<u64>) {
    match times.get(name) {
        None => (false, std::cmp::Reverse(u64::MAX)),
        // Tenths of a second: enough to order, and a total order.
        Some(seconds) => (true, std::cmp::Reverse((seconds * 10.0) as u64)),
    }
}

/// `name<TAB>seconds` lines; `#` starts a comment.
fn read(path: &Path) -> Option<HashMap<String, f64>> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(
        text.lines()
            .filter(|line| !line.trim_start().starts_with('#'))
            .filter_map(|line| {
                let (name, seconds) = line.split_once('\t')?;
                Some((name.trim().to_string(), seconds.trim().parse().ok()?))
            })
            .collect(),
    )
}

fn format(times: &HashMap<String, f64>) -> String {
    let mut rows: Vec<(&String, &f64)> = times.iter().collect();
    rows.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
    let mut text = String::from("# group\tseconds, as the last run of each group took\n");
    for (name, seconds) in rows {
        text.push_str(&format!("{name}\t{seconds:.1}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_groups_start_first_then_the_longest() {
        let times: HashMap<String, f64> =
            [("book".to_string(), 439.0), ("crates".to_string(), 3.5)].into();
        let mut names = vec!["crates", "new", "book"];
        names.sort_by_key(|name| order(&times, name));
        assert_eq!(names, ["new", "book", "crates"]);
    }

    #[test]
    fn times_read_back_as_written() {
        let times: HashMap<String, f64> =
            [("a/b".to_string(), 12.5), ("c".to_string(), 1.0)].into();
        let dir = std::env::temp_dir().join(format!("suite-times-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory");
        let path = dir.join("times.tsv");
        std::fs::write(&path, format(&times)).expect("written");
        assert_eq!(read(&path), Some(times));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
