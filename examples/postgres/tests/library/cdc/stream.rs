//! The stream: every kind of change with its rows, transactions whole and in commit order,
//! the admission limit, micro-batches read again after a stop at any step, and schema changes.

use spark_datasource::StreamReader as _;

use super::{error, logical, names, options, positions, render, run, Query, TestResult};
use crate::helpers::library;

#[test]
fn every_kind_of_change_arrives_with_its_rows_in_commit_order() -> TestResult {
    let server = logical();
    let (a, slot) = names("kinds");
    let b = format!("{a}_full");
    run(
        server,
        &format!(
            "CREATE TABLE {a} (id int PRIMARY KEY, name text); \
         CREATE TABLE {b} (id int PRIMARY KEY, amount numeric(5,2), at timestamptz); \
         ALTER TABLE {b} REPLICA IDENTITY FULL"
        ),
    );
    let options = options(server, &slot, &format!("{a}, public.{b}"), &[]);
    let mut query = Query::start(&options)?;
    run(
        server,
        &format!(
            "INSERT INTO {a} VALUES (1, 'x'), (2, 'y'); \
         INSERT INTO {b} VALUES (1, 1.5, '2024-01-02 03:04:05+00'); \
         BEGIN; \
         UPDATE {a} SET name = 'z' WHERE id = 1; \
         UPDATE {a} SET id = 3 WHERE id = 2; \
         DELETE FROM {b} WHERE id = 1; \
         COMMIT; \
         TRUNCATE {a}"
        ),
    );
    let batches = query.drain()?;
    let t = |name: &str| format!("public.{name}");
    assert_eq!(
        batches.concat(),
        [
            format!("insert {} {{id: 1, name: x}} -", t(&a)),
            format!("insert {} {{id: 2, name: y}} -", t(&a)),
            format!(
                "insert {} {{id: 1, amount: 1.50, at: 2024-01-02T03:04:05}} -",
                t(&b)
            ),
            // The key did not change and the identity is the key: no old row.
            format!("update {} {{id: 1, name: z}} -", t(&a)),
            // The key changed: the old key, the other columns NULL.
            format!("update {} {{id: 3, name: y}} {{id: 2, name: -}}", t(&a)),
            // REPLICA IDENTITY FULL: the whole old row.
            format!(
                "delete {} - {{id: 1, amount: 1.50, at: 2024-01-02T03:04:05}}",
                t(&b)
            ),
            format!("truncate {} - -", t(&a)),
        ]
    );
    Ok(())
}

#[test]
fn the_host_runs_the_whole_protocol_and_a_restarted_query_reads_each_change_once() -> TestResult {
    let server = logical();
    let (t, slot) = names("host");
    run(
        server,
        &format!("CREATE TABLE {t} (id bigint PRIMARY KEY, v text)"),
    );
    let options = options(server, &slot, &t, &[("maxChangesPerTrigger", "3")]);
    // The slot first (a query that starts and stops), then twelve transactions of a row: the
    // host's query starts from the slot's position and finds them all.
    drop(Query::start(&options)?);
    for i in 0..12 {
        run(server, &format!("INSERT INTO {t} VALUES ({i}, 'v{i}')"));
    }
    // The host checks every rule of each call, restarts the query after two micro-batches
    // (from the last end it committed), and reads the last micro-batch again with a new
    // query: the same rows (rule 25). The host commits a micro-batch's end when it asks for
    // the next one, even when there is none, and then reads the committed micro-batch again,
    // which Spark never does: four micro-batches, all with changes, keep the last one
    // uncommitted.
    let outcome = library()?
        .stream_read()
        .options(options.clone())
        .micro_batches(4)
        .restart_after(2)
        .run()?;
    assert_eq!(outcome.rows_per_micro_batch(), [3, 3, 3, 3]);
    let ids: Vec<String> = outcome.batches().iter().flat_map(render).collect();
    let expected: Vec<String> = (0..12)
        .map(|i| format!("insert public.{t} {{id: {i}, v: v{i}}} -"))
        .collect();
    assert_eq!(ids, expected);
    Ok(())
}

