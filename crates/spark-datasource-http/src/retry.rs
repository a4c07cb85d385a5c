//! When a request is tried again, and how long a task waits first: the API's `Retry-After`
//! where it gives one, else exponential backoff with full jitter (a random wait up to a doubling
//! ceiling, so that the tasks of a job do not all come back at once). A wait ends early when
//! the task is cancelled.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use spark_datasource::{Error, Result};

/// How a failed request is tried again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retries {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// The ceiling of the first wait, in milliseconds; it doubles each try.
    pub base_ms: u64,
    /// The highest ceiling of a wait, and of a `Retry-After`, in milliseconds.
    pub cap_ms: u64,
}

impl Default for Retries {
    /// 8 tries, waits up to 0.25 s, 0.5 s, 1 s ... 30 s.
    fn default() -> Self {
        Retries {
            attempts: 8,
            base_ms: 250,
            cap_ms: 30_000,
        }
    }
}

/// Whether an answer of `status` is tried again: too many requests, and the server's
/// failures that pass (500, 502, 503, 504).
pub fn is_retried(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

/// The wait before try `attempt + 1` after an answer: its `Retry-After` (seconds, or an HTTP
/// date), capped, else the backoff.
pub fn wait_of(retry_after: Option<&str>, retries: &Retries, attempt: u32) -> Duration {
    match retry_after.and_then(parse_retry_after) {
        Some(wait) => wait.min(Duration::from_millis(retries.cap_ms)),
        None => backoff(retries, attempt),
    }
}

/// A random wait up to `base * 2^attempt`, at most the cap.
pub fn backoff(retries: &Retries, attempt: u32) -> Duration {
    let ceiling = retries
        .base_ms
        .saturating_mul(1u64 << attempt.min(32))
        .min(retries.cap_ms);
    Duration::from_millis(random() % (ceiling + 1))
}

/// Sleeps `wait` in short steps, returning [`Error::Cancelled`] as soon as `cancelled` says so.
///
/// # Errors
/// [`Error::Cancelled`].
pub fn sleep(wait: Duration, cancelled: &dyn Fn() -> bool) -> Result<()> {
    const STEP: Duration = Duration::from_millis(50);
    let mut left = wait;
    while !left.is_zero() {
        if cancelled() {
            return Err(Error::Cancelled);
        }
        let step = left.min(STEP);
        std::thread::sleep(step);
        left -= step;
    }
    Ok(())
}

/// `Retry-After: 120` or `Retry-After: Wed, 21 Oct 2015 07:28:00 GMT` (RFC 9110).
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = http_date(value)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since 1970 of an IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`.
fn http_date(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = months.iter().position(|m| m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let clock: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [hours, minutes, seconds] = clock.as_slice() else {
        return None;
    };
    // Howard Hinnant's days_from_civil.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    u64::try_from(days * 86_400 + hours * 3600 + minutes * 60 + seconds).ok()
}

/// A number for jitter (not for secrets): xorshift over the clock and a counter.
fn random() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    let mut x = COUNTER.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed) ^ nanos;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_and_as_a_date_and_capped() {
        let retries = Retries::default();
        assert_eq!(wait_of(Some("2"), &retries, 0), Duration::from_secs(2));
        assert_eq!(wait_of(Some("3600"), &retries, 0), Duration::from_secs(30));
        assert_eq!(
            http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        // A date in the past is no wait.
        assert_eq!(
            wait_of(Some("Sun, 06 Nov 1994 08:49:37 GMT"), &retries, 0),
            Duration::ZERO
        );
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn backoff_stays_under_a_doubling_ceiling() {
        let retries = Retries {
            attempts: 5,
            base_ms: 100,
            cap_ms: 1000,
        };
        for attempt in 0..8 {
            let ceiling = (100u64 << attempt).min(1000);
            for _ in 0..50 {
                assert!(backoff(&retries, attempt) <= Duration::from_millis(ceiling));
            }
        }
    }

    #[test]
    fn a_cancelled_wait_ends_at_once() {
        let started = std::time::Instant::now();
        let result = sleep(Duration::from_secs(10), &|| true);
        assert!(matches!(result, Err(Error::Cancelled)));
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
