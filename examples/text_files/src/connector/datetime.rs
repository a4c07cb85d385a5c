//! Dates and timestamps in text, read as Spark's CSV reader reads them: with the default
//! formats, strict `yyyy-MM-dd` dates and Spark's lenient ISO 8601 timestamps; or with the
//! patterns of the options `dateFormat` and `timestampFormat` (a subset of Java's
//! `DateTimeFormatter` letters). Dates are days since 1970-01-01; timestamps, microseconds
//! since 1970-01-01T00:00:00Z.

use serde::{Deserialize, Serialize};

/// Days from 1970-01-01 to the proleptic Gregorian date `year-month-day`, or `None` for a date
/// that does not exist (2023-02-29).
pub fn days(year: i64, month: u32, day: u32) -> Option<i32> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    // The days-from-civil algorithm: years counted from March, so that the leap day ends one.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i32::try_from(era * 146_097 + doe - 719_468).ok()
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// A fixed offset from UTC, in seconds: the option `timeZone` (and the zone of a value).
pub type Offset = i32;

/// The offset of a zone the option `timeZone` names: `UTC` (and its aliases) or a fixed offset
/// such as `+01:00`.
///
/// # Errors
/// A region name (`Europe/Paris`): without a time zone database this source reads fixed
/// offsets only.
pub fn zone(name: &str) -> Result<Offset, String> {
    let mut cursor = Cursor::new(name.trim());
    let offset = cursor.zone();
    match offset {
        Some(offset) if cursor.done() => Ok(offset),
        _ => Err(format!(
            "option `timeZone` must be UTC or a fixed offset such as +01:00, got `{name}`: \
             region names need a time zone database, which this source does not carry"
        )),
    }
}

/// The date of `text` in Spark's default date format, `yyyy-MM-dd` (a year of 4 digits or
/// more, a month and a day of 2 digits, and nothing else).
pub fn iso_date(text: &str) -> Option<i32> {
    let mut cursor = Cursor::new(text);
    let year = cursor.number(4, 9)?;
    cursor.literal('-')?;
    let month = cursor.number(2, 2)?;
    cursor.literal('-')?;
    let day = cursor.number(2, 2)?;
    if !cursor.done() {
        return None;
    }
    days(year, month as u32, day as u32)
}

/// A date as Spark reads it without `dateFormat` when the strict format fails: `yyyy`,
/// `yyyy-[m]m`, `yyyy-[m]m-[d]d`, optionally followed by a space or `T` and anything.
pub fn lenient_date(text: &str) -> Option<i32> {
    let mut cursor = Cursor::new(text.trim());
    let sign = cursor.sign();
    let year = cursor.number(4, 7)? * sign;
    let (mut month, mut day) = (1, 1);
    if cursor.eat('-') {
        month = cursor.number(1, 2)?;
        if cursor.eat('-') {
            day = cursor.number(1, 2)?;
        }
    }
    if !cursor.done() && !cursor.eat(' ') && !cursor.eat('T') {
        return None;
    }
    days(year, month as u32, day as u32)
}

/// A timestamp as Spark's default format reads it (its `stringToTimestamp`):
/// `[+-]yyyy[-[m]m[-[d]d]][( |T)[h]h:[m]m[:[s]s[.fraction]]][zone]`, where the zone is `Z`,
/// `UTC`, `GMT` or an offset such as `+01:00`; without a zone, the time is in `default_zone`.
pub fn lenient_timestamp(text: &str, default_zone: Offset) -> Option<i64> {
    let mut cursor = Cursor::new(text.trim());
    let sign = cursor.sign();
    let year = cursor.number(4, 7)? * sign;
    let (mut month, mut day) = (1, 1);
    if cursor.eat('-') {
        month = cursor.number(1, 2)?;
        if cursor.eat('-') {
            day = cursor.number(1, 2)?;
        }
    }
    let date = days(year, month as u32, day as u32)?;
    let mut micros = 0;
    let mut zone = None;
    if cursor.eat(' ') || cursor.eat('T') {
        if !cursor.done() {
            let hour = cursor.number(1, 2)?;
            cursor.literal(':')?;
            let minute = cursor.number(1, 2)?;
            let mut second = 0;
            let mut fraction = 0;
            if cursor.eat(':') {
                second = cursor.number(1, 2)?;
                if cursor.eat('.') {
                    fraction = cursor.fraction()?;
                }
            }
            if hour > 23 || minute > 59 || second > 59 {
                return None;
            }
            micros = ((hour * 60 + minute) * 60 + second) * 1_000_000 + fraction;
            if !cursor.done() {
                // An offset may follow the time directly or after a space.
                cursor.eat(' ');
                zone = Some(cursor.zone()?);
            }
        }
    } else if !cursor.done() {
        return None;
    }
    if !cursor.done() {
        return None;
    }
    let offset = i64::from(zone.unwrap_or(default_zone));
    Some(i64::from(date) * MICROS_PER_DAY + micros - offset * 1_000_000)
}

