//! The initial snapshot: the tables as of the slot's consistent point, then the changes after
//! it, each row once, however the writers race the slot's creation.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{error, logical, names, options, run, Query, TestResult};

#[test]
fn the_snapshot_and_the_changes_after_it_hold_each_row_once() -> TestResult {
    let server = logical();
    let (t, slot) = names("snapshot");
    run(
        server,
        &format!(
            "CREATE TABLE {t} (id int PRIMARY KEY, v text); \
             INSERT INTO {t} SELECT i, 'before' FROM generate_series(1, 500) AS i"
        ),
    );
    let options = options(server, &slot, &t, &[("initialSnapshot", "true")]);
    // Writers insert and update while the query creates its slot and exports the snapshot:
    // each of their transactions commits either before the consistent point (in the
    // snapshot) or after it (in the changes), never both, never neither.
    let stop = AtomicBool::new(false);
    let (mut query, written) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut client = server.client();
            let mut next = 1000;
            while !stop.load(Ordering::Relaxed) {
                client
                    .batch_execute(&format!(
                        "INSERT INTO {t} VALUES ({next}, 'during'); \
                         UPDATE {t} SET v = 'updated' WHERE id = {}",
                        next - 999
                    ))
                    .expect("a write");
                next += 1;
            }
            next
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        let query = Query::start(&options);
        std::thread::sleep(std::time::Duration::from_millis(100));
        stop.store(true, Ordering::Relaxed);
        (query, writer.join().expect("the writer"))
    });
    let query = query.as_mut().map_err(|e| e.to_string())?;
    assert!(written > 1002, "the writer wrote while the slot was made");
    // The first micro-batch is the snapshot, alone.
    assert!(query.plan()?);
    let snapshot = query.read()?;
    assert!(snapshot.iter().all(|row| row.starts_with("snapshot ")));
    let changes = query.drain()?.concat();
    assert!(!changes.is_empty());
    assert!(changes.iter().all(|row| !row.starts_with("snapshot ")));
    // Replaying every row in order gives the table as it is.
    let mut state = std::collections::BTreeMap::new();
    for row in snapshot.iter().chain(&changes) {
        let (_, row) = row
            .split_once(&format!("public.{t} {{id: "))
            .expect("a row of the table");
        let (id, rest) = row.split_once(", v: ").expect("the row's values");
        let (v, _) = rest.split_once('}').expect("the row's end");
        let previous = state.insert(id.parse::<i32>()?, v.to_string());
        // An insert never finds its row there already: no row is in both.
        if row.contains("} -") && previous.is_some() && v == "during" {
            panic!("the row {id} arrived twice");
        }
    }
    let mut client = server.client();
    let table: std::collections::BTreeMap<i32, String> = client
        .query(&format!("SELECT id, v FROM {t}"), &[])?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert_eq!(state, table);
    Ok(())
}

#[test]
fn a_snapshot_that_its_query_did_not_read_before_stopping_is_named_as_gone() -> TestResult {
    let server = logical();
    let (t, slot) = names("gone");
    run(
        server,
        &format!("CREATE TABLE {t} (id int PRIMARY KEY); INSERT INTO {t} VALUES (1)"),
    );
    let options = options(server, &slot, &t, &[("initialSnapshot", "true")]);
    let mut query = Query::start(&options)?;
    assert!(query.plan()?);
    let checkpoint = query.checkpoint();
    // The query stops before it reads its snapshot: the export ends with its connection.
    drop(query);
    let mut query = Query::resume(&options, &checkpoint)?;
    let failure = error(query.read());
    assert!(
        failure.starts_with("the initial snapshot of the stream (")
            && failure.contains(") is gone: it lived as long as the query that created the slot"),
        "{failure}"
    );
    // And a slot that exists cannot give one.
    let failure = error(Query::start(&options));
    assert!(
        failure.starts_with(&format!(
            "option `initialSnapshot` reads the tables as of the consistent point of the slot \
             that the query creates, but the replication slot `{slot}` exists already"
        )),
        "{failure}"
    );
    Ok(())
}
