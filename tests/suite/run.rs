//! Runs the groups: the Spark lane one at a time, the others on the remaining jobs.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::groups::{Group, Lane};
use crate::Outcome;

/// Runs every group and returns how each ended, in the order they ended.
pub fn run_lanes(groups: Vec<Group>, jobs: usize) -> Vec<Outcome> {
    let logs = log_directory();
    let (spark, other): (Vec<Group>, Vec<Group>) =
        groups.into_iter().partition(|g| g.lane == Lane::Spark);
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    // One queue per lane: the Spark lane has one worker, the other lane the rest of the jobs.
    for (queue, workers_of_lane) in [(spark, 1), (other, jobs - 1)] {
        let queue = Arc::new(Mutex::new(VecDeque::from(queue)));
        for _ in 0..workers_of_lane {
            let (queue, outcomes, logs) = (queue.clone(), outcomes.clone(), logs.clone());
            workers.push(std::thread::spawn(move || loop {
                let Some(group) = queue.lock().expect("the queue").pop_front() else {
                    break;
                };
                let outcome = run_group(&group, &logs);
                outcomes.lock().expect("the outcomes").push(outcome);
            }));
        }
    }
    for worker in workers {
        worker.join().expect("a lane's thread ends");
    }
    Arc::try_unwrap(outcomes)
        .ok()
        .expect("no lane holds the outcomes")
        .into_inner()
        .expect("the outcomes")
}

/// `target/suite`, beside the runner's own binary (`target/debug/suite`).
fn log_directory() -> PathBuf {
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("target"));
    let logs = target.join("suite");
    std::fs::create_dir_all(&logs).expect("create target/suite");
    logs
}

/// Runs one group with its output in its log; prints the log when it fails.
fn run_group(group: &Group, logs: &Path) -> Outcome {
    let log_path = logs.join(format!("{}.log", group.name.replace('/', "-")));
    println!("suite: {} started ({} lane)", group.name, group.lane.name());
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
