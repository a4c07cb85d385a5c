//! Byte-range splits of text files, as Hadoop's `TextInputFormat` makes them: planning uses
//! only the sizes of the files, never their data, and each line is read by exactly one split.
//!
//! A split `[start, end)` reads the lines that begin in `(start', end]`, where `start'` is the
//! first line break at or after `start` (for `start` = 0, the beginning of the file). So a
//! split skips the line it starts in, which the previous split reads because that line crosses
//! (or begins exactly at) the previous split's end.

use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::ops::Range;

use serde::{Deserialize, Serialize};

/// A data file and its size in bytes, as listed on the driver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizedFile {
    /// The path, relative to the directory of the table.
    pub name: String,
    /// The size, from the file's metadata.
    pub size: u64,
}

/// The bytes `[start, end)` of one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    pub file: String,
    pub start: u64,
    pub end: u64,
}

/// Cuts `files` into splits of at most `split_bytes` bytes, then groups consecutive splits
/// into partitions of at most `split_bytes` bytes, so that small files share a task (as Spark's
/// `spark.sql.files.maxPartitionBytes` does). Empty files are left out.
pub fn plan(files: &[SizedFile], split_bytes: u64) -> Vec<Vec<Split>> {
    let split_bytes = split_bytes.max(1);
    let mut partitions: Vec<Vec<Split>> = Vec::new();
    let mut current: Vec<Split> = Vec::new();
    let mut current_bytes = 0;
    for file in files {
        let mut start = 0;
        while start < file.size {
            let end = file.size.min(start.saturating_add(split_bytes));
            if current_bytes + (end - start) > split_bytes && !current.is_empty() {
                partitions.push(std::mem::take(&mut current));
                current_bytes = 0;
            }
            current.push(Split {
                file: file.name.clone(),
                start,
                end,
            });
            current_bytes += end - start;
            start = end;
        }
    }
    if !current.is_empty() {
        partitions.push(current);
    }
    partitions
}

/// A line of a split: its text without the line break, and where it begins in the file.
#[cfg(test)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub position: u64,
}

/// The bytes read from a file at a time: large reads, few system calls.
const READ_BYTES: usize = 256 * 1024;

/// Reads the lines of a split from `input`, an open file, into a buffer of its own: each line
/// is found there with one SIMD search for its line break and checked as UTF-8 in place, so
/// that a line costs a pass to find and a pass to check, and nothing is copied before the
/// caller takes the line (a `BufReader`'s `read_until` copied every line once more, and its
/// search is not the `memchr` crate's).
pub struct SplitLines<R> {
    input: R,
    buffer: Vec<u8>,
    /// The bytes not yet returned: `buffer[start..filled]`.
    start: usize,
    filled: usize,
    /// How many bytes from `start` are known to hold no line break: a line longer than the
    /// buffer is searched once, not again after every read.
    searched: usize,
    /// Whether `input` has no more bytes.
    exhausted: bool,
    /// The bytes of `buffer` up to here are UTF-8, from a line's start on: checked a buffer at
    /// a time by [`next_line_utf8`](Self::next_line_utf8).
    valid: usize,
    /// The position in the file of `buffer[start]`: where the next line begins.
    position: u64,
    end: u64,
}

impl<R: Read + Seek> SplitLines<R> {
    /// The lines of `split` in `input`.
    ///
    /// # Errors
    /// A failure to seek or read.
    pub fn new(mut input: R, split: &Split) -> io::Result<Self> {
        let position = input.seek(SeekFrom::Start(split.start))?;
        let mut lines = SplitLines {
            input,
            buffer: vec![0; READ_BYTES],
            start: 0,
            filled: 0,
            searched: 0,
            exhausted: false,
            valid: 0,
            position,
            end: split.end,
        };
        if split.start > 0 {
            // Skip through the first line break at or after `start`: the line it ends belongs
            // to the previous split.
            lines.next_raw()?;
        }
        Ok(lines)
    }

