//! What one run counted, and the time spent inside the library, which the host's call
//! observer sums.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arrow_data::ArrayData;
use sparkds::CallObserver;

use super::measure::Measure;
use super::reference::REFERENCE;

/// The time spent inside the library's functions, as `sparkds` reports each call. The
/// in-process reference is left out: what it spent in the connector it reports itself.
#[derive(Debug, Default)]
pub(super) struct LibraryTime {
    nanos: AtomicU64,
}

impl CallObserver for LibraryTime {
    fn called(&self, function: &'static str, elapsed: Duration) {
        if function != REFERENCE {
            let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
            self.nanos.fetch_add(nanos, Ordering::Relaxed);
        }
    }
}

impl LibraryTime {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

/// What one run counted.
#[derive(Debug)]
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
    started: Instant,
    library_before: Duration,
}

impl Counts {
    /// Starts the clocks of a run.
    pub(super) fn start(time: &LibraryTime) -> Counts {
        Counts {
            rows: 0,
            batches: 0,
            bytes: 0,
            wall: Duration::ZERO,
            library: Duration::ZERO,
            outside: Duration::ZERO,
            filters_accepted: None,
            started: Instant::now(),
            library_before: time.now(),
        }
    }

    /// Stops the clocks: the wall time without what was outside, and the library's time.
    pub(super) fn finish(mut self, time: &LibraryTime) -> Counts {
        self.wall = self.started.elapsed().saturating_sub(self.outside);
        self.library += time.now().saturating_sub(self.library_before);
        self
    }

    /// Counts the rows of `data`, a batch, and the bytes of its kept columns (all of them
    /// without `kept`).
    pub(super) fn batch(&mut self, data: &ArrayData, kept: Option<&[usize]>) {
        self.rows += data.len() as u64;
        self.batches += 1;
        self.bytes += match kept {
            Some(indices) => indices
                .iter()
                .filter_map(|&i| data.child_data().get(i))
                .map(buffer_bytes)
                .sum(),
            None => buffer_bytes(data),
        };
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

/// The sum of the lengths of the buffers of an array and of its children.
fn buffer_bytes(data: &ArrayData) -> u64 {
    let own: usize = data.buffers().iter().map(|b| b.len()).sum();
    let nulls = data.nulls().map_or(0, |n| n.buffer().len());
    (own + nulls) as u64 + data.child_data().iter().map(buffer_bytes).sum::<u64>()
}
