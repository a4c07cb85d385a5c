//! What can go wrong on the server, each with a message that names the slot (or the setting)
//! and what to do; and a server that restarts under the stream, which it rides through.

use spark_datasource::StreamReader as _;

use super::{error, logical, names, options, run, Query, TestResult};
use crate::server::{Server, Setup};

#[test]
fn a_slot_dropped_by_an_administrator_fails_the_stream_naming_it() -> TestResult {
    let server = logical();
    let (t, slot) = names("dropped");
    run(server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let options = options(server, &slot, &t, &[]);
    let mut query = Query::start(&options)?;
    run(server, &format!("INSERT INTO {t} VALUES (1)"));
    assert_eq!(query.drain()?.concat().len(), 1);
    server.admin(&format!("SELECT pg_drop_replication_slot('{slot}')"));
    run(server, &format!("INSERT INTO {t} VALUES (2)"));
    let failure = error(query.plan());
    assert!(
        failure.starts_with(&format!(
            "the replication slot `{slot}` does not exist: it was dropped while the query used \
             it, and the changes after {} that the query has not read are gone. Start the query \
             again with a new checkpointLocation",
            query.done.lsn
        )),
        "{failure}"
    );
    Ok(())
}

#[test]
fn a_slot_advanced_by_another_consumer_fails_the_micro_batch_it_skipped() -> TestResult {
    let server = logical();
    let (t, slot) = names("advanced");
    run(server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let options = options(server, &slot, &t, &[]);
    let mut query = Query::start(&options)?;
    run(server, &format!("INSERT INTO {t} VALUES (1)"));
    assert!(query.plan()?);
    // Someone consumes the changes before the query reads them.
    server.admin(&format!(
        "SELECT pg_replication_slot_advance('{slot}', pg_current_wal_flush_lsn())"
    ));
    let failure = error(query.read());
    assert!(
        failure.contains(&format!(
            "the replication slot `{slot}` has consumed the changes up to "
        )) && failure.contains(&format!(
            ", past {}, where this micro-batch starts: another consumer used the slot",
            query.done.lsn
        )),
        "{failure}"
    );
    Ok(())
}

#[test]
fn wal_that_the_slot_needs_removed_fails_the_stream_never_a_silent_gap() -> TestResult {
    // A server of its own with segments of 1 MB, which keeps at most 2 MB for a slot.
    let server = Server::start_logical(Setup {
        initdb: vec!["--wal-segsize=1".into()],
        settings: vec!["max_slot_wal_keep_size=2MB".into()],
        ..Setup::default()
    });
    let (t, slot) = names("lost");
    run(
        &server,
        &format!("CREATE TABLE {t} (id int PRIMARY KEY, pad text)"),
    );
    let options = options(&server, &slot, &t, &[]);
    let mut query = Query::start(&options)?;
    run(&server, &format!("INSERT INTO {t} VALUES (0, '')"));
    assert_eq!(query.drain()?.concat().len(), 1);
    // More WAL than the server keeps for the slot, and a checkpoint, which removes it.
    for i in 1..=4 {
        run(
            &server,
            &format!(
                "INSERT INTO {t} SELECT i, repeat(md5(i::text), 20) \
                 FROM generate_series({i} * 10000, {i} * 10000 + 9999) AS i"
            ),
        );
        server.admin("SELECT pg_switch_wal()");
    }
    server.admin("CHECKPOINT");
    let failure = error(query.plan());
    assert!(
        failure.starts_with(&format!(
            "the replication slot `{slot}` lost the WAL it kept (wal_status `lost`): the server \
             removed it, past max_slot_wal_keep_size, while the stream was behind, and the \
             changes after {} that the query has not read are gone. Drop the slot",
            query.done.lsn
        )),
        "{failure}"
    );
    Ok(())
}

#[test]
fn a_server_that_restarts_under_the_stream_is_waited_for() -> TestResult {
    let server = Server::start_logical(Setup::default());
    let (t, slot) = names("restarted");
    run(&server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let options = options(&server, &slot, &t, &[("reconnectTimeout", "30")]);
    let mut query = Query::start(&options)?;
    let down = std::time::Duration::from_secs(2);
    // While the server is down, the driver's planning waits for it; then a task's read.
    let mut rows = Vec::new();
    for step in ["plan", "read"] {
        run(
            &server,
            &format!("INSERT INTO {t} VALUES ({})", rows.len() + 1),
        );
        if step == "read" {
            assert!(query.plan()?);
        }
        std::thread::scope(|scope| -> TestResult {
            let stopped = scope.spawn(|| server.stop_for(down));
            while server.is_up() {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            rows.extend(query.drain()?.concat());
            stopped.join().expect("the server's restart");
            Ok(())
        })?;
    }
    assert_eq!(
        rows,
        [
            format!("insert public.{t} {{id: 1}} -"),
            format!("insert public.{t} {{id: 2}} -")
        ]
    );
    Ok(())
}

#[test]
fn a_server_without_logical_decoding_is_named_with_the_setting() {
    // The shared server of the batch tests keeps wal_level at its default, replica.
    let server = crate::server::shared();
    let options = options(server, "any_slot", "any_table", &[]);
    let failure = error(super::reader(&options));
    assert!(
        failure.starts_with(
            "the server's wal_level is `replica`: change data capture needs wal_level = logical"
        ),
        "{failure}"
    );
}

#[test]
fn a_role_without_replication_gets_the_servers_message() -> TestResult {
    let server = logical();
    let (t, slot) = names("no_replication");
    run(server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let role = format!("plain_{t}");
    server.admin(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'pw'; GRANT SELECT ON {t} TO {role}; \
         CREATE PUBLICATION pub_{t} FOR TABLE {t}"
    ));
    let mut options = options(server, &slot, "", &[("publication", &format!("pub_{t}"))]);
    options.retain(|(k, _)| k != "tables");
    for (key, value) in options.iter_mut() {
        match key.as_str() {
            "user" => *value = role.clone(),
            "password" => *value = "pw".into(),
            _ => {}
        }
    }
    let failure = error(Query::start(&options));
    assert!(
        failure.starts_with(&format!(
            "cannot create the replication slot (replication slot `{slot}`): ERROR: "
        )) && failure.contains("replication"),
        "{failure}"
    );
    Ok(())
}

#[test]
fn options_that_do_not_make_a_stream_are_refused() {
    let server = logical();
    let mut both = options(server, "a_slot", "t", &[("publication", "p")]);
    assert!(error(super::reader(&both))
        .starts_with("options `publication` and `tables` cannot both be set"));
    both.retain(|(k, _)| k != "publication" && k != "tables");
    assert!(error(super::reader(&both)).starts_with("missing option `publication` or `tables`"));
    let unknown = options(server, "a_slot", "public.no_such_table", &[]);
    assert!(error(super::reader(&unknown))
        .starts_with("option `tables` names `public.no_such_table`, which is not a table"));
    let absent = {
        let mut o = options(
            server,
            "a_slot",
            "",
            &[("publication", "no_such_publication")],
        );
        o.retain(|(k, _)| k != "tables");
        o
    };
    assert!(error(super::reader(&absent)).starts_with(
        "the publication `no_such_publication` (option `publication`) does not exist"
    ));
}

#[test]
fn a_batch_read_with_a_slot_is_refused_with_what_to_do() -> sparkds::Result<()> {
    let server = logical();
    let (t, slot) = names("batch");
    run(server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let options = options(server, &slot, &t, &[]);
    let failure = crate::helpers::message(
        crate::helpers::library()?
            .batch_read()
            .options(options)
            .run(),
    );
    assert!(
        failure.contains(
            "option `slot` captures changes, which only a streaming read (spark.readStream) \
             reads: leave `slot` out to read or write a table with `dbtable`"
        ),
        "{failure}"
    );
    Ok(())
}

#[test]
fn a_part_without_a_free_slot_for_its_copy_peeks_at_the_slot_itself() -> TestResult {
    // One slot: the stream's own, and none for a copy.
    let server = Server::start_logical(Setup {
        settings: vec!["max_replication_slots=1".into()],
        ..Setup::default()
    });
    let (t, slot) = names("no_copy");
    run(&server, &format!("CREATE TABLE {t} (id int PRIMARY KEY)"));
    let parts = [("decodingTasks", "2"), ("decodingTaskBytes", "1")];
    let query = Query::start(&options(&server, &slot, &t, &parts))?;
    for i in 0..10 {
        run(
            &server,
            &format!("INSERT INTO {t} SELECT generate_series({i} * 10 + 1, {i} * 10 + 10)"),
        );
    }
    let start = query.done.clone();
    let mut reader = query.reader;
    let end = reader.latest_offset(start.clone())?;
    let partitions = reader.partitions(start, end)?;
    assert_eq!(partitions.len(), 2);
    // The second part first, then the first: each once, the whole micro-batch between them.
    let mut ids = Vec::new();
    for (index, partition) in partitions.into_iter().enumerate().rev() {
        let task = spark_datasource::TaskContext::for_tests(index as i32, 0);
        for batch in reader.read(partition, &task)? {
            let rendered = super::render(&batch?);
            ids.extend(rendered.into_iter().map(|row| {
                row.split("{id: ")
                    .nth(1)
                    .and_then(|rest| rest.split('}').next())
                    .and_then(|id| id.parse::<i32>().ok())
                    .unwrap_or(-1)
            }));
        }
    }
    ids.sort_unstable();
    assert_eq!(ids, (1..=100).collect::<Vec<_>>());
    Ok(())
}