    /// The next line, or `None` past the split's last line.
    ///
    /// # Errors
    /// A failure to read, or a line that is not UTF-8 (with its position).
    #[cfg(test)]
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut text = String::new();
        Ok(self
            .next_line_into(&mut text)?
            .map(|position| Line { text, position }))
    }

    /// Appends the text of the next line (without its line break) to `text`, and returns where
    /// the line begins, or `None` past the split's last line. A read allocates nothing per
    /// line.
    ///
    /// # Errors
    /// A failure to read, or a line that is not UTF-8 (with its position).
    pub fn next_line_into(&mut self, text: &mut String) -> io::Result<Option<u64>> {
        let Some((position, bytes)) = self.next_line_bytes()? else {
            return Ok(None);
        };
        text.push_str(utf8(bytes, position)?);
        Ok(Some(position))
    }

    /// The bytes of the next line (without its line break), not yet checked as UTF-8, and
    /// where it begins; `None` past the split's last line.
    ///
    /// # Errors
    /// A failure to read.
    pub fn next_line_bytes(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        // A line that begins exactly at `end` crosses it too: its first byte is at `end`.
        if self.position > self.end {
            return Ok(None);
        }
        let Some((position, range)) = self.next_raw()? else {
            return Ok(None);
        };
        let mut bytes = &self.buffer[range];
        while let [rest @ .., b'\n' | b'\r'] = bytes {
            bytes = rest;
        }
        Ok(Some((position, bytes)))
    }

    /// [`next_line_bytes`](Self::next_line_bytes), checked as UTF-8 with the rest of the
    /// buffer at once: a check of a whole buffer of ASCII costs a fraction of a check of each
    /// line.
    ///
    /// # Errors
    /// A failure to read, or a line that is not UTF-8 (with its position).
    pub fn next_line_utf8(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        if self.position > self.end {
            return Ok(None);
        }
        let Some((position, range)) = self.next_raw()? else {
            return Ok(None);
        };
        if range.end > self.valid {
            // From a line's start or the end of the last check: a character's first byte. The
            // line breaks in between are ASCII, so the check of the whole is the check of
            // each line; bytes past this line that fail it are checked again with their line.
            let from = self.valid.max(range.start);
            let valid = match std::str::from_utf8(&self.buffer[from..self.filled]) {
                Ok(_) => self.filled,
                Err(e) => from + e.valid_up_to(),
            };
            if valid < range.end {
                return Err(utf8(&self.buffer[range], position).unwrap_err());
            }
            self.valid = valid;
        }
        let mut bytes = &self.buffer[range];
        while let [rest @ .., b'\n' | b'\r'] = bytes {
            bytes = rest;
        }
        Ok(Some((position, bytes)))
    }

    /// The next line with its line break (none at the end of the input) as a range of
    /// `buffer`, and where it begins in the file; `None` at the end of the input.
    fn next_raw(&mut self) -> io::Result<Option<(u64, Range<usize>)>> {
        loop {
            let unsearched = &self.buffer[self.start + self.searched..self.filled];
            if let Some(at) = memchr::memchr(b'\n', unsearched) {
                let end = self.start + self.searched + at + 1;
                return Ok(Some(self.take(end)));
            }
            self.searched = self.filled - self.start;
            if self.exhausted {
                if self.start == self.filled {
                    return Ok(None);
                }
                return Ok(Some(self.take(self.filled)));
            }
            self.fill()?;
        }
    }

    /// Returns the bytes from `start` to `end` as the next line.
    fn take(&mut self, end: usize) -> (u64, Range<usize>) {
        let range = self.start..end;
        let position = self.position;
        self.position += range.len() as u64;
        self.start = end;
        self.searched = 0;
        (position, range)
    }

    /// Reads more of the input after the bytes not yet returned, which move to the front of
    /// the buffer; a line that fills the whole buffer doubles it.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.filled, 0);
            self.filled -= self.start;
            self.valid = self.valid.saturating_sub(self.start);
            self.start = 0;
        }
        if self.filled == self.buffer.len() {
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        let read = loop {
            match self.input.read(&mut self.buffer[self.filled..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other?,
            }
        };
        self.exhausted = read == 0;
        self.filled += read;
        Ok(())
    }
}