#[test]
fn a_transaction_is_never_split_and_the_limit_admits_whole_transactions() -> TestResult {
    let server = logical();
    let (t, slot) = names("limit");
    run(server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let options = options(server, &slot, &t, &[("maxChangesPerTrigger", "2")]);
    let mut query = Query::start(&options)?;
    // A transaction each: one statement a call (the statements of one call are one).
    for values in ["(1)", "(2), (3), (4)", "(5)", "(6)", "(7)"] {
        run(server, &format!("INSERT INTO {t} VALUES {values}"));
    }
    let sizes: Vec<usize> = query.drain()?.iter().map(Vec::len).collect();
    // One transaction alone (it fits), the three-row one alone (larger than the limit, but a
    // transaction is never split), then two and one.
    assert_eq!(sizes, [1, 3, 2, 1]);
    Ok(())
}

#[test]
fn a_query_stopped_at_any_step_reads_every_change_once_after_its_restart() -> TestResult {
    let server = logical();
    let (t, slot) = names("restart");
    run(
        server,
        &format!("CREATE TABLE {t} (id int PRIMARY KEY, v int)"),
    );
    let options = options(server, &slot, &t, &[("maxChangesPerTrigger", "4")]);
    let mut query = Query::start(&options)?;
    let mut expected = Vec::new();
    let mut next = 0;
    let mut write = |count: usize| -> TestResult {
        let mut client = server.client();
        for _ in 0..count {
            client.batch_execute(&format!(
                "INSERT INTO {t} VALUES ({next}, 0); UPDATE {t} SET v = 1 WHERE id = {next}"
            ))?;
            expected.push(format!("insert public.{t} {{id: {next}, v: 0}} -"));
            expected.push(format!("update public.{t} {{id: {next}, v: 1}} -"));
            next += 1;
        }
        Ok(())
    };
    let mut seen = Vec::new();
    write(2)?;
    // 1. Stopped between micro-batches: the next query plans from the commit log.
    assert!(query.plan()?);
    seen.extend(query.read()?);
    let checkpoint = query.checkpoint();
    drop(query);
    write(2)?;
    let mut query = Query::resume(&options, &checkpoint)?;
    // 2. Stopped in the middle of a micro-batch: planned (and the previous end committed), its
    //    task read part of it. The next query reads it again, whole.
    assert!(query.plan()?);
    let (start, end) = query.planned.clone().expect("planned");
    let partition = query.reader.partitions(start, end)?.remove(0);
    let mut partial = query
        .reader
        .read(partition, &spark_datasource::TaskContext::for_tests(0, 0))?;
    let _first = partial.next().transpose()?;
    drop(partial);
    let checkpoint = query.checkpoint();
    drop(query);
    let mut query = Query::resume(&options, &checkpoint)?;
    seen.extend(query.read()?);
    // 3. Stopped before the commit of the previous end reached the slot: the slot is a
    //    micro-batch behind, and the next micro-batch skips what it holds before its start.
    write(3)?;
    let checkpoint = query.checkpoint();
    drop(query);
    let mut query = Query::resume(&options, &checkpoint)?;
    // Planned, but the process dies before `commit`: the offsets are logged, the slot is not
    // advanced.
    let start = query.done.clone();
    let end = query.reader.latest_offset(start.clone())?;
    let checkpoint = super::Checkpoint {
        done: start,
        planned: Some((query.done.clone(), end)),
    };
    drop(query);
    let mut query = Query::resume(&options, &checkpoint)?;
    seen.extend(query.read()?);
    seen.extend(query.drain()?.concat());
    assert_eq!(seen, expected);
    Ok(())
}

#[test]
fn rows_follow_commit_order_and_each_transaction_shares_its_lsn() -> TestResult {
    let server = logical();
    let (t, slot) = names("order");
    run(
        server,
        &format!("CREATE TABLE {t} (id int PRIMARY KEY, v int)"),
    );
    let options = options(server, &slot, &t, &[]);
    let query = Query::start(&options)?;
    // Two sessions whose transactions interleave: the one that commits first comes first.
    let mut first = server.client();
    let mut second = server.client();
    first.batch_execute(&format!("BEGIN; INSERT INTO {t} VALUES (1, 1)"))?;
    second.batch_execute(&format!("BEGIN; INSERT INTO {t} VALUES (2, 2)"))?;
    first.batch_execute(&format!("INSERT INTO {t} VALUES (3, 1)"))?;
    second.batch_execute("COMMIT")?;
    first.batch_execute("COMMIT")?;
    let start = query.done.clone();
    let mut reader = query.reader;
    let end = reader.latest_offset(start.clone())?;
    let mut batches = Vec::new();
    for partition in reader.partitions(start, end)? {
        for batch in reader.read(partition, &spark_datasource::TaskContext::for_tests(0, 0))? {
            batches.push(batch?);
        }
    }
    let rows: Vec<String> = batches.iter().flat_map(render).collect();
    assert_eq!(
        rows,
        [
            format!("insert public.{t} {{id: 2, v: 2}} -"),
            format!("insert public.{t} {{id: 1, v: 1}} -"),
            format!("insert public.{t} {{id: 3, v: 1}} -"),
        ]
    );
    let positions = positions(&batches);
    assert!(positions[0].0 < positions[1].0, "{positions:?}");
    assert_eq!((positions[1].0, positions[1].1 + 1), positions[2]);
    Ok(())
}

#[test]
fn a_column_added_after_the_start_fails_the_stream_and_a_restart_reads_it() -> TestResult {
    let server = logical();
    let (t, slot) = names("added");
    run(server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let options = options(server, &slot, &t, &[]);
    let mut query = Query::start(&options)?;
    run(
        server,
        &format!(
            "INSERT INTO {t} VALUES (1); ALTER TABLE {t} ADD COLUMN note text; \
         INSERT INTO {t} VALUES (2, 'two')"
        ),
    );
    assert!(query.plan()?);
    let failure = error(query.read());
    assert!(
        failure.contains(&format!("the table `public.{t}` changed at ")),
        "{failure}"
    );
    assert!(
        failure.contains(
            "after the query started: column `note` (text) was added. The stream reads the \
             columns the table had then; restart the query to read the new ones"
        ),
        "{failure}"
    );
    // Restarted from its checkpoint, the query reads the columns the table has now: the
    // change made before the column existed reads it as NULL.
    let mut query = super::Query::resume(&options, &query.checkpoint())?;
    assert_eq!(
        query.read()?,
        [
            format!("insert public.{t} {{id: 1, note: -}} -"),
            format!("insert public.{t} {{id: 2, note: two}} -"),
        ]
    );
    // A type changed: no restart reads across it.
    run(
        server,
        &format!(
            "ALTER TABLE {t} ALTER COLUMN id TYPE bigint; INSERT INTO {t} VALUES (3, 'three')"
        ),
    );
    assert!(query.plan()?);
    let failure = error(query.read());
    assert!(
        failure.contains("column `id` changed type from int4 to int8"),
        "{failure}"
    );
    Ok(())
}

#[test]
fn a_large_value_that_an_update_left_alone_is_named_or_taken_from_the_old_row() -> TestResult {
    let server = logical();
    let (t, slot) = names("toast");
    let full = format!("{t}_full");
    // Values that PostgreSQL keeps out of line (TOAST), uncompressible: 8 KB of hashes.
    run(
        server,
        &format!(
            "CREATE TABLE {t} (id int PRIMARY KEY, n int, big text); \
             CREATE TABLE {full} (id int PRIMARY KEY, n int, big text); \
             ALTER TABLE {full} REPLICA IDENTITY FULL"
        ),
    );
    let options = options(server, &slot, &format!("{t}, {full}"), &[]);
    let mut query = Query::start(&options)?;
    let big = "(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 256) AS i)";
    for table in [&t, &full] {
        run(server, &format!("INSERT INTO {table} VALUES (1, 0, {big})"));
        run(server, &format!("UPDATE {table} SET n = 1 WHERE id = 1"));
    }
    let rows = query.drain()?.concat();
    let updates: Vec<&String> = rows.iter().filter(|r| r.starts_with("update")).collect();
    // The key identity sends no old row: the value is NULL, and named in `_unchanged`.
    assert_eq!(
        *updates[0],
        format!("update public.{t} {{id: 1, n: 1, big: -}} - unchanged [\"big\"]")
    );
    // REPLICA IDENTITY FULL sends the old row, which holds it.
    assert!(updates[1].starts_with(&format!(
        "update public.{full} {{id: 1, n: 1, big: c4ca4238"
    )));
    assert!(!updates[1].contains("unchanged"));
    Ok(())
}

#[test]
fn a_micro_batch_decoded_in_parts_by_tasks_side_by_side_reads_what_one_task_reads() -> TestResult {
    let server = logical();
    let (t, slot) = names("parts");
    run(
        server,
        &format!("CREATE TABLE {t} (id int PRIMARY KEY, v int)"),
    );
    // Two queries on slots created before the changes: decoded by three tasks, and by one.
    let in_parts = Query::start(&options(
        server,
        &slot,
        &t,
        &[("decodingTasks", "3"), ("decodingTaskBytes", "1")],
    ))?;
    let whole = Query::start(&options(
        server,
        &format!("{slot}_whole"),
        &t,
        &[("decodingTasks", "1")],
    ))?;
    // Transactions of many sizes, interleaved sessions, updates and deletes.
    let mut other = server.client();
    other.batch_execute(&format!("BEGIN; INSERT INTO {t} VALUES (100000, 0)"))?;
    for i in 0..40 {
        let rows = 1 + i * 7 % 50;
        run(
            server,
            &format!(
                "INSERT INTO {t} SELECT {i} * 1000 + n, n FROM generate_series(1, {rows}) n; \
                 UPDATE {t} SET v = v + 1 WHERE id = {i} * 1000 + 1; \
                 DELETE FROM {t} WHERE id = {i} * 1000 + 2"
            ),
        );
        if i == 20 {
            other.batch_execute("COMMIT")?;
        }
    }
    let read = |query: Query, tasks: usize| -> Result<Vec<String>, Box<dyn std::error::Error>> {
        let start = query.done.clone();
        let mut reader = query.reader;
        let end = reader.latest_offset(start.clone())?;
        let partitions = reader.partitions(start, end)?;
        assert_eq!(partitions.len(), tasks);
        // The tasks run at once, as Spark's do: the slot's peek beside its copies'.
        let reader = &reader;
        let parts = std::thread::scope(|scope| {
            let tasks: Vec<_> = partitions
                .into_iter()
                .enumerate()
                .map(|(i, partition)| {
                    scope.spawn(move || {
                        let task = spark_datasource::TaskContext::for_tests(i as i32, 0);
                        reader
                            .read(partition, &task)?
                            .collect::<spark_datasource::Result<Vec<_>>>()
                    })
                })
                .collect();
            tasks
                .into_iter()
                .map(|task| task.join().expect("a task"))
                .collect::<spark_datasource::Result<Vec<_>>>()
        })?;
        let batches: Vec<_> = parts.concat();
        let positions = positions(&batches);
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "the parts, one after the other, are in commit order"
        );
        Ok(batches.iter().flat_map(render).collect())
    };
    let by_parts = read(in_parts, 3)?;
    let by_one = read(whole, 1)?;
    // Each transaction's inserts, its update, its delete where it inserted a second row, and
    // the other session's insert.
    let inserted: Vec<usize> = (0..40).map(|i| 1 + i * 7 % 50).collect();
    let deleted = inserted.iter().filter(|&&n| n > 1).count();
    assert_eq!(
        by_parts.len(),
        inserted.iter().sum::<usize>() + 40 + deleted + 1
    );
    assert_eq!(by_parts, by_one);
    // The copies of the slot went with their tasks' sessions.
    let mut copies = -1;
    for _ in 0..50 {
        copies = server
            .client()
            .query_one(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'sparkds_part_%'",
                &[],
            )?
            .get::<_, i64>(0);
        if copies == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(copies, 0);
    Ok(())
}
