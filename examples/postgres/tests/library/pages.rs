//! Reads partitioned by the table's pages (`partitionColumn` `ctid`): every row once, in the
//! snapshot of the planning whatever changes between the tasks, the snapshot released once
//! every partition was read, a task after `snapshotTimeout` failing with the fix, and the
//! options that do not fit refused.

use std::time::{Duration, Instant};

use spark_datasource::{BatchRead as _, BatchReader as _, DataSource as _, Options, TaskContext};
use spark_datasource_postgres::connector::Source;
use sparkds::arrow_array::cast::AsArray;
use sparkds::arrow_array::types::Int64Type;
use sparkds::arrow_array::RecordBatch;

use crate::helpers::{library, message, options, sql, table};
use crate::server::Server;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn by_pages(dbtable: &str, more: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut options = options(dbtable);
    options.push(("partitionColumn".into(), "ctid".into()));
    options.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    options
}

/// `(id, v)` of every row of `batches`, sorted.
fn rows(batches: &[RecordBatch]) -> Vec<(i64, i64)> {
    let mut rows: Vec<(i64, i64)> = batches
        .iter()
        .flat_map(|b| {
            let id = b
                .column_by_name("id")
                .expect("id")
                .as_primitive::<Int64Type>();
            let v = b
                .column_by_name("v")
                .expect("v")
                .as_primitive::<Int64Type>();
            (0..b.num_rows())
                .map(|i| (id.value(i), v.value(i)))
                .collect::<Vec<_>>()
        })
        .collect();
    rows.sort_unstable();
    rows
}

/// A table of `count` rows `(id, v)`, `v` = `id`, on full pages.
fn numbers(what: &str, count: i64) -> String {
    let t = table(what);
    sql(&format!(
        "CREATE TABLE {t} (id bigint NOT NULL, v bigint NOT NULL) WITH (fillfactor = 100); \
         INSERT INTO {t} SELECT i, i FROM generate_series(1, {count}) AS i; ANALYZE {t}"
    ));
    t
}

/// A read of `dbtable` in `partitions` ranges of its pages, through the C interface.
fn read_by_pages(dbtable: &str, partitions: &str) -> sparkds::Result<sparkds::BatchReadOutcome> {
    library()?
        .batch_read()
        .options(by_pages(dbtable, &[("numPartitions", partitions)]))
        .run()
}

#[test]
fn a_read_by_pages_reads_every_row_once_in_as_many_partitions() -> TestResult {
    let t = numbers("pages", 20_000);
    let read = read_by_pages(&t, "4")?;
    assert_eq!(read.partitions.len(), 4);
    assert_eq!(
        rows(&read.batches()),
        (1..=20_000).map(|i| (i, i)).collect::<Vec<_>>()
    );
    // A table of fewer pages than partitions: a partition a page. An empty one: one partition.
    let small = numbers("pages_small", 300);
    let read = read_by_pages(&small, "8")?;
    assert!(read.partitions.len() <= 2, "{}", read.partitions.len());
    assert_eq!(rows(&read.batches()).len(), 300);
    let empty = numbers("pages_empty", 0);
    let read = read_by_pages(&empty, "4")?;
    assert_eq!(read.partitions.len(), 1);
    assert!(rows(&read.batches()).is_empty());
    Ok(())
}

/// Rows updated, deleted and inserted between the planning and the tasks, and between two
/// tasks, move to other pages: every task still reads the table as it was when planned, so
/// each row comes once, as it was.
#[test]
fn a_read_by_pages_reads_the_table_as_it_was_when_planned() -> TestResult {
    let t = numbers("pages_moved", 20_000);
    let source = Source::create(
        "postgres",
        Options::new(by_pages(&t, &[("numPartitions", "4")])),
    )?;
    let reader = source.reader(source.schema()?)?;
    let partitions = reader.partitions()?;
    assert_eq!(partitions.len(), 4);
    // Every row of the first pages gets a new version at the table's end, in the last
    // partition's pages; some rows go, others come.
    sql(&format!(
        "UPDATE {t} SET v = -v WHERE id <= 5000; DELETE FROM {t} WHERE id > 19000; \
         INSERT INTO {t} SELECT i, i FROM generate_series(20001, 21000) AS i"
    ));
    let mut batches = Vec::new();
    for (i, partition) in partitions.into_iter().enumerate() {
        if i == 2 {
            sql(&format!("UPDATE {t} SET v = -v WHERE id > 10000"));
        }
        for batch in reader.read(partition, &TaskContext::for_tests(i as i32, 0))? {
            batches.push(batch?);
        }
    }
    assert_eq!(
        rows(&batches),
        (1..=20_000).map(|i| (i, i)).collect::<Vec<_>>()
    );
    Ok(())
}

