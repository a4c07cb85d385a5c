//! The members of a flat JSON object, found in one pass over the line with no allocation: the
//! common JSON line (keys without escapes; strings, numbers, `true`, `false` and `null` for
//! values). Anything else (a nested object or array, an escape in a key, a line that is not
//! JSON) is left to serde_json, which reads every object and says what is wrong with a line:
//! this scanner accepts only what serde_json accepts, and finds the same members in it.

use std::ops::Range;

use super::words;

/// A member of an object: where its key (between the quotes) and its value (as the line
/// wrote it: a string with its quotes) stand in the line, whether the value is a string with
/// escapes (which must be decoded; any other string is its text between the quotes), and
/// whether the key is the one expected at its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub key: Range<usize>,
    pub value: Range<usize>,
    pub escaped: bool,
    pub expected: bool,
}

/// Fills `members` (cleared first) with the members of the object `line`, in their order, and
/// returns `true`; `false` when the line is not a flat object of such members, for serde_json
/// to read (`members` then holds nothing of use).
pub fn flat_members(line: &str, members: &mut Vec<Member>) -> bool {
    flat_members_expecting::<&str>(line, &[], members)
}

/// [`flat_members`], where the key of the member at each position is first compared with the
/// key of `expected` there (`Member::expected` says which were): the lines of a file hold
/// their keys in the same order, so a key is mostly found in one comparison. An expected key
/// must be one that a scan found (no quote, backslash or control character in it).
pub fn flat_members_expecting<K: AsRef<str>>(
    line: &str,
    expected: &[K],
    members: &mut Vec<Member>,
) -> bool {
    members.clear();
    let mut scan = Scan {
        bytes: line.as_bytes(),
        at: 0,
        escaped: false,
    };
    scan.members(expected, members).is_some()
}

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Whether the value scanned last held an escape.
    escaped: bool,
}

impl Scan<'_> {
    fn members<K: AsRef<str>>(&mut self, expected: &[K], members: &mut Vec<Member>) -> Option<()> {
        self.blank();
        self.eat(b'{')?;
        self.blank();
        if self.eat(b'}').is_none() {
            loop {
                self.eat(b'"')?;
                let known = expected.get(members.len()).map(AsRef::as_ref);
                let (key, expected) = match known.and_then(|k| self.expected_key(k)) {
                    Some(key) => (key, true),
                    None => (self.string(false)?, false),
                };
                self.blank();
                self.eat(b':')?;
                self.blank();
                self.escaped = false;
                let value = self.value()?;
                members.push(Member {
                    key,
                    value,
                    escaped: self.escaped,
                    expected,
                });
                self.blank();
                if self.eat(b',').is_some() {
                    self.blank();
                    continue;
                }
                self.eat(b'}')?;
                break;
            }
        }
        self.blank();
        (self.at == self.bytes.len()).then_some(())
    }

    /// JSON's white space.
    fn blank(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// The key `key` and its closing quote, if they come next (its opening quote eaten): the
    /// range of the key, which a scan of the string would find too, since `key` holds no quote,
    /// backslash or control character.
    fn expected_key(&mut self, key: &str) -> Option<Range<usize>> {
        let start = self.at;
        let end = start + key.len();
        let here = self.bytes.get(start..=end)?;
        let same = here[..key.len()]
            .iter()
            .zip(key.as_bytes())
            .all(|(a, b)| a == b);
        (same && here[key.len()] == b'"').then(|| {
            self.at = end + 1;
            start..end
        })
    }

    /// The text of a string whose opening quote was eaten, up to its closing quote (eaten
    /// too); with `escapes`, valid escapes may stand in it.
    fn string(&mut self, escapes: bool) -> Option<Range<usize>> {
        let start = self.at;
        loop {
            // The next quote, backslash or control character (refused in a JSON string).
            self.at += special(&self.bytes[self.at..])?;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at - 1);
                }
                // A backslash in a key is left to serde_json.
                b'\\' if escapes => {
                    self.escape()?;
                    self.escaped = true;
                }
                _ => return None,
            }
        }
    }

    /// An escape: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` or `\u` and four hex digits.
    fn escape(&mut self) -> Option<()> {
        match *self.bytes.get(self.at + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.at += 2,
            b'u' => {
                let digits = self.bytes.get(self.at + 2..self.at + 6)?;
                if !digits.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                // A lone surrogate is an error of serde_json's: left to it.
                let code = u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()?;
                if (0xD800..=0xDFFF).contains(&code) {
                    return None;
                }
                self.at += 6;
            }
            _ => return None,
        }
        Some(())
    }

    /// A value that is not an object or an array: its text.
    fn value(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        match *self.bytes.get(self.at)? {
            b'"' => {
                self.at += 1;
                self.string(true)?;
            }
            b't' => self.word(b"true")?,
            b'f' => self.word(b"false")?,
            b'n' => self.word(b"null")?,
            b'-' | b'0'..=b'9' => self.number()?,
            _ => return None,
        }
        Some(start..self.at)
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.at..]
            .starts_with(word)
            .then(|| self.at += word.len())
    }

    /// JSON's number: `-`, an integer with no leading zero, a fraction, an exponent.
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        match *self.bytes.get(self.at)? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.').is_some() {
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }
}

