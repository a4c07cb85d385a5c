"""Streaming reads of c_range on every runtime: a query restarted from its checkpoint reads every
row exactly once, and Trigger.AvailableNow reads what is there when it starts, then stops."""

import json
import os

import pytest

from claims import c_range_rows, failure, run_batches


@pytest.mark.core
def test_a_streaming_read_restarts_from_its_checkpoint_and_reads_every_row_once(
    runtime, tmp_path
):
    output = str(tmp_path / "out")
    checkpoint = str(tmp_path / "checkpoint")

    def start(**trigger):
        stream = runtime.read_stream("c_range", rows_per_batch=7, num_partitions=2).load()
        return (
            stream.writeStream.format("parquet")
            .option("path", output)
            .option("checkpointLocation", checkpoint)
            .trigger(**trigger)
            .start()
        )

    def written():
        return sorted((r.id, r.label) for r in runtime.spark.read.parquet(output).collect())

    run_batches(start(processingTime="100 milliseconds"), 2)
    first = len(written())
    assert first >= 14
    if not runtime.resumes_streams:
        text = str(failure(lambda: run_batches(start(processingTime="100 milliseconds"), 2)))
        assert "cannot resume a stream from its checkpoint" in text, text
        assert "use Spark 4.2 or later" in text
        return
    run_batches(start(processingTime="100 milliseconds"), 2)
    second = len(written())
    assert second > first
    # Trigger.AvailableNow: what is available when the query starts, then it stops by itself.
    query = start(availableNow=True)
    assert query.awaitTermination(120)
    assert query.exception() is None

    rows = written()
    assert len(rows) > second
    assert rows == c_range_rows(0, len(rows)), "a restart reads every row exactly once"
    assert len(rows) % 7 == 0, "every micro-batch reads rows_per_batch rows"
    if runtime.name != "bridge":
        # The plugin's offsets in the checkpoint hold the library's bytes.
        offsets = os.path.join(checkpoint, "offsets")
        last = max(os.listdir(offsets), key=lambda name: int(name) if name.isdigit() else -1)
        with open(os.path.join(offsets, last)) as f:
            assert set(json.loads(f.read().splitlines()[-1])) == {"sparkds"}
