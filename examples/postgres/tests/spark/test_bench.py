"""bench/bench.py end to end on few rows. It starts a Spark session of its own: this file runs
before test_postgres.py (pytest takes files in order), so before this suite's session starts,
and the two JVMs do not run at once."""

import os
import subprocess
import sys


def test_the_benchmark_runs_on_a_small_table(library, jar):
    """bench/bench.py end to end, on few rows: every path reads and writes every row."""
    example = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bench = os.path.join(example, "bench", "bench.py")
    done = subprocess.run(
        [sys.executable, bench, "--rows", "20000", "--library", library, "--jar", jar],
        capture_output=True,
        text=True,
        env=dict(os.environ, BENCH_DRIVER_MEMORY="1g"),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| read, JVM plugin |" in done.stdout and "| write, Spark JDBC |" in done.stdout
