//! The table that ends a run: each group's time, slowest first, and where the rest went.

use std::time::Duration;

use crate::Outcome;

pub fn print_table(outcomes: &[Outcome], compilation: Duration, wall: Duration) {
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
        "  {sum:>8.1}  the {} groups one after another; side by side they took {running:.1}",
        outcomes.len()
    );
    println!("  {:>8.1}  compilation", compilation.as_secs_f64());
    println!("  {:>8.1}  the whole run", wall.as_secs_f64());
}