/// One element of a pattern.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Element {
    Literal(char),
    /// `y`: 2 letters read a 2-digit year of 2000-2099, more letters at least that many
    /// digits.
    Year(usize),
    /// `M`: 1 or 2 letters read digits, 3 a short English name (`Jan`), 4 a full one.
    Month(usize),
    Day(usize),
    Hour(usize),
    Minute(usize),
    Second(usize),
    /// `S`: that many digits of a fraction of a second.
    Fraction(usize),
    /// `X`, `x` or `Z`: an offset such as `Z`, `+01`, `+0100` or `+01:00`.
    Zone,
}

/// A date or timestamp pattern of the options `dateFormat` and `timestampFormat`, such as
/// `yyyy/MM/dd` or `dd.MM.yyyy HH:mm:ss`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pattern {
    text: String,
    elements: Vec<Element>,
}

/// The letters a pattern may use, for error messages.
const PATTERN_LETTERS: &str = "y M d H m s S X x Z, and text in single quotes";

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

impl Pattern {
    /// The pattern of the option `option`.
    ///
    /// # Errors
    /// A letter this source does not read, or an unclosed quote.
    pub fn parse(option: &str, text: &str) -> Result<Pattern, String> {
        let mut elements = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '\'' {
                let close = chars[i + 1..].iter().position(|&q| q == '\'');
                let Some(close) = close else {
                    return Err(format!(
                        "option `{option}`: the quote at {} in `{text}` is not closed",
                        i + 1
                    ));
                };
                if close == 0 {
                    elements.push(Element::Literal('\''));
                }
                elements.extend(
                    chars[i + 1..i + 1 + close]
                        .iter()
                        .map(|&c| Element::Literal(c)),
                );
                i += close + 2;
                continue;
            }
            let run = chars[i..].iter().take_while(|&&d| d == c).count();
            let element = match c {
                'y' | 'u' => Element::Year(run),
                'M' | 'L' => Element::Month(run),
                'd' => Element::Day(run),
                'H' => Element::Hour(run),
                'm' => Element::Minute(run),
                's' => Element::Second(run),
                'S' => Element::Fraction(run),
                'X' | 'x' | 'Z' => Element::Zone,
                c if c.is_ascii_alphabetic() => {
                    return Err(format!(
                        "option `{option}`: the letter `{c}` of `{text}` is not one this source \
                         reads; use {PATTERN_LETTERS}"
                    ))
                }
                c => {
                    elements.extend(std::iter::repeat_n(Element::Literal(c), run));
                    i += run;
                    continue;
                }
            };
            elements.push(element);
            i += run;
        }
        Ok(Pattern {
            text: text.to_string(),
            elements,
        })
    }

    /// The pattern's text, for messages.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The date of `text`, which must match the whole pattern.
    pub fn date(&self, text: &str) -> Option<i32> {
        let fields = self.fields(text)?;
        days(fields.year, fields.month, fields.day)
    }

    /// The timestamp of `text`, in `default_zone` unless the text has an offset.
    pub fn timestamp(&self, text: &str, default_zone: Offset) -> Option<i64> {
        let f = self.fields(text)?;
        let date = days(f.year, f.month, f.day)?;
        if f.hour > 23 || f.minute > 59 || f.second > 59 {
            return None;
        }
        let micros = ((f.hour * 60 + f.minute) * 60 + f.second) * 1_000_000 + f.fraction;
        let offset = i64::from(f.zone.unwrap_or(default_zone));
        Some(i64::from(date) * MICROS_PER_DAY + micros - offset * 1_000_000)
    }

    fn fields(&self, text: &str) -> Option<Fields> {
        let mut f = Fields {
            year: 1970,
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
            fraction: 0,
            zone: None,
        };
        let mut cursor = Cursor::new(text);
        for element in &self.elements {
            match *element {
                Element::Literal(c) => cursor.literal(c)?,
                Element::Year(2) => f.year = 2000 + cursor.number(2, 2)?,
                Element::Year(n) => f.year = cursor.number(n, 9.max(n))?,
                Element::Month(n) if n >= 3 => f.month = cursor.month_name(n == 3)?,
                Element::Month(n) => f.month = cursor.number(n, 2)? as u32,
                Element::Day(n) => f.day = cursor.number(n, 2)? as u32,
                Element::Hour(n) => f.hour = cursor.number(n, 2)?,
                Element::Minute(n) => f.minute = cursor.number(n, 2)?,
                Element::Second(n) => f.second = cursor.number(n, 2)?,
                Element::Fraction(n) => {
                    let digits = cursor.digits(n, n)?;
                    f.fraction = micros_of_fraction(digits);
                }
                Element::Zone => f.zone = Some(cursor.zone()?),
            }
        }
        cursor.done().then_some(f)
    }
}

