//! The two text formats, record by record, with no I/O: CSV records split into cells as
//! Spark's CSV reader splits them (and written back), JSON lines parsed into objects.
//!
//! One line is one record in both formats, which lets a read start in the middle of a file
//! (see `splits`); with the CSV option `multiLine`, a quoted value may span lines, and each
//! file is read whole by one task.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::flat_json::{self, Member};
use super::values::{self, Cell, ValueOptions};
use super::words;

/// The format of the files, the option `format`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// Delimited text.
    Csv(CsvSyntax),
    /// One JSON object per line.
    JsonLines,
}

/// How CSV text is split, under Spark's option names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvSyntax {
    /// `sep` (or `delimiter`): default `,`.
    pub delimiter: char,
    /// `quote`: default `"`; `None` (the option set to an empty string) turns quoting off.
    pub quote: Option<char>,
    /// `escape`: the character before a quote inside a quoted value; default `\`.
    pub escape: char,
    /// `comment`: lines that begin with it are skipped; off by default.
    pub comment: Option<char>,
    /// `header`: whether the first line of every file names the columns.
    pub header: bool,
    /// `ignoreLeadingWhiteSpace`, `ignoreTrailingWhiteSpace`: whether the spaces and tabs
    /// around a value are dropped (off by default when reading, as in Spark).
    pub trim_leading: bool,
    pub trim_trailing: bool,
}

impl Default for CsvSyntax {
    fn default() -> Self {
        CsvSyntax {
            delimiter: ',',
            quote: Some('"'),
            escape: '\\',
            comment: None,
            header: true,
            trim_leading: false,
            trim_trailing: false,
        }
    }
}

impl Format {
    /// The extension of the data files: a directory's other files are not read.
    pub fn extension(&self) -> &'static str {
        match self {
            Format::Csv(_) => "csv",
            Format::JsonLines => "jsonl",
        }
    }

    /// Whether the first line of every file names the columns instead of holding a row.
    pub fn has_header(&self) -> bool {
        matches!(self, Format::Csv(CsvSyntax { header: true, .. }))
    }

    /// Whether a line is skipped: blank (as Spark skips them) or a comment.
    pub fn skips(&self, line: &str) -> bool {
        self.skips_utf8(line.as_bytes())
    }

    /// [`skips`](Self::skips) for the bytes of a line that are UTF-8.
    pub fn skips_utf8(&self, line: &[u8]) -> bool {
        // A line that begins with a visible ASCII character (nearly every one) is not blank.
        let blank = match line.first() {
            Some(&b) if b > b' ' && b.is_ascii() => false,
            _ => std::str::from_utf8(line).is_ok_and(|text| text.trim().is_empty()),
        };
        blank
            || matches!(self, Format::Csv(CsvSyntax { comment: Some(c), .. })
                if line.starts_with(c.encode_utf8(&mut [0; 4]).as_bytes()))
    }
}

/// Why a record cannot be parsed: the caller adds the file and the line number.
pub type LineError = String;

/// A CSV record that ends inside a quoted value, with its cells as Spark reads them (the open
/// value up to the end): with `multiLine`, the next line continues the record.
#[derive(Debug, PartialEq)]
pub struct OpenQuote<'a>(pub Vec<Cell<'a>>);

