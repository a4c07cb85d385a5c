"""The Rust examples on Spark: what the guide page shows for rust_range, a file table written,
overwritten and read back by text_files, with a failed task that leaves nothing, and a
tail_stream query restarted from its checkpoint that writes every line exactly once."""

import json
import os

import pytest
from pyspark.sql import functions as F


def test_the_bridge_is_the_package_of_the_repositorys_python_folder():
    import spark_native_bridge

    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    package = os.path.dirname(os.path.abspath(spark_native_bridge.__file__))
    assert package == os.path.join(root, "python", "spark_native_bridge")


def test_rust_range_reads_the_numbers_below_end_in_two_partitions(spark, rust_range):
    df = spark.read.format(rust_range).option("end", 100).load()

    assert df.schema.simpleString() == "struct<id:bigint>"
    assert df.rdd.getNumPartitions() == 2
    assert sorted(row.id for row in df.collect()) == list(range(100))


def _people(spark, ids):
    rows = [(i, None if i % 3 == 0 else f"name {i}", i / 2) for i in ids]
    return spark.createDataFrame(rows, "id bigint, name string, score double").repartition(2)


def _read(spark, text_files, path, fmt):
    df = spark.read.format(text_files).option("path", path).option("format", fmt).load()
    return sorted((r.id, r.name, r.score) for r in df.collect())


def _staged(path):
    return [f for _, _, files in os.walk(os.path.join(path, "_staging")) for f in files]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_text_files_reads_what_it_wrote_and_an_overwrite_replaces_it(
    spark, text_files, tmp_path, fmt
):
    path = str(tmp_path / "people")
    writer = lambda df: df.write.format(text_files).option("path", path).option("format", fmt)

    writer(_people(spark, range(10))).mode("append").save()
    writer(_people(spark, range(10, 15))).mode("append").save()
    assert [r[0] for r in _read(spark, text_files, path, fmt)] == list(range(15))

    writer(_people(spark, range(100, 103))).mode("overwrite").save()
    assert _read(spark, text_files, path, fmt) == [
        (100, "name 100", 50.0),
        (101, "name 101", 50.5),
        (102, None, 51.0),
    ]
    assert _staged(path) == []


def test_text_files_splits_a_file_into_byte_ranges(spark, text_files, tmp_path):
    path = tmp_path / "big"
    path.mkdir()
    (path / "numbers.csv").write_text("n\n" + "".join(f"{i}\n" for i in range(1000)))

    df = spark.read.format(text_files).option("path", str(path)).option("split_bytes", 500).load()

    assert df.rdd.getNumPartitions() > 5
    assert sorted(r.n for r in df.collect()) == list(range(1000))


def test_text_files_a_failed_task_leaves_no_partial_output(spark, text_files, tmp_path):
    path = str(tmp_path / "people")
    _people(spark, [1]).write.format(text_files).option("path", path).mode("append").save()
    failing = spark.range(0, 100, 1, 4).select(
        F.col("id"),
        F.when(F.col("id") == 90, F.raise_error(F.lit("boom in task")))
        .otherwise(F.lit("x"))
        .alias("name"),
        F.lit(1.0).alias("score"),
    )

    with pytest.raises(Exception) as raised:
        failing.write.format(text_files).option("path", path).mode("append").save()

    assert "boom in task" in str(raised.value)
    assert _read(spark, text_files, path, "csv") == [(1, "name 1", 0.5)]
    assert _staged(path) == []


def _copy_lines(spark, tail_stream, source, sink, checkpoint):
    """Runs the query source -> sink until it caught up, then stops it."""
    # No `max_lines_per_trigger`: with availableNow, the bridge stops at the first offset that
    # latest_offset returns (version 1 has no admission control), so a rate limit would stop
    # the query after one micro-batch.
    query = (
        spark.readStream.format(tail_stream)
        .option("path", source)
        .load()
        .writeStream.format(tail_stream)
        .option("path", sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()


def _written(sink):
    rows = []
    for name in sorted(os.listdir(sink)):
        if name.startswith("_"):
            continue
        with open(os.path.join(sink, name)) as lines:
            rows += [json.loads(line) for line in lines]
    return [(r["file"], r["position"], r["line"]) for r in rows]


def test_tail_stream_survives_a_restart_with_every_line_exactly_once(
    spark, tail_stream, tmp_path
):
    source, sink = tmp_path / "logs", tmp_path / "copy"
    source.mkdir()
    sink.mkdir()
    checkpoint = str(tmp_path / "checkpoint")
    (source / "app-1.log").write_text("".join(f"first {i}\n" for i in range(7)))

    _copy_lines(spark, tail_stream, str(source), str(sink), checkpoint)
    with open(source / "app-1.log", "a") as log:
        log.write("first 7\nhalf")
    (source / "app-2.log").write_text("second 0\nsecond 1\n")
    # The query restarts from its checkpoint: it reads only what it had not committed.
    _copy_lines(spark, tail_stream, str(source), str(sink), checkpoint)

    lines = sorted(line for _, _, line in _written(str(sink)))
    expected = sorted([f"first {i}" for i in range(8)] + ["second 0", "second 1"])
    assert lines == expected
