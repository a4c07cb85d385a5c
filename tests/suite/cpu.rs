//! How busy the machine's processors were: on two cores the suite is bound by processor time,
//! and this share says whether running more groups at once could help (it cannot near 100 %).
//! Read from `/proc/stat` (Linux); the figure covers every process of the machine, the suite's
//! and any other.

/// The processors' busy and total time since boot, in clock ticks (Linux).
#[derive(Clone, Copy)]
pub struct Sample {
    busy: u64,
    total: u64,
}

pub fn sample() -> Option<Sample> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse(&stat)
}

/// The `cpu` line: user nice system idle iowait irq softirq steal ...; idle and iowait are the
/// time the processors had nothing to run.
fn parse(stat: &str) -> Option<Sample> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    if ticks.len() < 5 {
        return None;
    }
    let total: u64 = ticks.iter().sum();
    Some(Sample {
        busy: total - ticks[3] - ticks[4],
        total,
    })
}

/// The share of the processors' time that was busy between two samples, in percent.
pub fn busy_percent(from: Option<Sample>, to: Option<Sample>) -> Option<f64> {
    let (from, to) = (from?, to?);
    let total = to.total.checked_sub(from.total).filter(|t| *t > 0)?;
    let busy = to.busy.checked_sub(from.busy)?;
    Some(100.0 * busy as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_share_leaves_out_idle_and_iowait() {
        let before = parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5\n").expect("a sample");
        let after = parse("cpu  250 0 100 850 100 0 0 0 0 0\n").expect("a sample");
        // 200 busy ticks (150 user, 50 system) of 300.
        let share = busy_percent(Some(before), Some(after)).expect("a share");
        assert!((share - 66.666).abs() < 0.01, "{share}");
        assert!(parse("intr 1 2 3\n").is_none());
        assert!(busy_percent(None, Some(after)).is_none());
    }
}
