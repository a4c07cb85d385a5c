"""Streaming reads of c_range through the plugin: offsets in the checkpoint, a restart that
reads every row exactly once."""

import json
import os
import time

import pytest


@pytest.mark.core
def test_a_streaming_read_restarts_from_its_checkpoint_and_reads_every_row_once(spark, tmp_path):
    output = str(tmp_path / "out")
    checkpoint = str(tmp_path / "checkpoint")

    def run(batches):
        stream = (
            spark.readStream.format("native")
            .option("source", "c_range")
            .option("rows_per_batch", 7)
            .option("num_partitions", 2)
            .load()
        )
        query = (
            stream.writeStream.format("parquet")
            .option("path", output)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="100 milliseconds")
            .start()
        )
        deadline = time.monotonic() + 180
        while sum(1 for p in query.recentProgress if p["numInputRows"] > 0) < batches:
            if query.exception() is not None:
                raise query.exception()
            assert time.monotonic() < deadline, "the streaming read did not progress"
            time.sleep(0.3)
        query.stop()

    run(2)
    first = spark.read.parquet(output).count()
    run(2)

    ids = sorted(row.id for row in spark.read.parquet(output).collect())
    assert first >= 14
    assert len(ids) > first
    assert ids == list(range(len(ids))), "a restart reads every row exactly once"
    labels = {row.id: row.label for row in spark.read.parquet(output).collect()}
    assert all(labels[i] == (None if i % 3 == 2 else f"label {i}") for i in ids)

    # The offsets in the checkpoint are the library's bytes (8 bytes, little-endian rows).
    offsets = os.path.join(checkpoint, "offsets")
    last = max(os.listdir(offsets), key=lambda name: int(name) if name.isdigit() else -1)
    with open(os.path.join(offsets, last)) as f:
        lines = f.read().splitlines()
    offset = json.loads(lines[-1])
    assert set(offset) == {"sparkds"}

