//! Dates and timestamps between Spark and PostgreSQL: the two epochs, the two ranges, and the
//! checked shifts between them. Every conversion either gives the same day or instant or says
//! why it cannot: a shift that would overflow wraps to a date hundreds of thousands of years
//! away, which no reader would notice.
//!
//! - Spark counts days and microseconds from 1970-01-01, in an `int` and a `long`: it holds
//!   any date of an `int` and any instant from 290308 BC to 294247-01-10 04:00:54.775807 UTC.
//!   Its literals and `show()` go from 0001-01-01 to 9999-12-31 in the session's time zone, and
//!   past those with a sign (`+10000-01-01`); Spark's JDBC source reads them too. So a read
//!   refuses only what Spark cannot hold: the infinities, and the instants of PostgreSQL's last
//!   thirty years (after 294247-01-10).
//! - PostgreSQL counts them from 2000-01-01, holds dates from 4714-11-24 BC to 5874897-12-31 and
//!   timestamps from 4714-11-24 BC to 294276-12-31 (`IS_VALID_DATE`, `IS_VALID_TIMESTAMP` of its
//!   `datatype/timestamp.h`), and reserves the smallest and largest values for `-infinity` and
//!   `infinity`.

use std::ops::Range;

/// Days from 1970-01-01 (Arrow's epoch) to 2000-01-01 (PostgreSQL's).
pub const EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01T00:00:00 to 2000-01-01T00:00:00.
pub const EPOCH_MICROS: i64 = 946_684_800_000_000;
const MICROS_PER_DAY: i64 = 86_400_000_000;

/// PostgreSQL's dates, in days since 2000-01-01.
const POSTGRES_DAYS: Range<i32> = -2_451_545..2_145_031_949;
/// PostgreSQL's timestamps, in microseconds since 2000-01-01.
const POSTGRES_MICROS: Range<i64> = -211_813_488_000_000_000..9_223_371_331_200_000_000;

/// The range that a write or a filter can give PostgreSQL, for messages.
const POSTGRES_RANGE: &str = "PostgreSQL's range of 4714-11-24 BC to 5874897-12-31 for a date \
                              and to 294276-12-31 for a timestamp";

/// A PostgreSQL date (days since 2000-01-01) as Spark's, or why it cannot be.
pub fn date_from_postgres(days: i32) -> Result<i32, String> {
    if days == i32::MAX || days == i32::MIN {
        return Err("an infinite date, which Spark's date cannot hold".into());
    }
    // Every finite date of PostgreSQL fits: its last is 2,145,042,905 days after 1970.
    days.checked_add(EPOCH_DAYS).ok_or_else(|| {
        let date = civil(i64::from(days) + i64::from(EPOCH_DAYS), 0);
        format!("the date {date}, past the days that Spark's date holds")
    })
}

/// A PostgreSQL timestamp (microseconds since 2000-01-01) as Spark's, or why it cannot be.
pub fn timestamp_from_postgres(micros: i64) -> Result<i64, String> {
    if micros == i64::MAX || micros == i64::MIN {
        return Err("an infinite timestamp, which Spark's timestamp cannot hold".into());
    }
    micros.checked_add(EPOCH_MICROS).ok_or_else(|| {
        let shifted = i128::from(micros) + i128::from(EPOCH_MICROS);
        format!(
            "the timestamp {}, after Spark's last instant, 294247-01-10 04:00:54.775807 UTC",
            instant(shifted)
        )
    })
}

/// A Spark date as PostgreSQL's, or `None` where PostgreSQL holds no such date.
pub fn date_to_postgres(days: i32) -> Option<i32> {
    days.checked_sub(EPOCH_DAYS)
        .filter(|days| POSTGRES_DAYS.contains(days))
}

/// A Spark timestamp as PostgreSQL's, or `None` where PostgreSQL holds no such instant.
pub fn timestamp_to_postgres(micros: i64) -> Option<i64> {
    micros
        .checked_sub(EPOCH_MICROS)
        .filter(|micros| POSTGRES_MICROS.contains(micros))
}

/// Why a Spark date cannot be written.
pub fn date_out_of_range(days: i32) -> String {
    format!(
        "the date {}, outside {POSTGRES_RANGE}",
        civil(i64::from(days), 0)
    )
}

/// Why a Spark timestamp cannot be written.
pub fn timestamp_out_of_range(micros: i64) -> String {
    format!(
        "the timestamp {}, outside {POSTGRES_RANGE}",
        instant(i128::from(micros))
    )
}

/// A Spark date as a literal of PostgreSQL's SQL, `'yyyy-mm-dd[ BC]'::date`; `None` where
/// PostgreSQL holds no such date.
pub fn date_literal(days: i32) -> Option<String> {
    date_to_postgres(days)?;
    Some(format!("'{}'::date", civil(i64::from(days), 0)))
}

