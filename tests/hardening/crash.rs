//! Crashes during writes: a child process runs the write and commit protocol of the generated
//! sample on a table, and is killed (SIGKILL) at every step of it, then at moments inside the
//! calls that follow a step (the writes, `commit` and `abort`). After each kill the table must
//! read as its old contents or its new ones: never a part, never a row twice.
//! A streaming write and a streaming read are killed and restarted from the host's checkpoint
//! until they finish: every row exactly once.
//!
//! The child is this test binary again, running `crash_child_process` with the plan in its
//! environment. `SPARKDS_CRASH_KILLS=<n>` sets the number of kills after each step with growing
//! delays (default 6).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use spark_datasource_abi::v1::{SPARK_DS_NO_EPOCH, SPARK_DS_WRITE_APPEND, SPARK_DS_WRITE_TRUNCATE};
use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::Int64Type;

use crate::generated_input::{library_path, sample_batch, NAME};
use crate::helpers::build_dir;
use crate::raw::{task, Raw};

/// Tasks of each write, batches of each task, rows of each batch.
const TASKS: usize = 4;
const BATCHES: usize = 3;
const ROWS: usize = 20;

const PLAN_VAR: &str = "SPARKDS_CRASH_PLAN";

/// The ids that write `generation` writes.
fn ids_of(generation: u64) -> BTreeSet<i64> {
    (0..TASKS)
        .flat_map(|t| {
            (0..BATCHES * ROWS)
                .map(move |r| (generation * 100_000 + t as u64 * 1000) as i64 + r as i64)
        })
        .collect()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Append,
    Truncate,
    Abort,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Append => "append",
            Mode::Truncate => "truncate",
            Mode::Abort => "abort",
        }
    }

    fn parse(name: &str) -> Mode {
        match name {
            "append" => Mode::Append,
            "truncate" => Mode::Truncate,
            _ => Mode::Abort,
        }
    }
}

/// The steps after which the child may stop and wait to be killed, in order.
fn steps() -> Vec<String> {
    let mut steps = vec!["created".to_string()];
    for t in 0..TASKS {
        steps.push(format!("task-{t}-writing"));
        steps.push(format!("task-{t}-committed"));
    }
    steps.push("all-tasks-committed".to_string());
    steps.push("published".to_string());
    steps
}

/// One write of `generation` on `table`, stopping after `stop` (if any) until killed.
fn run_write(raw: &Raw, table: &Path, mode: Mode, generation: u64, stop: Option<&str>) {
    // Only a child that stops somewhere, or announces every step (`*`), says where it is.
    let reached = |step: &str| {
        if stop.is_none() {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "crash-step {step}");
        if stop == Some(step) {
            let _ = writeln!(out, "crash-waiting {step}");
            let _ = out.flush();
            drop(out);
            loop {
                std::thread::sleep(Duration::from_secs(60));
            }
        }
        let _ = out.flush();
    };
    let options = vec![("path".to_string(), table.display().to_string())];
    let source = raw.create(NAME, &options).expect("create");
    let schema = raw.schema(source).expect("schema").expect("a schema");
    let spark_mode = if mode == Mode::Truncate {
        SPARK_DS_WRITE_TRUNCATE
    } else {
        SPARK_DS_WRITE_APPEND
    };
    let query = format!("crash-{generation}");
    let writer = raw
        .create_writer_of_query(source, &schema, spark_mode, false, &query)
        .expect("create_writer");
    let state = raw.serialize_writer(writer).expect("serialize_writer");
    reached("created");
    let mut messages = Vec::new();
    for t in 0..TASKS {
        let task = task(t as i64, t as i32, None);
        let data_writer = raw
            .create_data_writer(&task, &state, SPARK_DS_NO_EPOCH)
            .expect("create_data_writer");
        for b in 0..BATCHES {
            let start = (generation * 100_000 + t as u64 * 1000) as i64 + (b * ROWS) as i64;
            raw.write(data_writer, &sample_batch(&schema, start, ROWS))
                .expect("write");
            if b == 0 {
                reached(&format!("task-{t}-writing"));
            }
        }
        messages.push(
            raw.commit_data_writer(data_writer)
                .expect("commit_data_writer"),
        );
        raw.close_data_writer(data_writer);
        reached(&format!("task-{t}-committed"));
    }
    reached("all-tasks-committed");
    if mode == Mode::Abort {
        raw.abort(writer, SPARK_DS_NO_EPOCH, &messages)
            .expect("abort");
    } else {
        raw.commit(writer, SPARK_DS_NO_EPOCH, &messages)
            .expect("commit");
    }
    raw.close_writer(writer);
    raw.close(source);
    reached("published");
}

