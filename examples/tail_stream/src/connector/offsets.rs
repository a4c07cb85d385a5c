//! Offsets of the stream, with no Spark in sight: for each file, the byte position after the
//! last complete line reached. Pure functions over readers, so the rules can be tested alone.

use std::collections::BTreeMap;
use std::io::{self, Read};

use serde::{Deserialize, Serialize};

/// A position in the stream: file name → byte position after its last complete line read.
/// A file that is not in the map is at position 0. Serialized as a JSON object, so Spark's
/// checkpoint shows `{"app-1.log":2048}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Offset {
    pub files: BTreeMap<String, u64>,
}

impl Offset {
    /// The position of `file`: 0 for a file the stream has not reached.
    pub fn position(&self, file: &str) -> u64 {
        self.files.get(file).copied().unwrap_or(0)
    }
}

/// How far the complete lines of `input` go, `input` being a file positioned at `from`: the
/// position after its last line break, or after the `budget`-th line break when a budget is
/// given (the budget is decreased by the lines counted). A last line without its line break is
/// still being written: it is left for a later micro-batch.
///
/// # Errors
/// A failure to read.
pub fn complete_lines_end<R: Read>(
    mut input: R,
    from: u64,
    mut budget: Option<&mut u64>,
) -> io::Result<u64> {
    let mut end = from;
    let mut position = from;
    let mut buffer = [0_u8; 64 * 1024];
    loop {
        if budget.as_deref() == Some(&0) {
            return Ok(end);
        }
        let read = input.read(&mut buffer)?;
        if read == 0 {
            return Ok(end);
        }
        for (i, byte) in buffer[..read].iter().enumerate() {
            if *byte != b'\n' {
                continue;
            }
            end = position + i as u64 + 1;
            if let Some(budget) = budget.as_deref_mut() {
                *budget -= 1;
                if *budget == 0 {
                    return Ok(end);
                }
            }
        }
        position += read as u64;
    }
}

/// What one file has to read between two offsets: `None` when nothing.
///
/// # Errors
/// An end before its start: offsets only grow, for the same file.
pub fn range(file: &str, start: &Offset, end: &Offset) -> Result<Option<(u64, u64)>, String> {
    let (from, to) = (start.position(file), end.position(file));
    if to < from {
        return Err(format!(
            "the end offset of `{file}`, byte {to}, is before its start offset, byte {from}: \
             the offsets are not of this stream, or the checkpoint is damaged"
        ));
    }
    Ok((to > from).then_some((from, to)))
}

/// The files that `committed` read to their end and that may be deleted: every file but the
/// last one by name, which may still be appended to (log files rotate to new names).
pub fn consumed<'a>(committed: &'a Offset, sizes: &'a BTreeMap<String, u64>) -> Vec<&'a str> {
    let newest = sizes.keys().next_back();
    sizes
        .iter()
        .filter(|(name, size)| Some(*name) != newest && committed.position(name) == **size)
        .filter(|(_, size)| **size > 0)
        .map(|(name, _)| name.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn offset(entries: &[(&str, u64)]) -> Offset {
        Offset {
            files: entries.iter().map(|(f, p)| (f.to_string(), *p)).collect(),
        }
    }

    #[test]
    fn an_offset_stops_after_the_last_complete_line() -> io::Result<()> {
        let text = b"one\ntwo\nthr";
        assert_eq!(complete_lines_end(Cursor::new(&text[..]), 0, None)?, 8);
        // From position 4, the reader is positioned there: only "two\nthr" remains.
        assert_eq!(complete_lines_end(Cursor::new(&text[4..]), 4, None)?, 8);
        // Nothing complete: the offset stays where it was.
        assert_eq!(complete_lines_end(Cursor::new(&text[8..]), 8, None)?, 8);
        Ok(())
    }

    #[test]
    fn a_budget_of_lines_bounds_how_far_an_offset_goes() -> io::Result<()> {
        let text = b"a\nb\nc\nd\n";
        let mut budget = 3;
        assert_eq!(
            complete_lines_end(Cursor::new(&text[..]), 0, Some(&mut budget))?,
            6
        );
        assert_eq!(budget, 0);
        let mut budget = 10;
        assert_eq!(
            complete_lines_end(Cursor::new(&text[2..]), 2, Some(&mut budget))?,
            8
        );
        assert_eq!(budget, 7);
        Ok(())
    }

    #[test]
    fn a_file_reads_what_lies_between_its_two_positions() {
        let start = offset(&[("a", 4)]);
        let end = offset(&[("a", 10), ("b", 3)]);
        assert_eq!(range("a", &start, &end), Ok(Some((4, 10))));
        assert_eq!(range("b", &start, &end), Ok(Some((0, 3))));
        assert_eq!(range("c", &start, &end), Ok(None));
        let error = range("a", &end, &start).unwrap_err();
        assert!(
            error.starts_with("the end offset of `a`, byte 4, is before"),
            "{error}"
        );
    }

    #[test]
    fn offsets_serialize_as_a_map_of_files_to_positions() -> serde_json::Result<()> {
        let json = serde_json::to_string(&offset(&[("b.log", 7), ("a.log", 2)]))?;
        assert_eq!(json, r#"{"a.log":2,"b.log":7}"#);
        assert_eq!(serde_json::from_str::<Offset>("{}")?, Offset::default());
        Ok(())
    }

    #[test]
    fn only_files_read_to_their_end_and_no_longer_written_are_consumed() {
        let committed = offset(&[("1.log", 10), ("2.log", 5), ("3.log", 8)]);
        let sizes: BTreeMap<String, u64> = [("1.log", 10), ("2.log", 9), ("3.log", 8)]
            .into_iter()
            .map(|(f, s)| (f.to_string(), s))
            .collect();
        // 2.log has unread lines; 3.log is the newest, so it may still grow.
        assert_eq!(consumed(&committed, &sizes), vec!["1.log"]);
    }
}
