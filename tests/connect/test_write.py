"""Writes from a Connect client into the generated read-write variant (e2e_rw), read back with
the same `path`: append, overwrite, and a streaming write restarted from its checkpoint."""

import time

from connect_helpers import native

SCHEMA = "id long, label string"


def table_rows(spark, path):
    return sorted((r.id, r.label) for r in native(spark, "e2e_rw", path=path).load().collect())


def save(df, path, mode):
    # ANCHOR: write
    df.write.format("native").option("source", "e2e_rw").option("path", path).mode(mode).save()
    # ANCHOR_END: write


def test_appends_and_an_overwrite_are_read_back(spark, tmp_path):
    path = str(tmp_path / "table")
    rows = [(i, None if i % 4 == 3 else f"row {i}") for i in range(12)]

    save(spark.createDataFrame(rows, SCHEMA).repartition(2), path, "append")
    save(spark.createDataFrame(rows[:3], SCHEMA), path, "append")
    assert table_rows(spark, path) == sorted(rows + rows[:3])

    save(spark.createDataFrame([(7, "new")], SCHEMA), path, "overwrite")
    assert table_rows(spark, path) == [(7, "new")]


def run_batches(query, batches):
    deadline = time.monotonic() + 120
    while sum(1 for p in query.recentProgress if (p.numInputRows or 0) > 0) < batches:
        if query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, "the streaming query did not progress"
        time.sleep(0.2)
    query.stop()


def test_a_streaming_read_and_write_restart_from_the_checkpoint_with_every_row_once(
    spark, tmp_path
):
    path = str(tmp_path / "table")
    checkpoint = str(tmp_path / "checkpoint")

    def start():
        # ANCHOR: stream
        stream = (
            spark.readStream.format("native")
            .option("source", "c_range")
            .option("rows_per_batch", 5)
            .load()
        )
        return (
            stream.writeStream.format("native")
            .option("source", "e2e_rw")
            .option("path", path)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="100 milliseconds")
            .start()
        )
        # ANCHOR_END: stream

    run_batches(start(), 2)
    first = len(table_rows(spark, path))
    run_batches(start(), 2)

    written = table_rows(spark, path)
    assert first >= 10 and len(written) > first, "the restart went on where the first run ended"
    assert written == [(i, None if i % 3 == 2 else f"label {i}") for i in range(len(written))]
