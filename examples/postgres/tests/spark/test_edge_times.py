"""Timestamps at both ends of what Spark's literals name, in three time zones: a `timestamp`
(read as an instant in the zone) and a `timestamptz` of the same local time, read through the
plugin, are Spark's own literal of that local time and what Spark's JDBC source reads, in UTC,
America/New_York and Asia/Kolkata (JDBC differs from both on one value, said below). Each zone
is an application of its own (edge_times.py): the
JVM's zone, the session's and this machine's (`TZ`, which the library reads) are that zone."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import JDBC_JAR

HERE = os.path.dirname(os.path.abspath(__file__))
# The local times at the ends of Spark's literals (0001-01-01 to 9999-12-31).
LOCAL_TIMES = {"first": "0001-01-01 00:00:00", "last": "9999-12-31 23:59:59.999999"}
ZONES = ["UTC", "America/New_York", "Asia/Kolkata"]


@pytest.fixture(scope="module")
def edge_reads(pg, jar, library):
    """What each zone's application read, {zone: {way: {label: [ts, tz]}}}: the three run at
    once, since most of each is a JVM starting."""
    scratch = tempfile.mkdtemp(prefix="sparkds-edge-times-")
    try:
        libraries = os.path.join(scratch, "lib")
        os.makedirs(libraries)
        shutil.copy(library, libraries)
        runs = {}
        for zone in ZONES:
            table = f"edges_{zone.replace('/', '_').lower()}"
            rows = ", ".join(
                f"('{label}', TIMESTAMP '{text}', TIMESTAMPTZ '{text} {zone}')"
                for label, text in LOCAL_TIMES.items()
            )
            pg.psql(f"CREATE TABLE {table} (label text, ts timestamp, tz timestamptz); "
                    f"INSERT INTO {table} VALUES {rows}")
            settings = {
                "jar": jar,
                "jdbc_jar": JDBC_JAR,
                "libraries": libraries,
                "warehouse": os.path.join(scratch, f"warehouse-{len(runs)}"),
                "table": table,
                "options": pg.options(),
                "jdbc_options": pg.jdbc_options(),
                "local_times": LOCAL_TIMES,
            }
            process = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "edge_times.py")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(os.environ, TZ=zone),
                text=True,
            )
            runs[zone] = (process, json.dumps(settings))
        reads = {}
        for zone, (process, settings) in runs.items():
            out, err = process.communicate(settings, timeout=600)
            reads[zone] = (process.returncode, out, err)
        yield reads
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize("zone", ZONES)
def test_edge_timestamps_are_spark_s_literals_and_jdbc_s_in_every_zone(edge_reads, zone):
    returncode, out, err = edge_reads[zone]
    assert returncode == 0, err[-4000:]
    read = json.loads(out.strip().splitlines()[-1])

    assert read["plugin"] == read["literal"], read
    # JDBC agrees but on a `timestamptz` of 0001 in a zone whose offset was then its local mean
    # time (New York's -4:56:02, Kolkata's +5:53:28): the server sends that offset, and
    # Spark's JDBC source reads the instant with the zone's standard offset instead, minutes
    # away from Spark's literal and the plugin.
    jdbc = read["jdbc"]
    if zone != "UTC":
        assert jdbc["first"][1] != read["literal"]["first"][1], read
        jdbc["first"][1] = read["literal"]["first"][1]
    assert jdbc == read["literal"], read