/// The application name of the keeper's sessions, as `pg_stat_activity` shows them.
const KEEPER: &str = "sparkds-read-snapshot";

fn keeper_sessions(server: &Server) -> i64 {
    server
        .client()
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            &[&KEEPER],
        )
        .map(|row| row.get(0))
        .unwrap_or(-1)
}

/// Waits up to 10 s for the keeper's sessions of `server` to be `sessions`.
fn wait_for_sessions(server: &Server, sessions: i64) -> i64 {
    let start = Instant::now();
    loop {
        let now = keeper_sessions(server);
        if now == sessions || start.elapsed() > Duration::from_secs(10) {
            return now;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_snapshot_is_held_until_every_partition_was_read_and_a_late_task_fails_with_the_fix(
) -> TestResult {
    // A server of its own, where no other test's snapshot is held.
    let server = Server::start();
    server
        .client()
        .batch_execute(
            "CREATE TABLE t (id bigint, v bigint); \
             INSERT INTO t SELECT i, i FROM generate_series(1, 5000) AS i",
        )
        .expect("the table");
    let mut options = server.options("t");
    options.push(("partitionColumn".into(), "ctid".into()));
    options.push(("numPartitions".into(), "2".into()));
    let source = Source::create("postgres", Options::new(options.clone()))?;
    let reader = source.reader(source.schema()?)?;
    let partitions = reader.partitions()?;
    assert_eq!(partitions.len(), 2);
    assert_eq!(
        keeper_sessions(&server),
        2,
        "the exporting and the listening session"
    );
    let mut count = 0;
    for (i, partition) in partitions.into_iter().enumerate() {
        assert_eq!(
            keeper_sessions(&server),
            2,
            "held until the last partition was read"
        );
        for batch in reader.read(partition, &TaskContext::for_tests(i as i32, 0))? {
            count += batch?.num_rows();
        }
    }
    assert_eq!(count, 5000);
    assert_eq!(
        wait_for_sessions(&server, 0),
        0,
        "released once both were read"
    );

    // A task that starts after `snapshotTimeout`: the snapshot is gone, and it says why.
    options.push(("snapshotTimeout".into(), "1".into()));
    let source = Source::create("postgres", Options::new(options))?;
    let reader = source.reader(source.schema()?)?;
    let mut partitions = reader.partitions()?;
    assert_eq!(wait_for_sessions(&server, 0), 0, "released after 1 s");
    let late = partitions.remove(0);
    let error = reader
        .read(late, &TaskContext::for_tests(0, 0))
        .and_then(|batches| batches.collect::<spark_datasource::Result<Vec<_>>>())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        error.contains(
            "cannot read `dbtable` t: the snapshot of its pages (`partitionColumn` `ctid`), \
             which the driver exported when it planned the read, is gone: the task started \
             more than `snapshotTimeout` (1 s) after planning"
        ) && error.contains("invalid snapshot identifier"),
        "{error}"
    );
    Ok(())
}

#[test]
fn options_of_a_read_by_pages_that_do_not_fit_are_refused_with_the_fix() {
    let t = numbers("pages_refused", 10);
    let refused = |options: Vec<(String, String)>| {
        message(library().and_then(|l| l.batch_read().options(options).run()))
    };
    let error = refused(by_pages(&t, &[("numPartitions", "2"), ("lowerBound", "1")]));
    assert!(
        error.contains(
            "option `partitionColumn` `ctid` partitions a table by its pages: give \
             `numPartitions`, and no `lowerBound` or `upperBound`"
        ),
        "{error}"
    );
    let mut query = by_pages("", &[("numPartitions", "2")]);
    query.retain(|(k, _)| k != "dbtable");
    query.push(("query".into(), format!("SELECT * FROM {t}")));
    let error = refused(query);
    assert!(
        error.contains("name the table in `dbtable`, not in `query`"),
        "{error}"
    );
    let view = table("pages_view");
    sql(&format!("CREATE VIEW {view} AS SELECT * FROM {t}"));
    let error = refused(by_pages(&view, &[("numPartitions", "2")]));
    assert!(
        error.contains(&format!(
            "option `partitionColumn` `ctid` partitions a table by its pages, but `dbtable` \
             {view} is a view, which has no pages"
        )),
        "{error}"
    );
    let mut timeout = options(&t);
    timeout.push(("snapshotTimeout".into(), "5".into()));
    let error = refused(timeout);
    assert!(
        error.contains("option `snapshotTimeout` is for a read partitioned by pages"),
        "{error}"
    );
}