/// The child's side: runs the write of its plan. Ignored: only the tests above run it, in a
/// child process, with `--ignored`.
#[test]
#[ignore = "the child process of the crash tests, which run it with its plan"]
fn crash_child_process() {
    let Ok(plan) = std::env::var(PLAN_VAR) else {
        return; // Not a child: nothing to do.
    };
    let parts: Vec<&str> = plan.splitn(5, '|').collect();
    let [library, table, mode, generation, stop] = parts[..] else {
        panic!("{PLAN_VAR} must be library|table|mode|generation|stop, got {plan}");
    };
    let raw = Raw::load(Path::new(library));
    // `none`: run silently; `*`: announce every step, never stop; else stop after that step.
    let stop = (stop != "none").then_some(stop);
    run_write(
        &raw,
        Path::new(table),
        Mode::parse(mode),
        generation.parse().expect("a generation"),
        stop,
    );
}

fn spawn_child(table: &Path, mode: Mode, generation: u64, stop: Option<&str>) -> Child {
    let plan = format!(
        "{}|{}|{}|{generation}|{}",
        library_path().display(),
        table.display(),
        mode.name(),
        stop.unwrap_or("none")
    );
    Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "crash::crash_child_process",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PLAN_VAR, plan)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the child")
}

/// Kills the child once it waits after `stop`.
fn kill_at_step(table: &Path, mode: Mode, generation: u64, stop: &str) {
    let mut child = spawn_child(table, mode, generation, Some(stop));
    let stdout = child.stdout.take().expect("the child's stdout");
    let waiting = format!("crash-waiting {stop}");
    let reached = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.ends_with(&waiting));
    // SIGKILL: no destructor, no handler, nothing of the library runs after it.
    child.kill().expect("SIGKILL the child");
    let _ = child.wait();
    assert!(reached, "the child never reached step `{stop}` ({mode:?})");
}

/// Kills the child `delay` after it passed `step` without stopping, so that the kill lands
/// inside the calls that follow (the writes, `commit`, `abort`); returns whether the child had
/// finished already.
fn kill_after(table: &Path, mode: Mode, generation: u64, step: &str, delay: Duration) -> bool {
    let mut child = spawn_child(table, mode, generation, Some("*"));
    let stdout = child.stdout.take().expect("the child's stdout");
    let passed = format!("crash-step {step}");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    // The test harness may print its own words before the first step, on the same line.
    let reached = lines.any(|line| line.ends_with(&passed));
    std::thread::sleep(delay);
    let finished = matches!(child.try_wait(), Ok(Some(_)));
    let _ = child.kill();
    let _ = child.wait();
    assert!(reached, "the child never passed step `{step}` ({mode:?})");
    finished
}

/// The ids of the table as a reader sees them, sorted; panics on a row read twice.
fn table_ids(raw: &Raw, table: &Path) -> BTreeSet<i64> {
    let options = vec![("path".to_string(), table.display().to_string())];
    let (state, partitions) = raw.plan_batch_read(NAME, &options);
    let mut ids = Vec::new();
    for (i, partition) in partitions.iter().enumerate() {
        let task = task(i as i64, i as i32, None);
        let batches = raw
            .read(&task, &state, partition, usize::MAX)
            .unwrap_or_else(|e| panic!("the table reads after a kill: {e}"));
        for batch in batches {
            let column = batch.column_by_name("id").expect("an id column");
            ids.extend(column.as_primitive::<Int64Type>().values().iter().copied());
        }
    }
    let set: BTreeSet<i64> = ids.iter().copied().collect();
    assert_eq!(set.len(), ids.len(), "a row was read twice after a kill");
    set
}

