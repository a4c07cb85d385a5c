//! Runs the groups on `jobs` workers: each takes the next group waiting, in order.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use crate::groups::Group;
use crate::Outcome;

/// Runs every group and returns how each ended, in the order they ended.
pub fn run_all(groups: Vec<Group>, jobs: usize) -> Vec<Outcome> {
    let logs = crate::suite_directory();
    let waiting = Mutex::new(groups.into_iter());
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let next = waiting.lock().expect("the groups waiting").next();
                let Some(group) = next else { break };
                let outcome = run_group(&group, &logs);
                outcomes.lock().expect("the outcomes").push(outcome);
            });
        }
    });
    outcomes.into_inner().expect("the outcomes")
}

/// Runs one group with its output in its log; prints the log when it fails.
fn run_group(group: &Group, logs: &Path) -> Outcome {
    let log_path = logs.join(format!("{}.log", group.name.replace('/', "-")));
    println!("suite: {} started", group.name);
    let started = Instant::now();
    let passed = File::create(&log_path)
        .and_then(|log| {
            Command::new(&group.program)
                .args(&group.args)
                .current_dir(&group.directory)
                .envs(group.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .status()
        })
        .map(|status| status.success())
        .unwrap_or_else(|e| {
            eprintln!("suite: cannot run {}: {e}", group.program.display());
            false
        });
    let seconds = started.elapsed().as_secs_f64();
    if passed {
        println!("suite: {} passed in {seconds:.1} s", group.name);
    } else {
        let printed = std::fs::read_to_string(&log_path).unwrap_or_default();
        println!(
            "suite: {} FAILED in {seconds:.1} s; its output ({}):\n{printed}",
            group.name,
            log_path.display()
        );
    }
    group.outcome(passed, seconds)
}