/// The cells of the CSV record `line` (without its last line break), as Spark reads them:
/// - a value that begins with the quote is quoted: it ends at a quote followed by the delimiter
///   or the end, and a quote inside it is written after the escape (or doubled, when the
///   escape is the quote itself);
/// - a quoted value with a stray quote inside is read as it stands, quotes included, up to the
///   next delimiter (univocity's `STOP_AT_DELIMITER`, Spark's default);
/// - an empty unquoted value is null; an empty quoted value is the `emptyValue`; a value equal
///   to the `nullValue` is null.
///
/// Cells borrow the text of `line`, except quoted values with escapes: a read allocates
/// nothing for a value it does not change.
///
/// # Errors
/// [`OpenQuote`], with the cells, when the record ends inside a quoted value.
pub fn split_csv<'a>(
    line: &'a str,
    syntax: &CsvSyntax,
    values: &ValueOptions,
) -> Result<Vec<Cell<'a>>, OpenQuote<'a>> {
    if let Some(cells) = split_plain(line, syntax, values) {
        return Ok(cells);
    }
    let mut cells = Vec::with_capacity(32);
    let delimiter = Delimiter::new(syntax.delimiter);
    let mut rest = line;
    let blank = |c: char| (c == ' ' || c == '\t') && c != syntax.delimiter;
    loop {
        if syntax.trim_leading {
            rest = rest.trim_start_matches(blank);
        }
        // `chars().next()` rather than `starts_with`, which calls `memcmp` for every cell.
        #[allow(clippy::chars_next_cmp)]
        let starts_quoted = syntax.quote.is_some_and(|q| rest.chars().next() == Some(q));
        let (text, quoted, after) = match syntax.quote {
            Some(quote) if starts_quoted => {
                match quoted_value(&rest[quote.len_utf8()..], quote, syntax) {
                    Quoted::Closed(text, after) => (text, true, after),
                    Quoted::Stray => {
                        let end = delimiter.find(rest);
                        (Cow::Borrowed(&rest[..end]), false, &rest[end..])
                    }
                    Quoted::Open(text) => {
                        cells.push(cell(text, true, values));
                        return Err(OpenQuote(cells));
                    }
                }
            }
            _ => {
                let end = delimiter.find(rest);
                let text = &rest[..end];
                let text = if syntax.trim_trailing {
                    text.trim_end_matches(blank)
                } else {
                    text
                };
                (Cow::Borrowed(text), false, &rest[end..])
            }
        };
        cells.push(cell(text, quoted, values));
        let mut after_chars = after.chars();
        match after_chars.next() {
            Some(c) if c == syntax.delimiter => rest = after_chars.as_str(),
            _ => return Ok(cells),
        }
    }
}

/// The cells of a line that holds no quote, with a one-byte delimiter and no trimming: most
/// lines of most files. One pass finds the delimiters (none of which can be inside a quoted
/// value), and each cell borrows the line. `None` for the other lines.
fn split_plain<'a>(
    line: &'a str,
    syntax: &CsvSyntax,
    values: &ValueOptions,
) -> Option<Vec<Cell<'a>>> {
    let plain = PlainSyntax::of(syntax)?;
    let mut ends = Vec::with_capacity(32);
    if !plain.cell_ends(line, &mut ends) {
        return None;
    }
    Some(
        plain_cells(line, &ends)
            .map(|text| plain_cell(text, values))
            .collect(),
    )
}

/// The texts of the cells of `line` whose ends [`PlainSyntax::cell_ends`] found.
fn plain_cells<'a: 'e, 'e>(line: &'a str, ends: &'e [usize]) -> impl Iterator<Item = &'a str> + 'e {
    let starts = std::iter::once(0).chain(ends.iter().map(|end| end + 1));
    starts.zip(ends).map(|(start, &end)| &line[start..end])
}

/// The cell of the unquoted text `text` of a line without quotes.
#[inline]
pub fn plain_cell<'a>(text: &'a str, values: &ValueOptions) -> Cell<'a> {
    cell(Cow::Borrowed(text), false, values)
}

/// A CSV syntax whose lines without a quote split at every delimiter: a one-byte delimiter and
/// quote (or none), and no trimming, as nearly every file has.
#[derive(Clone, Copy, Debug)]
pub struct PlainSyntax {
    delimiter: u8,
    quote: Option<u8>,
}

impl PlainSyntax {
    /// `None` when `syntax` is not plain.
    pub fn of(syntax: &CsvSyntax) -> Option<PlainSyntax> {
        if syntax.trim_leading || syntax.trim_trailing || !syntax.delimiter.is_ascii() {
            return None;
        }
        let quote = match syntax.quote {
            Some(quote) if !quote.is_ascii() => return None,
            Some(quote) => Some(quote as u8),
            None => None,
        };
        Some(PlainSyntax {
            delimiter: syntax.delimiter as u8,
            quote,
        })
    }

    /// Fills `ends` (cleared first) with where each cell of `line` ends: every delimiter, then
    /// the end of the line; `false` when the line holds the quote, which only the full parser
    /// reads. Eight bytes at a time: fields of a few bytes are shorter than a SIMD search's
    /// setup (a `memchr` for each delimiter lost to a plain loop), and a word holds a whole
    /// field or two, which one comparison of words finds.
    pub fn cell_ends(&self, line: &str, ends: &mut Vec<usize>) -> bool {
        ends.clear();
        let delimiters = words::splat(self.delimiter);
        let quotes = self.quote.map(words::splat);
        let (whole, rest, base) = words::words(line.as_bytes());
        for (at, word) in whole {
            if quotes.is_some_and(|q| words::zero_bytes(word ^ q) != 0) {
                return false;
            }
            let mut found = words::zero_bytes(word ^ delimiters);
            while found != 0 {
                ends.push(at + words::first_marked(found));
                found &= found - 1;
            }
        }
        for (at, &byte) in rest.iter().enumerate() {
            if byte == self.delimiter {
                ends.push(base + at);
            } else if Some(byte) == self.quote {
                return false;
            }
        }
        ends.push(line.len());
        true
    }
}