/// What a reader may see after a kill of write `generation` over `old`.
fn check_old_or_new(
    raw: &Raw,
    table: &Path,
    old: &BTreeSet<i64>,
    mode: Mode,
    generation: u64,
    when: &str,
) -> BTreeSet<i64> {
    let new: BTreeSet<i64> = match mode {
        Mode::Append => old.union(&ids_of(generation)).copied().collect(),
        Mode::Truncate => ids_of(generation),
        Mode::Abort => old.clone(),
    };
    let seen = table_ids(raw, table);
    assert!(
        seen == *old || seen == new,
        "{mode:?} write {generation} killed {when}: the table holds {} rows, neither the old {} nor the new {}",
        seen.len(),
        old.len(),
        new.len()
    );
    seen
}

fn kills_per_mode() -> u32 {
    std::env::var("SPARKDS_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6)
}

fn fresh_table(name: &str) -> PathBuf {
    let table = build_dir().join(name);
    std::fs::create_dir_all(&table).expect("a table directory");
    table
}

#[test]
fn sigkill_at_every_step_of_a_write_leaves_the_old_or_the_new_contents() {
    let raw = Raw::load(library_path());
    let table = fresh_table("crash-steps");
    // The old contents: one write that completed.
    run_write(&raw, &table, Mode::Append, 1, None);
    let mut old = table_ids(&raw, &table);
    assert_eq!(old, ids_of(1));
    let mut generation = 2;
    let mut kills = 0;
    for mode in [Mode::Append, Mode::Truncate, Mode::Abort] {
        for step in steps() {
            kill_at_step(&table, mode, generation, &step);
            kills += 1;
            old = check_old_or_new(
                &raw,
                &table,
                &old,
                mode,
                generation,
                &format!("after `{step}`"),
            );
            generation += 1;
        }
    }
    println!("crash: {kills} kills at every step of append, overwrite and abort writes; the table read as old or new every time");
}

#[test]
fn sigkill_inside_the_calls_of_a_write_leaves_the_old_or_the_new_contents() {
    let raw = Raw::load(library_path());
    let table = fresh_table("crash-moments");
    run_write(&raw, &table, Mode::Append, 1, None);
    let mut old = table_ids(&raw, &table);
    let mut generation = 2;
    let (mut kills, mut finished, mut published, mut kept) = (0, 0, 0, 0);
    let n = kills_per_mode();
    for mode in [Mode::Append, Mode::Truncate, Mode::Abort] {
        for step in ["created", "task-1-writing", "all-tasks-committed"] {
            for i in 0..n {
                // 0, 50 µs, 200 µs, 450 µs...: the calls after the step take about a millisecond.
                let delay = Duration::from_micros(50 * u64::from(i * i));
                if kill_after(&table, mode, generation, step, delay) {
                    finished += 1;
                }
                kills += 1;
                let when = format!("{delay:?} after `{step}`");
                let seen = check_old_or_new(&raw, &table, &old, mode, generation, &when);
                if step == "all-tasks-committed" && mode != Mode::Abort {
                    // Killed around `commit`: before it published, or after.
                    if seen == old {
                        kept += 1;
                    } else {
                        published += 1;
                    }
                }
                old = seen;
                generation += 1;
            }
        }
    }
    println!(
        "crash: {kills} kills inside the writes, commits and aborts that follow a step ({finished} after the child's end); around `commit`, {kept} left the old contents and {published} the new; the table read as old or new every time"
    );
}

#[test]
fn what_a_killed_write_staged_is_removed_by_a_commit_once_abandoned() {
    let raw = Raw::load(library_path());
    let table = fresh_table("crash-staging");
    kill_at_step(&table, Mode::Append, 1, "all-tasks-committed");
    let orphans = files_under(&table.join("_staging"));
    assert!(!orphans.is_empty(), "the killed write staged nothing");

    // A commit keeps what another query staged recently: that query may still be running.
    run_write(&raw, &table, Mode::Append, 2, None);
    assert_eq!(files_under(&table.join("_staging")), orphans);

    // Once unchanged for a day, the killed write's files are abandoned: the next commit
    // removes them, and a completed write leaves nothing staged.
    age_tree(
        &table.join("_staging"),
        Duration::from_secs(2 * 24 * 60 * 60),
    );
    run_write(&raw, &table, Mode::Append, 3, None);
    let left = files_under(&table.join("_staging"));
    assert!(
        left.is_empty(),
        "staged files left after an abandoned write: {left:?}"
    );
}

/// Sets the modification time of `dir` and of everything under it to `age` ago.
fn age_tree(dir: &Path, age: Duration) {
    let when = std::time::SystemTime::now() - age;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().is_dir() {
            age_tree(&entry.path(), age);
        }
        let file = std::fs::File::open(entry.path()).expect("open a staged entry");
        file.set_modified(when).expect("set its modification time");
    }
    let file = std::fs::File::open(dir).expect("open a staging directory");
    file.set_modified(when).expect("set its modification time");
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

const STREAM_VAR: &str = "SPARKDS_CRASH_STREAM";

/// Epochs of the streaming write, and micro-batches of the streaming read.
const EPOCHS: i64 = 8;
const MICRO_BATCHES: usize = 8;

/// The lines of a log file of the host's checkpoint, each appended and synced after its step.
fn log_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn append_synced(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open the log");
    writeln!(file, "{line}").expect("append to the log");
    file.sync_all().expect("sync the log");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A streaming write restarted as Spark restarts a query: the epochs after the last one in the
/// host's commit log (`_host_commits`, written after `commit` returns) run again, so an epoch
/// that published before the kill but was not logged is committed a second time.
fn run_stream_write(raw: &Raw, table: &Path) {
    let log = table.join("_host_commits");
    let next = log_lines(&log)
        .iter()
        .filter_map(|l| l.parse::<i64>().ok())
        .max()
        .map_or(0, |e| e + 1);
    let options = vec![("path".to_string(), table.display().to_string())];
    let source = raw.create(NAME, &options).expect("create");
    let schema = raw.schema(source).expect("schema").expect("a schema");
    let writer = raw
        .create_writer_of_query(source, &schema, SPARK_DS_WRITE_APPEND, true, "stream-query")
        .expect("create_writer");
    let state = raw.serialize_writer(writer).expect("serialize_writer");
    for epoch in next..EPOCHS {
        let mut messages = Vec::new();
        for t in 0..2 {
            let task = task(t, t as i32, None);
            let data_writer = raw
                .create_data_writer(&task, &state, epoch)
                .expect("create_data_writer");
            let batch = sample_batch(&schema, epoch * 1000 + t * 100, 10);
            raw.write(data_writer, &batch).expect("write");
            messages.push(
                raw.commit_data_writer(data_writer)
                    .expect("commit_data_writer"),
            );
            raw.close_data_writer(data_writer);
        }
        raw.commit(writer, epoch, &messages)
            .expect("commit of an epoch");
        append_synced(&log, &epoch.to_string());
    }
    raw.close_writer(writer);
    raw.close(source);
}

/// A streaming read restarted from the host's offset log (`offsets`, one `<index> <end>` line
/// a micro-batch, written after its output): each micro-batch's rows go to `batch-<index>`,
/// replaced whole, so a micro-batch read again after a kill replaces its own output.
fn run_stream_read(raw: &Raw, out: &Path) {
    let log = out.join("offsets");
    let options = vec![("rows_per_micro_batch".to_string(), "20000".to_string())];
    let (source, reader, state) = raw.open_stream(NAME, &options);
    let last = log_lines(&log).last().cloned();
    let (mut index, mut start) = match last {
        Some(line) => {
            let (index, end) = line.split_once(' ').expect("`<index> <end>`");
            (index.parse::<usize>().expect("an index") + 1, unhex(end))
        }
        None => (0, raw.initial_offset(reader).expect("initial_offset")),
    };
    while index < MICRO_BATCHES {
        let end = raw.latest_offset(reader, &start).expect("latest_offset");
        let partitions = raw
            .stream_partitions(reader, &start, &end)
            .expect("stream_partitions");
        let mut ids = Vec::new();
        for (i, partition) in partitions.iter().enumerate() {
            let task = task(i as i64, i as i32, None);
            for batch in raw
                .read(&task, &state, partition, usize::MAX)
                .expect("read")
            {
                let column = batch.column_by_name("id").expect("an id column");
                ids.extend(column.as_primitive::<Int64Type>().values().iter().copied());
            }
        }
        let text: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let temporary = out.join(format!("batch-{index}.tmp"));
        std::fs::write(&temporary, text).expect("write the output");
        std::fs::rename(&temporary, out.join(format!("batch-{index}")))
            .expect("publish the output");
        raw.commit_offset(reader, &end).expect("commit_offset");
        append_synced(&log, &format!("{index} {}", hex(&end)));
        start = end;
        index += 1;
    }
    raw.close_stream_reader(reader);
    raw.close(source);
}

/// The child's side of the streaming crash tests; ignored as `crash_child_process` is.
#[test]
#[ignore = "the child process of the streaming crash tests, which run it with its plan"]
fn crash_stream_child_process() {
    let Ok(plan) = std::env::var(STREAM_VAR) else {
        return; // Not a child.
    };
    let [library, dir, kind] = plan.splitn(3, '|').collect::<Vec<_>>()[..] else {
        panic!("{STREAM_VAR} must be library|dir|kind, got {plan}");
    };
    let raw = Raw::load(Path::new(library));
    match kind {
        "write" => run_stream_write(&raw, Path::new(dir)),
        _ => run_stream_read(&raw, Path::new(dir)),
    }
}

/// Runs the streaming child on `dir`, killing it after each delay in turn, then once more to
/// its end. Returns the number of kills that landed before the child finished.
fn kill_and_restart(dir: &Path, kind: &str, delays: &[Duration]) -> usize {
    let spawn = || {
        Command::new(std::env::current_exe().expect("this test binary"))
            .args([
                "crash::crash_stream_child_process",
                "--exact",
                "--ignored",
                "--test-threads=1",
            ])
            .env(
                STREAM_VAR,
                format!("{}|{}|{kind}", library_path().display(), dir.display()),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the child")
    };
    let mut landed = 0;
    for delay in delays {
        let mut child = spawn();
        std::thread::sleep(*delay);
        if matches!(child.try_wait(), Ok(None)) {
            landed += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    let status = spawn().wait().expect("the last run");
    assert!(
        status.success(),
        "the {kind} restarted after the kills did not finish"
    );
    landed
}

fn stream_delays() -> Vec<Duration> {
    (0..kills_per_mode() * 2)
        .map(|i| Duration::from_millis(5 + 7 * u64::from(i)))
        .collect()
}

#[test]
fn a_streaming_write_killed_and_restarted_writes_every_row_exactly_once() {
    let raw = Raw::load(library_path());
    let table = fresh_table("crash-stream-write");
    let kills = kill_and_restart(&table, "write", &stream_delays());
    let expected: BTreeSet<i64> = (0..EPOCHS)
        .flat_map(|e| (0..2).flat_map(move |t| (0..10).map(move |r| e * 1000 + t * 100 + r)))
        .collect();
    // `table_ids` fails on a row read twice.
    let seen = table_ids(&raw, &table);
    assert!(
        seen == expected,
        "after {kills} kills and restarts, the table holds {} rows, not the {} written",
        seen.len(),
        expected.len()
    );
    println!("crash: a streaming write of {EPOCHS} epochs killed {kills} times and restarted: every row exactly once");
}

#[test]
fn a_streaming_read_killed_and_restarted_reads_every_row_exactly_once() {
    let raw = Raw::load(library_path());
    let reference = fresh_table("crash-stream-read-reference");
    run_stream_read(&raw, &reference);
    let out = fresh_table("crash-stream-read");
    let kills = kill_and_restart(&out, "read", &stream_delays());
    let ids = |dir: &Path| -> Vec<i64> {
        (0..MICRO_BATCHES)
            .flat_map(|i| log_lines(&dir.join(format!("batch-{i}"))))
            .map(|l| l.parse().expect("an id"))
            .collect()
    };
    let (expected, seen) = (ids(&reference), ids(&out));
    assert!(!expected.is_empty());
    assert!(
        seen == expected,
        "after {kills} kills and restarts, the micro-batches hold {} rows, not the {} of an uninterrupted read",
        seen.len(),
        expected.len()
    );
    let unique: BTreeSet<i64> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "a row was read twice");
    println!("crash: a streaming read of {MICRO_BATCHES} micro-batches killed {kills} times and restarted: every row exactly once");
}
