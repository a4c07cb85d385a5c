//! Runs the groups on `jobs` workers: each takes the first group waiting whose exclusive
//! resource, if any, no running group holds.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use crate::groups::Group;
use crate::Outcome;

/// What the workers share: the groups waiting and the resources held.
struct Board {
    waiting: Vec<Group>,
    held: HashSet<&'static str>,
}

/// Runs every group and returns how each ended, in the order they ended.
pub fn run_all(groups: Vec<Group>, jobs: usize) -> Vec<Outcome> {
    let logs = log_directory();
    let board = Mutex::new(Board {
        waiting: groups,
        held: HashSet::new(),
    });
    let released = Condvar::new();
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                while let Some(group) = take(&board, &released) {
                    let outcome = run_group(&group, &logs);
                    outcomes.lock().expect("the outcomes").push(outcome);
                    if let Some(resource) = group.exclusive {
                        board.lock().expect("the board").held.remove(resource);
                        released.notify_all();
                    }
                }
            });
        }
    });
    outcomes.into_inner().expect("the outcomes")
}

/// The next group this worker may run, waiting while every group left needs a resource that a
/// running group holds; `None` when no group is left.
fn take(board: &Mutex<Board>, released: &Condvar) -> Option<Group> {
    let mut board = board.lock().expect("the board");
    loop {
        if board.waiting.is_empty() {
            return None;
        }
        let free = board
            .waiting
            .iter()
            .position(|g| g.exclusive.is_none_or(|r| !board.held.contains(r)));
        if let Some(index) = free {
            let group = board.waiting.remove(index);
            if let Some(resource) = group.exclusive {
                board.held.insert(resource);
            }
            return Some(group);
        }
        board = released.wait(board).expect("the board");
    }
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