/// Finds the delimiter: with `memchr` when it is one byte, as it nearly always is.
struct Delimiter {
    char: char,
    byte: Option<u8>,
}

impl Delimiter {
    fn new(char: char) -> Self {
        let byte = char.is_ascii().then_some(char as u8);
        Delimiter { char, byte }
    }

    /// Where the next delimiter is in `text`, or its length.
    #[inline]
    fn find(&self, text: &str) -> usize {
        let found = match self.byte {
            Some(byte) => memchr::memchr(byte, text.as_bytes()),
            None => text.find(self.char),
        };
        found.unwrap_or(text.len())
    }
}

enum Quoted<'a> {
    /// The value, and what follows its closing quote (the delimiter or nothing).
    Closed(Cow<'a, str>, &'a str),
    /// A quote inside the value that neither ends it nor is escaped.
    Stray,
    /// The text ends inside the value, which holds what it read.
    Open(Cow<'a, str>),
}

/// A quoted value, from just after its opening quote: borrowed until an escape changes it.
fn quoted_value<'a>(text: &'a str, quote: char, syntax: &CsvSyntax) -> Quoted<'a> {
    // The value so far, once an escape made it differ from `text`.
    let mut owned: Option<String> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if c == quote {
            if syntax.escape == quote && next == Some(quote) {
                chars.next();
                owned
                    .get_or_insert_with(|| text[..at].to_string())
                    .push(quote);
                continue;
            }
            // Spaces and tabs between the closing quote and the delimiter are dropped, as
            // Spark's parser drops them.
            let after = text[at + c.len_utf8()..]
                .trim_start_matches(|b: char| (b == ' ' || b == '\t') && b != syntax.delimiter);
            if after.is_empty() || after.starts_with(syntax.delimiter) {
                let value = owned.map_or(Cow::Borrowed(&text[..at]), Cow::Owned);
                return Quoted::Closed(value, after);
            }
            return Quoted::Stray;
        }
        // The escape escapes the quote and itself (Spark's `charToEscapeQuoteEscaping`).
        if c == syntax.escape && (next == Some(quote) || next == Some(c)) {
            chars.next();
            owned
                .get_or_insert_with(|| text[..at].to_string())
                .push(next.unwrap_or(c));
            continue;
        }
        if let Some(value) = &mut owned {
            value.push(c);
        }
    }
    Quoted::Open(owned.map_or(Cow::Borrowed(text), Cow::Owned))
}

#[inline]
fn cell<'a>(text: Cow<'a, str>, quoted: bool, values: &ValueOptions) -> Cell<'a> {
    let text = match (text.is_empty(), quoted) {
        (true, false) => return Cell::Null,
        (true, true) => Cow::Owned(values.empty_value.clone()),
        (false, _) => text,
    };
    if values::same(&text, &values.null_value) {
        Cell::Null
    } else {
        Cell::Text(text)
    }
}

/// A CSV line of `cells`, `None` for null, that [`split_csv`] reads back: values with the
/// delimiter, the quote, a leading space, or nothing at all are quoted, and quotes inside
/// them escaped.
///
/// # Errors
/// A value with a line break, which one line cannot hold.
pub fn join_csv(cells: &[Option<&str>], syntax: &CsvSyntax) -> Result<String, String> {
    let quote = syntax.quote.unwrap_or('"');
    let mut line = String::new();
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            line.push(syntax.delimiter);
        }
        let Some(text) = cell else { continue };
        if text.contains(['\n', '\r']) {
            return Err(
                "holds a line break, which a line of CSV cannot: write with the option \
                 format=jsonl instead"
                    .to_string(),
            );
        }
        if text.is_empty()
            || text.contains([syntax.delimiter, quote])
            || text.starts_with(' ')
            || syntax.comment.is_some_and(|c| text.starts_with(c))
        {
            line.push(quote);
            for c in text.chars() {
                if c == quote {
                    line.push(syntax.escape);
                }
                line.push(c);
            }
            line.push(quote);
        } else {
            line.push_str(text);
        }
    }
    Ok(line)
}

