//! What one run counted, and the time spent inside the library.

use std::time::{Duration, Instant};

use super::Measure;

/// What one run counted.
#[derive(Debug, Default)]
pub(super) struct Counts {
    pub(super) rows: u64,
    pub(super) batches: u64,
    pub(super) bytes: u64,
    pub(super) wall: Duration,
    pub(super) library: Duration,
    /// The time of the calls of the in-process reference that the library did not measure as
    /// the connector's: the pulls of the batches that a write writes, and the calls themselves.
    /// It is left out of `wall`.
    pub(super) outside: Duration,
    /// What `push_filters` answered, when filters were offered to a library that has it.
    pub(super) filters_accepted: Option<Vec<bool>>,
}

impl Counts {
    /// Runs `f`, a call into the library, and adds its time to the library's.
    pub(super) fn in_library<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let result = f();
        self.library += start.elapsed();
        result
    }

    pub(super) fn measure(
        &self,
        protocol: &str,
        checks: bool,
        in_process: bool,
        peak_rss_bytes: Option<u64>,
    ) -> Measure {
        let seconds = self.wall.as_secs_f64();
        let rate = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let library_seconds = self.library.as_secs_f64().min(seconds);
        Measure {
            protocol: protocol.to_string(),
            checks,
            in_process,
            rows: self.rows,
            batches: self.batches,
            arrow_bytes: self.bytes,
            seconds,
            library_seconds,
            host_seconds: seconds - library_seconds,
            rows_per_second: rate(self.rows),
            arrow_bytes_per_second: rate(self.bytes),
            batches_per_second: rate(self.batches),
            peak_rss_bytes,
        }
    }
}