struct Fields {
    year: i64,
    month: u32,
    day: u32,
    hour: i64,
    minute: i64,
    second: i64,
    fraction: i64,
    zone: Option<Offset>,
}

/// Microseconds of the digits after a decimal point (`5` is 500000; digits past the sixth are
/// cut, as Spark keeps microseconds).
fn micros_of_fraction(digits: &str) -> i64 {
    let mut micros = 0;
    for (i, b) in digits.bytes().take(6).enumerate() {
        micros += i64::from(b - b'0') * 10_i64.pow(5 - i as u32);
    }
    micros
}

/// A position in the text being parsed.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a str) -> Self {
        Cursor { text, at: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn done(&self) -> bool {
        self.at == self.text.len()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.rest().starts_with(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn literal(&mut self, c: char) -> Option<()> {
        self.eat(c).then_some(())
    }

    fn sign(&mut self) -> i64 {
        if self.eat('-') {
            -1
        } else {
            self.eat('+');
            1
        }
    }

    /// Between `min` and `max` ASCII digits, as text.
    fn digits(&mut self, min: usize, max: usize) -> Option<&'a str> {
        let count = self
            .rest()
            .bytes()
            .take(max)
            .take_while(u8::is_ascii_digit)
            .count();
        if count < min {
            return None;
        }
        let digits = &self.rest()[..count];
        self.at += count;
        Some(digits)
    }

    fn number(&mut self, min: usize, max: usize) -> Option<i64> {
        self.digits(min, max)?.parse().ok()
    }

    /// The digits of a fraction of a second, up to nanoseconds, as microseconds.
    fn fraction(&mut self) -> Option<i64> {
        Some(micros_of_fraction(self.digits(1, 9)?))
    }

    fn month_name(&mut self, short: bool) -> Option<u32> {
        let rest = self.rest().to_ascii_lowercase();
        for (i, name) in MONTHS.iter().enumerate() {
            let name = if short { &name[..3] } else { name };
            if rest.starts_with(name) {
                self.at += name.len();
                return Some(i as u32 + 1);
            }
        }
        None
    }

    /// `Z`, `UTC`, `GMT`, `UT` (optionally followed by an offset), or an offset `+hh`,
    /// `+hhmm`, `+hh:mm`, `+hh:mm:ss`.
    fn zone(&mut self) -> Option<Offset> {
        if self.eat('Z') {
            return Some(0);
        }
        for prefix in ["UTC", "GMT", "UT", "Etc/UTC", "Etc/GMT"] {
            if self.rest().starts_with(prefix) {
                self.at += prefix.len();
                if self.done() {
                    return Some(0);
                }
                break;
            }
        }
        let sign = match self.rest().chars().next()? {
            '+' => 1,
            '-' => -1,
            _ => return None,
        };
        self.at += 1;
        let hours = self.number(1, 2)?;
        let mut minutes = 0;
        let mut seconds = 0;
        if self.eat(':') {
            minutes = self.number(2, 2)?;
            if self.eat(':') {
                seconds = self.number(2, 2)?;
            }
        } else if let Some(m) = self.digits(2, 2) {
            minutes = m.parse().ok()?;
        }
        if hours > 18 || minutes > 59 || seconds > 59 {
            return None;
        }
        Some(sign * (hours * 3600 + minutes * 60 + seconds) as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UTC: Offset = 0;

    #[test]
    fn days_count_from_1970_with_leap_years() {
        assert_eq!(days(1970, 1, 1), Some(0));
        assert_eq!(days(2000, 3, 1), Some(11_017));
        assert_eq!(days(1969, 12, 31), Some(-1));
        assert_eq!(days(2024, 2, 29), Some(19_782));
        assert_eq!(days(2023, 2, 29), None);
    }

    #[test]
    fn the_default_date_format_is_strict() {
        assert_eq!(iso_date("2014-02-01"), days(2014, 2, 1));
        assert_eq!(iso_date("2014-2-1"), None);
        assert_eq!(iso_date("2014-02-01 10:00"), None);
        assert_eq!(iso_date("2014/02/01"), None);
        assert_eq!(lenient_date("2014-2-1"), days(2014, 2, 1));
        assert_eq!(lenient_date("2014-02-01T10:00:00"), days(2014, 2, 1));
    }

    #[test]
    fn timestamps_are_read_as_spark_reads_them_by_default() {
        let at = |d: &str| lenient_timestamp(d, UTC);
        let day = |y, m, d| Some(i64::from(days(y, m, d).expect("a date")) * MICROS_PER_DAY);
        assert_eq!(
            at("2013-01-01T10:00:00Z"),
            day(2013, 1, 1).map(|d| d + 36_000_000_000)
        );
        assert_eq!(at("2013-01-01 10:00:00"), at("2013-01-01T10:00:00Z"));
        assert_eq!(at("2013-01-01 11:00:00+01:00"), at("2013-01-01T10:00:00Z"));
        assert_eq!(
            at("2013-01-01 10:00:00.5")
                .zip(at("2013-01-01 10:00:00"))
                .map(|(a, b)| a - b),
            Some(500_000)
        );
        assert_eq!(at("2014-02"), day(2014, 2, 1));
        assert_eq!(at("2014-2-3"), day(2014, 2, 3));
        assert_eq!(
            lenient_timestamp("2013-01-01 10:00", 3600),
            at("2013-01-01 09:00")
        );
        for not in [
            "2012/01/01",
            "10:00",
            "2013-01-01 25:00",
            "2013-01-01x",
            "Jan 1 2000",
        ] {
            assert_eq!(at(not), None, "{not}");
        }
    }

    #[test]
    fn patterns_read_their_letters_and_refuse_others() -> Result<(), String> {
        let slash = Pattern::parse("dateFormat", "yyyy/MM/dd")?;
        assert_eq!(slash.date("2012/01/02"), days(2012, 1, 2));
        assert_eq!(slash.date("2012-01-02"), None);
        let named = Pattern::parse("dateFormat", "MMM d yyyy")?;
        assert_eq!(named.date("Jan 1 2000"), days(2000, 1, 1));
        let time = Pattern::parse("timestampFormat", "dd.MM.yy HH:mm:ss.SSS'Z'")?;
        // `yy` is a year of 2000 to 2099, as in Java.
        let day = i64::from(days(2000, 1, 2).expect("a date"));
        assert_eq!(
            time.timestamp("02.01.00 00:00:01.250Z", UTC),
            Some(day * MICROS_PER_DAY + 1_250_000)
        );
        let error = Pattern::parse("dateFormat", "EEE yyyy").unwrap_err();
        assert_eq!(
            error,
            "option `dateFormat`: the letter `E` of `EEE yyyy` is not one this source reads; \
             use y M d H m s S X x Z, and text in single quotes"
        );
        Ok(())
    }

    #[test]
    fn the_time_zone_option_takes_utc_or_an_offset() {
        assert_eq!(zone("UTC"), Ok(0));
        assert_eq!(zone("+01:30"), Ok(5400));
        assert_eq!(zone("GMT-05:00"), Ok(-18_000));
        assert!(zone("Europe/Paris").unwrap_err().contains("fixed offset"));
    }
}