/// The object of a JSON `line`.
///
/// # Errors
/// Text that is not JSON, or JSON that is not an object.
pub fn parse_json(line: &str) -> Result<Map<String, Value>, LineError> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(format!(
            "expected a JSON object {{...}}, found {}",
            json_kind(&other)
        )),
        Err(e) => Err(format!("not valid JSON: {e}")),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The values of a JSON object, each with its key and its text as the line wrote it, in the
/// order of the line; keys borrow the line unless they hold escapes.
pub struct RawObject<'a>(pub Vec<(Cow<'a, str>, &'a str)>);

impl<'de> Deserialize<'de> for RawObject<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = RawObject<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Self::Value, M::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(16));
                while let Some(Key(key)) = map.next_key()? {
                    let value: &'de RawValue = map.next_value()?;
                    entries.push((key, value.get()));
                }
                Ok(RawObject(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// A key of a JSON object: borrowed when the line holds it as it is.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(text.to_string())))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// The values of a JSON `line` by key, each as the text the line holds, for reads: a value
/// read into a string column keeps that text, as Spark's reader keeps it.
///
/// # Errors
/// Text that is not JSON, or JSON that is not an object.
pub fn parse_json_raw(line: &str) -> Result<RawObject<'_>, LineError> {
    serde_json::from_str(line).map_err(|_| match parse_json(line) {
        Err(reason) => reason,
        // Never: what parses as an object parses as a map of raw values.
        Ok(_) => "not a JSON object".to_string(),
    })
}

/// Where the keys of JSON lines go among the columns. Lines of a file nearly always hold their
/// keys in the same order: the column of the key at each position is remembered, and a key is
/// hashed only where it differs from the previous line's.
pub struct JsonColumns {
    columns: HashMap<String, usize>,
    /// The key seen last at each position, and its column.
    last_keys: Vec<String>,
    last_columns: Vec<Option<usize>>,
    /// The members of the line being read, and where each column's value stands in it,
    /// reused from line to line.
    members: Vec<Member>,
    values: Vec<Option<FlatValue>>,
}

/// Where a value of a flat JSON object stands in its line, and whether it is a string with
/// escapes.
#[derive(Clone, Debug)]
pub struct FlatValue {
    text: Range<usize>,
    escaped: bool,
}

impl FlatValue {
    /// The cell of this value of `line`: a string without escapes borrows the line.
    pub fn cell<'a>(&self, line: &'a str) -> Cell<'a> {
        let text = &line[self.text.clone()];
        match text.as_bytes().first() {
            _ if self.escaped => json_cell(text),
            Some(b'"') => Cell::Text(Cow::Borrowed(&text[1..text.len() - 1])),
            Some(b'n') => Cell::Null,
            _ => Cell::Json(Cow::Borrowed(text)),
        }
    }
}

impl JsonColumns {
    /// For the columns `names`; a key named twice goes to the first.
    pub fn new(names: &[String]) -> Self {
        let mut columns = HashMap::new();
        for (i, name) in names.iter().enumerate() {
            columns.entry(name.clone()).or_insert(i);
        }
        JsonColumns {
            columns,
            last_keys: Vec::new(),
            last_columns: Vec::new(),
            members: Vec::new(),
            values: Vec::new(),
        }
    }

    fn column(&mut self, position: usize, key: &str) -> Option<usize> {
        if let Some(seen) = self.last_keys.get(position) {
            if values::same(seen, key) {
                return self.last_columns[position];
            }
        }
        let column = self.columns.get(key).copied();
        if position < self.last_keys.len() {
            self.last_keys[position] = key.to_string();
            self.last_columns[position] = column;
        } else if position == self.last_keys.len() {
            self.last_keys.push(key.to_string());
            self.last_columns.push(column);
        }
        column
    }

    /// Where the value of each column (`count` of them, in their order) stands in the JSON
    /// object `line`, when it is a flat object (`flat_json`): `None` for a column the line has
    /// no key for; other keys are ignored, and a key given twice keeps its last value. `None`
    /// for any other line, which [`cells`](Self::cells) reads.
    pub fn flat_values(&mut self, line: &str, count: usize) -> Option<&[Option<FlatValue>]> {
        let mut members = std::mem::take(&mut self.members);
        let flat = flat_json::flat_members_expecting(line, &self.last_keys, &mut members);
        if flat {
            self.values.clear();
            self.values.resize(count, None);
            for (position, member) in members.iter().enumerate() {
                // The key seen last at its position needs no comparison again.
                let column = match member.expected {
                    true => self.last_columns[position],
                    false => self.column(position, &line[member.key.clone()]),
                };
                if let Some(column) = column {
                    self.values[column] = Some(FlatValue {
                        text: member.value.clone(),
                        escaped: member.escaped,
                    });
                }
            }
        }
        self.members = members;
        flat.then_some(self.values.as_slice())
    }