/// The text of the line `bytes` that begins at `position`, or the error of a line that is not
/// UTF-8.
///
/// # Errors
/// When `bytes` is not UTF-8.
pub fn utf8(bytes: &[u8], position: u64) -> io::Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the line at byte {position} is not UTF-8 text"),
        )
    })
}

/// The 1-based number of the line that begins at `position`: counts the line breaks before it.
/// Only called for an error message, so a split never reads the bytes before it otherwise.
///
/// # Errors
/// A failure to read.
pub fn line_number<R: BufRead + Seek>(mut input: R, position: u64) -> io::Result<u64> {
    input.seek(SeekFrom::Start(0))?;
    let mut breaks = 0;
    let mut remaining = position;
    while remaining > 0 {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            break;
        }
        let take = buffer
            .len()
            .min(usize::try_from(remaining).unwrap_or(usize::MAX));
        breaks += buffer[..take].iter().filter(|&&b| b == b'\n').count() as u64;
        input.consume(take);
        remaining -= take as u64;
    }
    Ok(breaks + 1)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn file(name: &str, size: u64) -> SizedFile {
        SizedFile {
            name: name.to_string(),
            size,
        }
    }

    fn bounds(partitions: &[Vec<Split>]) -> Vec<Vec<(&str, u64, u64)>> {
        partitions
            .iter()
            .map(|p| {
                p.iter()
                    .map(|s| (s.file.as_str(), s.start, s.end))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_large_file_is_cut_into_splits_of_at_most_split_bytes() {
        let plan = plan(&[file("a", 25)], 10);
        assert_eq!(
            bounds(&plan),
            vec![vec![("a", 0, 10)], vec![("a", 10, 20)], vec![("a", 20, 25)]]
        );
    }

    #[test]
    fn small_files_share_a_partition_and_empty_files_are_left_out() {
        let plan = plan(
            &[file("a", 4), file("b", 0), file("c", 5), file("d", 3)],
            10,
        );
        assert_eq!(
            bounds(&plan),
            vec![vec![("a", 0, 4), ("c", 0, 5)], vec![("d", 0, 3)]]
        );
    }

    /// The lines of `text` read by splits of `size` bytes, split by split.
    fn read_in_splits(text: &str, size: u64) -> Vec<Vec<(u64, String)>> {
        let total = text.len() as u64;
        plan(&[file("f", total)], size)
            .into_iter()
            .flatten()
            .map(|split| {
                let mut lines =
                    SplitLines::new(Cursor::new(text.as_bytes()), &split).expect("in memory");
                let mut out = Vec::new();
                while let Some(line) = lines.next_line().expect("in memory") {
                    out.push((line.position, line.text));
                }
                out
            })
            .collect()
    }

    #[test]
    fn every_line_is_read_by_exactly_one_split_whatever_the_split_size() {
        let text = "alpha\nbe\n\ngamma delta\r\nepsilon\nz";
        let whole: Vec<(u64, String)> = read_in_splits(text, 1000).concat();
        assert_eq!(whole.len(), 6);
        for size in 1..=text.len() as u64 {
            assert_eq!(
                read_in_splits(text, size).concat(),
                whole,
                "split size {size}"
            );
        }
    }

    #[test]
    fn a_split_reads_the_line_that_crosses_its_end_and_skips_the_one_it_starts_in() {
        // Lines begin at 0, 4, 8. The split [0, 4) reads the line that begins exactly at its
        // end, 4; the split [4, 8) starts after the line break at 7, so it reads only line 8.
        let splits = read_in_splits("aaa\nbbb\nccc\n", 4);
        let positions: Vec<Vec<u64>> = splits
            .iter()
            .map(|s| s.iter().map(|(p, _)| *p).collect())
            .collect();
        assert_eq!(positions, vec![vec![0, 4], vec![8], vec![]]);
    }

    #[test]
    fn line_numbers_count_the_line_breaks_before_a_position() -> io::Result<()> {
        let text = "a\nbb\nccc\n";
        assert_eq!(line_number(Cursor::new(text.as_bytes()), 0)?, 1);
        assert_eq!(line_number(Cursor::new(text.as_bytes()), 5)?, 3);
        Ok(())
    }
}