/// Where the first quote, backslash or control character of `bytes` stands, eight bytes at a
/// time: the strings of JSON lines are short, shorter than a SIMD search's setup.
fn special(bytes: &[u8]) -> Option<usize> {
    const QUOTES: u64 = words::splat(b'"');
    const BACKSLASHES: u64 = words::splat(b'\\');
    let (whole, rest, base) = words::words(bytes);
    for (at, word) in whole {
        let found = words::zero_bytes(word ^ QUOTES)
            | words::zero_bytes(word ^ BACKSLASHES)
            | words::control_bytes(word);
        if found != 0 {
            return Some(at + words::first_marked(found));
        }
    }
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|at| base + at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

    /// The members as serde_json reads them, when the scanner accepts the line; the scanner's
    /// verdict either way.
    fn scanned(line: &str) -> Option<Vec<(String, Value)>> {
        let mut members = Vec::new();
        flat_members(line, &mut members).then(|| {
            members
                .iter()
                .map(|m| {
                    let value = serde_json::from_str(&line[m.value.clone()]).expect("a value");
                    (line[m.key.clone()].to_string(), value)
                })
                .collect()
        })
    }

    #[test]
    fn what_the_scanner_accepts_serde_json_reads_as_the_same_object() {
        let accepted = [
            r#"{"a":1,"b":"x","c":null,"d":true,"e":false}"#,
            r#"  { "a" : -0.5e+3 , "b" : "caf\u00e9 \"q\" \\ \/ \n" }  "#,
            "{}",
            " {\t}\r\n",
            r#"{"a":0,"a":2}"#,
            r#"{"n":-0,"m":1E5,"k":12.25,"big":123456789012345678901234567890}"#,
            r#"{"ü":"ß"}"#,
        ];
        for line in accepted {
            let members = scanned(line).unwrap_or_else(|| panic!("not scanned: {line}"));
            let object: Map<String, Value> = serde_json::from_str(line).expect("an object");
            // serde_json keeps the last of a key given twice, as the reads do.
            let last: Map<String, Value> = members.into_iter().collect();
            assert_eq!(last, object, "{line}");
        }
    }

    #[test]
    fn expected_keys_find_the_members_that_a_scan_finds() {
        // Keys as expected, longer or shorter than expected, other keys, fewer and more
        // members, and lines that are not flat objects.
        let expected = ["a", "bb", "c"];
        let lines = [
            r#"{"a":1,"bb":"x","c":null}"#,
            r#"{"a":1,"bbb":2,"c":3}"#,
            r#"{"a":1,"b":2,"c":3}"#,
            r#"{"c":1,"a":2}"#,
            r#"{"a":1,"bb":2,"c":3,"d":4}"#,
            r#"{ "a" :1,"bb"}"#,
            r#"{"a"#,
            r#"{"a":1,"bb":{"c":1}}"#,
        ];
        for line in lines {
            let (mut scanned, mut known) = (Vec::new(), Vec::new());
            let flat = flat_members(line, &mut scanned);
            assert_eq!(
                flat_members_expecting(line, &expected, &mut known),
                flat,
                "{line}"
            );
            if !flat {
                continue;
            }
            for (position, (a, b)) in scanned.iter().zip(&known).enumerate() {
                assert_eq!((&a.key, &a.value, a.escaped), (&b.key, &b.value, b.escaped));
                let same = expected.get(position) == Some(&&line[a.key.clone()]);
                assert_eq!(b.expected, same, "{line}: member {position}");
            }
            assert_eq!(scanned.len(), known.len());
        }
    }

    #[test]
    fn the_scanner_leaves_to_serde_json_what_is_nested_escaped_in_keys_or_not_json() {
        let left = [
            r#"{"a":{"b":1}}"#,
            r#"{"a":[1,2]}"#,
            r#"{"k\"ey":1}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":1e}"#,
            r#"{"a":+1}"#,
            r#"{"a":-}"#,
            r#"{"a":tru}"#,
            r#"{"a":"x\q"}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\u12g4"}"#,
            "{\"a\":\"tab\there\"}",
            r#"{"a":1,}"#,
            r#"{"a":1"#,
            r#"{"a" 1}"#,
            r#"{"a":1} x"#,
            r#"{a:1}"#,
            r#"[1]"#,
            "",
            r#""text""#,
        ];
        for line in left {
            assert!(scanned(line).is_none(), "scanned: {line}");
        }
    }
}