    /// The cells of the JSON object `line` for the columns, as
    /// [`flat_values`](Self::flat_values) finds them, for any object (through serde_json).
    ///
    /// # Errors
    /// Text that is not JSON, or JSON that is not an object.
    pub fn cells<'a>(&mut self, line: &'a str, count: usize) -> Result<Vec<Cell<'a>>, LineError> {
        let mut cells = vec![Cell::Null; count];
        let object = parse_json_raw(line)?;
        for (position, (key, raw)) in object.0.iter().enumerate() {
            if let Some(column) = self.column(position, key) {
                cells[column] = json_cell(raw);
            }
        }
        Ok(cells)
    }
}

/// The cell of a raw JSON value: a string without escapes borrows the line.
fn json_cell(text: &str) -> Cell<'_> {
    match text {
        "null" => Cell::Null,
        _ if text.len() >= 2 && text.starts_with('"') => {
            if text.contains('\\') {
                serde_json::from_str(text).map_or(Cell::Null, |t: String| Cell::Text(Cow::Owned(t)))
            } else {
                Cell::Text(Cow::Borrowed(&text[1..text.len() - 1]))
            }
        }
        _ => Cell::Json(Cow::Borrowed(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Cell<'static> {
        Cell::Text(Cow::Owned(s.to_string()))
    }

    fn split(line: &str) -> Result<Vec<Cell<'_>>, OpenQuote<'_>> {
        split_csv(line, &CsvSyntax::default(), &ValueOptions::default())
    }

    #[test]
    fn a_csv_line_splits_on_the_delimiter_with_quotes() {
        assert_eq!(
            split(r#"1,"a, \"quoted\" b",,"""#),
            Ok(vec![
                text("1"),
                text(r#"a, "quoted" b"#),
                Cell::Null,
                // `""` is the emptyValue, which is the nullValue unless the options differ.
                Cell::Null
            ])
        );
        let semicolon = CsvSyntax {
            delimiter: ';',
            ..CsvSyntax::default()
        };
        assert_eq!(
            split_csv("x;y", &semicolon, &ValueOptions::default()),
            Ok(vec![text("x"), text("y")])
        );
        assert_eq!(split(""), Ok(vec![Cell::Null]));
    }

    /// Every line of up to `length` characters over `alphabet`, as strings.
    fn every_line(alphabet: &[char], length: usize) -> Vec<String> {
        let mut lines = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..length {
            last = last
                .iter()
                .flat_map(|line| alphabet.iter().map(move |c| format!("{line}{c}")))
                .collect();
            lines.extend(last.iter().cloned());
        }
        lines
    }

    #[test]
    fn plain_lines_split_a_word_at_a_time_where_a_byte_at_a_time_splits() {
        // Lines that cross a word, and bytes that differ from the delimiter only in their
        // high bit (0xAC, in '¬') or their lowest ('-'), which a test of words that is not
        // exact takes for it after a delimiter (a borrow). Every line of up to 6 characters,
        // then longer ones.
        let alphabet = [',', 'a', '¬', '-', '"'];
        let mut lines = every_line(&alphabet, 6);
        lines.extend(lines.clone().iter().map(|l| format!("{l}{l}{l}")));
        let plain = PlainSyntax::of(&CsvSyntax::default()).expect("plain");
        let mut ends = Vec::new();
        for line in &lines {
            let found = plain.cell_ends(line, &mut ends);
            if line.contains('"') {
                assert!(!found, "{line:?} holds a quote");
                continue;
            }
            let mut expected: Vec<usize> = line.match_indices(',').map(|(at, _)| at).collect();
            expected.push(line.len());
            assert!(found, "{line:?}");
            assert_eq!(ends, expected, "{line:?}");
        }
    }

    #[test]
    fn a_stray_quote_keeps_the_value_as_it_stands() {
        // Spark's default escape is `\`: a doubled quote is a stray one, and the value is read
        // raw up to the delimiter. With escape `"`, it is RFC 4180's escaped quote.
        assert_eq!(
            split(r#"1,"x ""q"" y",2"#),
            Ok(vec![text("1"), text(r#""x ""q"" y""#), text("2")])
        );
        let rfc = CsvSyntax {
            escape: '"',
            ..CsvSyntax::default()
        };
        assert_eq!(
            split_csv(r#"1,"x ""q"" y""#, &rfc, &ValueOptions::default()),
            Ok(vec![text("1"), text(r#"x "q" y"#)])
        );
    }

    #[test]
    fn blanks_around_values_are_dropped_only_when_asked() {
        let line = "  a  , \"b\"  ,c";
        assert_eq!(
            split(line),
            Ok(vec![text("  a  "), text(" \"b\"  "), text("c")])
        );
        let trim = CsvSyntax {
            trim_leading: true,
            trim_trailing: true,
            ..CsvSyntax::default()
        };
        assert_eq!(
            split_csv(line, &trim, &ValueOptions::default()),
            Ok(vec![text("a"), text("b"), text("c")])
        );
        // After a closing quote, always.
        assert_eq!(split(r#""x" ,2"#), Ok(vec![text("x"), text("2")]));
    }

    #[test]
    fn the_null_and_empty_values_apply_to_the_text() {
        let values = ValueOptions {
            null_value: "NA".to_string(),
            empty_value: "E".to_string(),
            ..ValueOptions::default()
        };
        assert_eq!(
            split_csv(r#"NA,"",,x"#, &CsvSyntax::default(), &values),
            Ok(vec![Cell::Null, text("E"), Cell::Null, text("x")])
        );
    }

    #[test]
    fn an_open_quote_is_reported_for_multi_line_records() {
        assert_eq!(
            split(r#"1,"open"#),
            Err(OpenQuote(vec![text("1"), text("open")]))
        );
        assert_eq!(
            split(r#"1,"a\\b","c\d""#),
            Ok(vec![text("1"), text(r"a\b"), text(r"c\d")])
        );
        assert_eq!(
            split("1,\"two\nlines\""),
            Ok(vec![text("1"), text("two\nlines")])
        );
    }

    #[test]
    fn a_written_line_reads_back_as_the_same_cells() -> Result<(), String> {
        let cells = [Some("1"), None, Some("a,b"), Some("say \"hi\"")];
        let syntax = CsvSyntax::default();
        let line = join_csv(&cells, &syntax)?;
        assert_eq!(line, r#"1,,"a,b","say \"hi\"""#);
        let read = split_csv(&line, &syntax, &ValueOptions::default())
            .map_err(|_| "an open quote".to_string())?;
        let expected: Vec<Cell> = cells.iter().map(|c| c.map_or(Cell::Null, text)).collect();
        assert_eq!(read, expected);
        Ok(())
    }

    #[test]
    fn a_line_break_in_a_value_cannot_be_written_as_csv() {
        let error = join_csv(&[Some("two\nlines")], &CsvSyntax::default()).unwrap_err();
        assert!(error.contains("format=jsonl"), "{error}");
    }

    #[test]
    fn a_json_line_must_be_an_object() {
        assert_eq!(
            parse_json("[1, 2]"),
            Err("expected a JSON object {...}, found an array".to_string())
        );
        let error = parse_json("{\"a\": ").unwrap_err();
        assert!(error.starts_with("not valid JSON: EOF"), "{error}");
    }

    #[test]
    fn a_flat_json_line_gives_the_cells_that_serde_json_gives() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let lines = [
            r#"{"a":1,"b":"x","c":null}"#,
            r#"{"c":2.5e3,"a":true,"b":"caf\u00e9 \"q\""}"#,
            r#"{"b":"first","b":"last","z":7}"#,
            r#"{"a":-0,"b":"","c":"\\"}"#,
            "{}",
        ];
        let mut flat = JsonColumns::new(&names);
        let mut general = JsonColumns::new(&names);
        for line in lines {
            let values = flat.flat_values(line, names.len()).expect("a flat line");
            let cells: Vec<Cell> = values
                .iter()
                .map(|v| v.as_ref().map_or(Cell::Null, |v| v.cell(line)))
                .collect();
            assert_eq!(Ok(cells), general.cells(line, names.len()), "{line}");
        }
        // Nested values go through serde_json.
        assert!(flat.flat_values(r#"{"a":{"b":1}}"#, 3).is_none());
    }
}