/// A Spark timestamp as a literal of PostgreSQL's SQL: `'yyyy-mm-dd hh:mm:ss.ffffff[ BC]'` as a
/// `timestamp`, or with the offset `+00` as a `timestamptz` (`zoned`), which reads the same
/// instant in any time zone; `None` where PostgreSQL holds no such instant.
pub fn timestamp_literal(micros: i64, zoned: bool) -> Option<String> {
    timestamp_to_postgres(micros)?;
    let (days, within) = (
        micros.div_euclid(MICROS_PER_DAY),
        micros.rem_euclid(MICROS_PER_DAY),
    );
    let date = civil(days, 0);
    let (date, era) = match date.strip_suffix(" BC") {
        Some(date) => (date, " BC"),
        None => (date.as_str(), ""),
    };
    let seconds = within / 1_000_000;
    let (offset, ty) = if zoned {
        ("+00", "timestamptz")
    } else {
        ("", "timestamp")
    };
    Some(format!(
        "'{date} {:02}:{:02}:{:02}.{:06}{offset}{era}'::{ty}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        within % 1_000_000
    ))
}

/// `yyyy-mm-dd hh:mm:ss[.ffffff]` of microseconds since 1970-01-01.
fn instant(micros: i128) -> String {
    let day = i128::from(MICROS_PER_DAY);
    let (days, within) = (micros.div_euclid(day), micros.rem_euclid(day));
    // Any i64 of microseconds, shifted by an epoch, is well within an i64 of days.
    civil(days as i64, within as i64)
}

/// The proleptic Gregorian date of `days` since 1970-01-01, with the time of day `micros` when
/// it is not 0, as PostgreSQL writes it (`44-03-15 BC` for the astronomical year -43).
fn civil(days: i64, micros: i64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (year, era) = if year <= 0 {
        (1 - year, " BC")
    } else {
        (year, "")
    };
    let mut text = format!("{year:04}-{month:02}-{day:02}");
    if micros != 0 {
        let seconds = micros / 1_000_000;
        text.push_str(&format!(
            " {:02}:{:02}:{:02}",
            seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        ));
        if micros % 1_000_000 != 0 {
            text.push_str(&format!(".{:06}", micros % 1_000_000));
        }
    }
    text.push_str(era);
    text
}

/// Days since 1970-01-01 of `yyyy-mm-dd`.
pub fn parse_date(text: &str) -> Option<i32> {
    let mut parts = text.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: i64 = parts.next()?.parse().ok()?;
    let day: i64 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || year.abs() > 10_000_000 {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    i32::try_from(era * 146_097 + doe - 719_468).ok()
}

/// Microseconds since 1970-01-01T00:00:00 of `yyyy-mm-dd[( |T)hh:mm[:ss[.ffffff]]]`, in UTC.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let (date, time) = match text.find([' ', 'T']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let days = i64::from(parse_date(date)?);
    let mut micros = 0i64;
    if let Some(time) = time {
        let (clock, fraction) = time.split_once('.').unwrap_or((time, ""));
        let mut parts = clock.split(':');
        let hours: i64 = parts.next()?.parse().ok()?;
        let minutes: i64 = parts.next()?.parse().ok()?;
        let seconds: i64 = parts.next().map_or(Some(0), |s| s.parse().ok())?;
        if !(0..24).contains(&hours) || !(0..60).contains(&minutes) || !(0..61).contains(&seconds) {
            return None;
        }
        if fraction.len() > 6 || !fraction.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let fraction: i64 = format!("{fraction:0<6}").parse().ok()?;
        micros = ((hours * 60 + minutes) * 60 + seconds) * 1_000_000 + fraction;
    }
    days.checked_mul(MICROS_PER_DAY)?.checked_add(micros)
}

/// The time zone of this machine, as the JVM finds its default on Linux: `TZ` (a name, or a
/// path under `zoneinfo/`), else `/etc/timezone`, else the zone that `/etc/localtime` links to;
/// UTC when none says. A read gives it to the session in which a `timestamp` becomes an
/// instant, as Spark's JDBC source reads one in the JVM's time zone.
pub fn local_zone() -> String {
    let named = |text: &str| {
        let text = text.trim().trim_start_matches(':');
        let name = text.rsplit_once("zoneinfo/").map_or(text, |(_, name)| name);
        (!name.is_empty()).then(|| name.to_string())
    };
    let from_env = std::env::var("TZ").ok().and_then(|tz| named(&tz));
    let from_file = || {
        std::fs::read_to_string("/etc/timezone")
            .ok()
            .and_then(|text| named(&text))
    };
    let from_link = || {
        let target = std::fs::read_link("/etc/localtime").ok()?;
        let target = target.to_str()?;
        target.contains("zoneinfo/").then(|| named(target))?
    };
    from_env
        .or_else(from_file)
        .or_else(from_link)
        .unwrap_or_else(|| "UTC".to_string())
}

