"""Change data capture on Spark, through the JVM plugin and the bridge: a stream of a table that
several sessions change at random, applied by foreachBatch to a Parquet table, ends equal to
the table, with every change once, in commit order per key; the offsets that Spark reports
carry the slot's lag; a schema change fails the query with the table and what changed."""

import base64
import itertools
import json
import time

import pytest
from cdc_support import (
    applier,
    check_exactly_once,
    create_table,
    hold_lock,
    holding_lock,
    release,
    run_sessions,
    stream_options,
    wait_for_slot,
    wait_until_equal,
)

_names = itertools.count()


def _stream(spark, bridge, path, options):
    if path == "jvm":
        reader = spark.readStream.format("native").option("source", "postgres")
    else:
        reader = spark.readStream.format(bridge)
    return reader.options(**options).load()


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_a_stream_applied_to_parquet_ends_equal_to_the_source(spark, bridge, pg_logical, path, tmp_path):
    table = f"cdc_{path}_{next(_names)}"
    create_table(pg_logical, table)
    # Micro-batches of more than 4 kB of WAL are decoded in three parts.
    options = stream_options(
        pg_logical, f"slot_{table}", table, maxChangesPerTrigger="500", decodingTasks="3", decodingTaskBytes="4096"
    )
    out = str(tmp_path / "target")
    query = (
        _stream(spark, bridge, path, options)
        .writeStream.foreachBatch(applier(table, out))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        wait_for_slot(pg_logical, f"slot_{table}")
        # The query runs while four sessions change the table at once.
        run_sessions(pg_logical, table, sessions=4, transactions=120, seed=len(path))
        wait_until_equal(pg_logical, table, out, lambda: query.exception())
    finally:
        query.stop()
    assert check_exactly_once(out) > 0


def _offset(progress_offset):
    """The stream's own offset inside the one that Spark reports (the plugin's and the bridge's
    wrappers hold it in base64)."""
    wrapper = json.loads(progress_offset) if isinstance(progress_offset, str) else progress_offset
    encoded = wrapper.get("sparkds") or wrapper.get("native_offset")
    return json.loads(base64.b64decode(encoded))


def wal_position(pg):
    """The server's current WAL position, in bytes."""
    return int(pg.psql("SELECT pg_current_wal_lsn() - '0/0'", args=("-t", "-A")).strip())


TRANSACTIONS = 200


def test_the_progress_reports_the_lsn_and_the_lag_of_each_micro_batch(spark, pg_logical, tmp_path):
    table = f"cdc_progress_{next(_names)}"
    create_table(pg_logical, table)
    options = stream_options(pg_logical, f"slot_{table}", table, maxChangesPerTrigger="50")
    query = (
        _stream(spark, None, "jvm", options)
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_for_slot(pg_logical, f"slot_{table}")
        # The stream waits for its slot's lock while the changes are made, so that it meets a
        # backlog (a lag) however fast it would have kept up, then catches up.
        holder = hold_lock(pg_logical, f"slot_{table}", "cdc-progress-hold")
        try:
            deadline = time.time() + 60
            while not holding_lock(pg_logical, "cdc-progress-hold"):
                assert time.time() < deadline, "the test's session never got the slot's lock"
                time.sleep(0.1)
            before = wal_position(pg_logical)
            run_sessions(pg_logical, table, sessions=1, transactions=TRANSACTIONS, seed=7)
            per_transaction = (wal_position(pg_logical) - before) / TRANSACTIONS
        finally:
            release(pg_logical, "cdc-progress-hold", holder)
        # Caught up: less than one transaction's WAL behind. Not 0: the server writes WAL of its
        # own (a snapshot of running transactions every 15 s, other tests' databases), which a
        # last batch read on a loaded machine can find past its end.
        caught_up = lambda p: p.get("lag") is not None and p["lag"] < per_transaction  # noqa: E731
        deadline = time.time() + 120
        reported = []
        while time.time() < deadline and not any(caught_up(p) for p in reported):
            seen = {r["batch"] for r in reported}
            for progress in query.recentProgress:
                source = progress["sources"][0]
                if source["numInputRows"] > 0 and progress["batchId"] not in seen:
                    end = _offset(source["endOffset"])
                    reported.append(
                        {"batch": progress["batchId"], "rows": source["numInputRows"], "lag": end.get("lagBytes")}
                    )
            time.sleep(0.5)
    finally:
        query.stop()
    # Micro-batches of whole transactions up to the limit (a transaction has up to 4 changes),
    # each with the WAL the server had flushed past it: first a backlog of transactions, then
    # caught up.
    assert reported, "no micro-batch with rows"
    assert all(r["rows"] <= 50 + 3 for r in reported), reported
    assert any(r["lag"] > 2 * per_transaction for r in reported), (per_transaction, reported)
    assert any(caught_up(r) for r in reported), (per_transaction, reported)


def test_a_column_added_under_the_stream_fails_the_query_naming_the_table(spark, pg_logical, tmp_path):
    from pyspark.errors import StreamingQueryException

    table = f"cdc_schema_{next(_names)}"
    create_table(pg_logical, table)
    options = stream_options(pg_logical, f"slot_{table}", table)
    query = (
        _stream(spark, None, "jvm", options)
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        wait_for_slot(pg_logical, f"slot_{table}")
        pg_logical.psql(f"INSERT INTO {table} VALUES (1, 1, 'a', 1)")
        pg_logical.psql(f"ALTER TABLE {table} ADD COLUMN extra int; INSERT INTO {table} VALUES (2, 1, 'b', 2, 3)")
        with pytest.raises(StreamingQueryException) as caught:
            query.awaitTermination(120)
    finally:
        query.stop()
    message = str(caught.value)
    assert f"the table `public.{table}` changed at " in message, message
    assert "column `extra` (int4) was added" in message, message


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_a_micro_batch_of_many_arrow_batches_reads_every_change(spark, bridge, pg_logical, path, tmp_path):
    """1,000 changes in one micro-batch of batches of 100 rows (`fetchsize`): each batch after
    the first reloads the structs of the table's columns (the plugin once lost them when Spark
    closed the batch before)."""
    table = f"cdc_batches_{next(_names)}"
    create_table(pg_logical, table)
    options = stream_options(pg_logical, f"slot_{table}", table, fetchsize="100")
    checkpoint = str(tmp_path / "checkpoint")

    def drain():
        query = (
            _stream(spark, bridge, path, options)
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(300)
        if query.exception() is not None:
            raise AssertionError(f"the stream failed: {query.exception()}")
        return sum(p["numInputRows"] for p in query.recentProgress)

    drain()  # creates the slot
    pg_logical.psql(
        f"INSERT INTO {table} SELECT i, 1, 'n' || i, i / 100.0 FROM generate_series(1, 1000) AS i"
    )
    assert drain() == 1000
