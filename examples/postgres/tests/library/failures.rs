//! Failures, each with a message that names what is wrong: a wrong password (which no message
//! repeats), a password that none of the options gives, an unknown table, a column of a type with no Spark type, a bad query, options
//! that do not go together, and a server that restarts in the middle of a read.

use spark_datasource::{BatchRead as _, BatchReader as _, DataSource as _, Options, TaskContext};
use spark_datasource_postgres::connector::Source;

use crate::helpers::{library, message, options, server, sql, table};
use crate::server::{Server, PASSWORD};

#[test]
fn a_wrong_password_fails_without_showing_it() {
    let wrong = "wrong-pw-3b8e11";
    let mut options = options("anything");
    options.retain(|(k, _)| k != "password");
    options.push(("password".into(), wrong.into()));
    let error = message(library().and_then(|l| l.batch_read().options(options).run()));
    assert!(
        error.contains("password authentication failed for user \"sparkds\""),
        "{error}"
    );
    assert!(
        !error.contains(wrong) && !error.contains(PASSWORD),
        "{error}"
    );
}

#[test]
fn a_password_that_the_server_asks_for_and_no_option_gives_is_named_with_how_to_give_it() {
    // Whatever PGPASSWORD or ~/.pgpass of this machine hold: without `passwordFromEnvironment`,
    // they are not read.
    let mut options = options("anything");
    options.retain(|(k, _)| k != "password");
    let error = message(library().and_then(|l| l.batch_read().options(options).run()));
    assert!(
        error.contains("(database `sparkds`, user `sparkds`)")
            && error.contains(
                "the server asks for a password, and none was given: set the option `password` \
                 (or put it in `url`), or set the option `passwordFromEnvironment` to true"
            ),
        "{error}"
    );
}

#[test]
fn a_password_in_the_url_is_never_shown() {
    let url = format!(
        "jdbc:postgresql://127.0.0.1:{}/sparkds?user=sparkds&password=wrong-in-url",
        server().port
    );
    let error = message(library().and_then(|l| {
        l.batch_read()
            .options([("url", url.as_str()), ("dbtable", "t")])
            .run()
    }));
    assert!(error.contains("password authentication failed"), "{error}");
    assert!(!error.contains("wrong-in-url"), "{error}");
}

#[test]
fn an_unknown_table_is_named() {
    let error =
        message(library().and_then(|l| l.batch_read().options(options("no_such_table")).run()));
    assert!(
        error.contains(
            "cannot read the columns of `dbtable` no_such_table: ERROR: relation \
             \"no_such_table\" does not exist"
        ),
        "{error}"
    );
}

#[test]
fn a_bad_query_fails_with_the_servers_message() {
    let mut options = options("");
    options.retain(|(k, _)| k != "dbtable");
    options.push(("query".into(), "SELECT nope FROM pg_class".into()));
    let error = message(library().and_then(|l| l.batch_read().options(options).run()));
    assert!(
        error.contains(
            "cannot read the columns of the `query`: ERROR: column \"nope\" does not exist"
        ),
        "{error}"
    );
}

#[test]
fn a_column_of_a_type_without_a_spark_type_is_refused_by_name() {
    let t = table("unmappable");
    // Spark's JDBC source reads a `time` as a timestamp of 1970-01-01: this source refuses it.
    sql(&format!("CREATE TABLE {t} (id bigint, key time)"));
    let error = message(library().and_then(|l| l.batch_read().options(options(&t)).run()));
    assert!(
        error.contains(
            "column `key` has the PostgreSQL type `time`, which maps to no Spark type that this \
             data source reads"
        ) && error.contains("\"key\"::text AS \"key\""),
        "{error}"
    );
}

#[test]
fn options_that_do_not_go_together_are_refused() {
    let mut partial = options("t");
    partial.push(("partitionColumn".into(), "id".into()));
    let error = message(library().and_then(|l| l.batch_read().options(partial).run()));
    assert!(
        error.contains(
            "options `partitionColumn`, `lowerBound`, `upperBound` and `numPartitions` go together"
        ),
        "{error}"
    );
}

