//! The table that ends a run: each group's time, slowest first, and where the rest went.

use std::time::Duration;

use crate::Outcome;

/// How busy the processors were (percent of their time, `None` where `/proc/stat` is missing).
pub struct Busy {
    pub compilation: Option<f64>,
    pub groups: Option<f64>,
}

pub fn print_table(outcomes: &[Outcome], compilation: Duration, wall: Duration, busy: Busy) {
    let mut sorted: Vec<&Outcome> = outcomes.iter().collect();
    sorted.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
    println!("\nsuite: time per test group (seconds; groups under a second not listed)");
    for outcome in sorted.iter().filter(|o| o.seconds >= 1.0) {
        let state = if outcome.passed { "" } else { "  FAILED" };
        println!("  {:>8.1}  {}{state}", outcome.seconds, outcome.name);
    }
    let sum: f64 = outcomes.iter().map(|o| o.seconds).sum();
    let running = wall.saturating_sub(compilation).as_secs_f64();
    println!(
        "  {sum:>8.1}  the {} groups one after another; side by side they took {running:.1}{}",
        outcomes.len(),
        busy_note(busy.groups)
    );
    println!(
        "  {:>8.1}  compilation{}",
        compilation.as_secs_f64(),
        busy_note(busy.compilation)
    );
    println!("  {:>8.1}  the whole run", wall.as_secs_f64());
}

fn busy_note(percent: Option<f64>) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    percent.map_or_else(String::new, |p| {
        format!(" ({cores} cores, busy {p:.0} % of the time)")
    })
}
