//! The peak resident set size over a baseline, from /proc/self/status.

/// The peak resident set size of this process over a baseline taken at `start`.
pub(super) struct Rss {
    pub(super) baseline: Option<u64>,
}

impl Rss {
    /// Takes the baseline: on Linux the peak is reset first (`/proc/self/clear_refs`), so that
    /// the baseline is the current RSS; where it cannot be reset, the peak so far.
    pub(super) fn start() -> Rss {
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let status = std::fs::read_to_string("/proc/self/status").ok();
        let key = if reset { "VmRSS" } else { "VmHWM" };
        Rss {
            baseline: status.as_deref().and_then(|s| status_bytes(s, key)),
        }
    }

    /// The peak since `start` over the baseline: `None` where the platform does not tell.
    pub(super) fn peak_over_baseline(&self) -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let peak = status_bytes(&status, "VmHWM")?;
        Some(peak.saturating_sub(self.baseline?))
    }
}

/// A field of `/proc/self/status` in bytes, such as `VmHWM:  123456 kB`.
pub(super) fn status_bytes(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        if name.trim() != key {
            return None;
        }
        let mut words = value.split_whitespace();
        let number: u64 = words.next()?.parse().ok()?;
        match words.next() {
            Some("kB") => number.checked_mul(1024),
            None => Some(number),
            Some(_) => None,
        }
    })
}