#[test]
fn a_server_that_restarts_during_a_read_fails_the_task_with_its_message(
) -> spark_datasource::Result<()> {
    // A server of its own: restarting the shared one would fail the other tests.
    let server = Server::start();
    // Rows that come slowly (a pause every thousand), so that the server is working, not
    // blocked on a full socket, when it shuts down: it then sends its message before it
    // closes the connection. (A backend blocked writing to a client that does not read cannot
    // send it: the task then fails with the connection's error.)
    let mut options = server.options("");
    options.retain(|(k, _)| k != "dbtable");
    options.push((
        "query".into(),
        "SELECT i AS id FROM generate_series(1, 1000000) AS i \
         WHERE i % 1000 <> 0 OR pg_sleep(0.01)::text = ''"
            .into(),
    ));
    options.push(("fetchsize".into(), "1000".into()));
    let source = Source::create("postgres", Options::new(options))?;
    let reader = source.reader(source.schema()?)?;
    let partition = reader.partitions()?.remove(0);
    let mut batches = reader.read(partition, &TaskContext::for_tests(0, 0))?;
    let first = batches.next().transpose()?;
    assert!(first.is_some_and(|b| b.num_rows() == 1000));
    // Restarted while the task reads on, as a Spark task does: its thread waits on the
    // socket, and takes the server's message before the connection closes.
    let error = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            server.restart();
        });
        batches
            .find_map(|batch| batch.err())
            .map(|e| e.to_string())
            .unwrap_or_default()
    });
    // The server's message comes first on the wire, but PostgreSQL closes a connection whose
    // Sync it has not read (the client sends one after COPY's Execute) with a reset, and
    // Linux may drop received bytes on a reset: then the task fails with the connection's
    // error instead.
    let servers = "reading the `query` failed: FATAL: terminating connection due to \
                   administrator command";
    let reset = "reading the `query` failed: error communicating with the server: Connection \
                 reset by peer";
    // Over TLS (the server's, as by default), a backend that could not send its message (the
    // task slow to read, on a loaded machine) ends the session with TLS's close_notify before
    // it closes the socket, so the connection's error is that it closed.
    let closed = "reading the `query` failed: connection closed";
    assert!(
        error.starts_with(servers) || error.starts_with(reset) || error == closed,
        "{error}"
    );
    // The server is back: a new read works.
    let reader = source.reader(source.schema()?)?;
    assert!(reader.partitions()?.len() == 1);
    Ok(())
}

/// An array of two dimensions is refused with the fix in UTC and east of UTC, where the first
/// days in a `timestamp[]` are converted apart, element by element (Asia/Kolkata).
#[test]
fn a_timestamp_array_of_two_dimensions_is_refused_with_the_fix_in_every_time_zone() {
    const NAME: &str =
        "failures::a_timestamp_array_of_two_dimensions_is_refused_with_the_fix_in_every_time_zone";
    let east = crate::helpers::in_time_zone(NAME, "Asia/Kolkata");
    let t = table(if east {
        "dimensions_east"
    } else {
        "dimensions"
    });
    for first in ["4714-11-24 02:00 BC", "2024-01-01 00:00"] {
        sql(&format!(
            "DROP TABLE IF EXISTS {t}; CREATE TABLE {t} (id int PRIMARY KEY, tss timestamp[]); \
             INSERT INTO {t} VALUES (1, ARRAY[['{first}', '2024-01-01 00:00']]::timestamp[])"
        ));
        let error = message(library().and_then(|l| l.batch_read().options(options(&t)).run()));
        assert!(
            error.contains("column `tss` of `dbtable`")
                && error.contains(
                    "an array of 2 dimensions, which Spark's array of version 1 reads as one \
                     dimension only"
                ),
            "{first}: {error}"
        );
    }
}
