"""bench/bench.py and bench/cdc.py end to end on few rows. Each starts a Spark session of its
own: this file runs before the others (pytest takes files in order), so before this suite's
session starts, and two JVMs do not run at once."""

import os
import subprocess
import sys


def test_the_benchmark_runs_on_a_small_table(library, jar):
    """bench/bench.py end to end, on few rows: every path reads every shape (and every row)
    and writes every row."""
    example = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bench = os.path.join(example, "bench", "bench.py")
    done = subprocess.run(
        [sys.executable, bench, "--rows", "20000", "--repeat", "1", "--library", library, "--jar", jar],
        capture_output=True,
        text=True,
        env=dict(os.environ, BENCH_DRIVER_MEMORY="1g"),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for shape in ("count", "count + 2 sums", "one column", "filter 1 %", "wide"):
        assert f"| {shape} |" in done.stdout, done.stdout
    assert "| write, JVM plugin |" in done.stdout and "| write, Spark JDBC |" in done.stdout


def test_the_change_data_capture_benchmark_runs_on_few_rows(library, jar):
    """bench/cdc.py end to end: both sources read every row, and every row's latency is timed."""
    example = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bench = os.path.join(example, "bench", "cdc.py")
    done = subprocess.run(
        [sys.executable, bench, "--rows", "5000", "--repeat", "1", "--latency", "3", "--library", library, "--jar", jar],
        capture_output=True,
        text=True,
        env=dict(os.environ, BENCH_DRIVER_MEMORY="1g"),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| PostgreSQL change data capture (JVM plugin) |" in done.stdout, done.stdout
    assert "| Spark file stream (Parquet) |" in done.stdout, done.stdout