/// Whether the time zone `zone` is UTC under one of its names in the time zone database.
pub fn is_utc(zone: &str) -> bool {
    let name = zone.strip_prefix("Etc/").unwrap_or(zone);
    [
        "UTC",
        "UCT",
        "Universal",
        "Zulu",
        "GMT",
        "GMT0",
        "GMT+0",
        "GMT-0",
        "Greenwich",
    ]
    .contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_as_dates_and_timestamps() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("2000-01-01"), Some(EPOCH_DAYS));
        assert_eq!(parse_date("1969-12-31"), Some(-1));
        assert_eq!(parse_date("0001-01-01"), Some(-719_162));
        assert_eq!(parse_date("9999-12-31"), Some(2_932_896));
        assert_eq!(
            parse_timestamp("1970-01-02 00:00:01.5"),
            Some(86_401_500_000)
        );
        assert_eq!(
            parse_timestamp("9999-12-31 23:59:59.999999"),
            Some(253_402_300_799_999_999)
        );
        assert_eq!(parse_timestamp("soon"), None);
        assert_eq!(parse_timestamp("2024-01-01 25:00"), None);
    }

    #[test]
    fn every_finite_value_that_spark_holds_reads_and_only_those() {
        // PostgreSQL's first and last dates, and the years around 9999 that Spark's literals
        // name in the zones east and west of UTC.
        for days in [
            POSTGRES_DAYS.start,
            POSTGRES_DAYS.end - 1,
            2_921_939,
            2_921_940,
        ] {
            assert_eq!(date_from_postgres(days), Ok(days + EPOCH_DAYS));
        }
        assert!(date_from_postgres(i32::MAX).is_err_and(|e| e.starts_with("an infinite date")));
        assert!(date_from_postgres(i32::MIN).is_err_and(|e| e.starts_with("an infinite date")));
        // PostgreSQL's first timestamp, 4714-11-24 BC, and 10000-01-01 04:59:59.999999 UTC
        // (9999-12-31 23:59:59.999999 in New York).
        let first = POSTGRES_MICROS.start;
        assert_eq!(timestamp_from_postgres(first), Ok(first + EPOCH_MICROS));
        let new_york = 253_402_318_799_999_999 - EPOCH_MICROS;
        assert_eq!(
            timestamp_from_postgres(new_york),
            Ok(253_402_318_799_999_999)
        );
        // Spark's last instant, and one past it, in 294247.
        let last = i64::MAX - EPOCH_MICROS;
        assert_eq!(timestamp_from_postgres(last), Ok(i64::MAX));
        assert_eq!(
            timestamp_from_postgres(last + 1),
            Err(
                "the timestamp 294247-01-10 04:00:54.775808, after Spark's last instant, \
                 294247-01-10 04:00:54.775807 UTC"
                    .into()
            )
        );
        // 294276 AD: the old shift wrapped it to 290,000 years before Christ.
        assert!(timestamp_from_postgres(POSTGRES_MICROS.end - 1)
            .is_err_and(|e| e.starts_with("the timestamp 294276-12-31 23:59:59.999999, after")));
        assert!(timestamp_from_postgres(i64::MAX)
            .is_err_and(|e| e.starts_with("an infinite timestamp")));
    }

    #[test]
    fn values_that_postgresql_cannot_hold_are_not_shifted_into_others() {
        assert_eq!(date_to_postgres(EPOCH_DAYS), Some(0));
        assert_eq!(date_to_postgres(i32::MIN), None);
        assert_eq!(date_to_postgres(i32::MAX), None);
        assert_eq!(timestamp_to_postgres(EPOCH_MICROS), Some(0));
        // Shifted, these would be -infinity and a wrapped instant.
        assert_eq!(timestamp_to_postgres(i64::MIN + EPOCH_MICROS), None);
        assert_eq!(timestamp_to_postgres(-9_223_372_036_854_775_000), None);
        // Spark's last microsecond, in 294247, is before PostgreSQL's last.
        assert_eq!(
            timestamp_to_postgres(i64::MAX),
            Some(i64::MAX - EPOCH_MICROS)
        );
        assert_eq!(
            timestamp_out_of_range(i64::MIN),
            "the timestamp 290309-12-21 19:59:05.224192 BC, outside PostgreSQL's range of \
             4714-11-24 BC to 5874897-12-31 for a date and to 294276-12-31 for a timestamp"
        );
    }
}
