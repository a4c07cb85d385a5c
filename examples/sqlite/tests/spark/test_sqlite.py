"""The sqlite example on Spark, through the JVM plugin (`format("native")`) and through the
bridge, against Python's sqlite3 on the same generated database: the same rows for every
storage class and NULLs, partitioned by rowid; filters that give the rows Spark's own
evaluation gives; writes that sqlite3 reads back as they were written.

`SPARKDS_SQLITE_ROWS` sets the size of the database (20,000 rows by default, so that the suite
runs in seconds; `SPARKDS_SQLITE_ROWS=1000000` is the million-row run)."""

import math
import os
import sqlite3

import pytest

ROWS = int(os.environ.get("SPARKDS_SQLITE_ROWS", "20000"))
WORDS = ["", "a", "A", "é☃", "ab%_", "b"]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Table `t`: INTEGER, REAL, TEXT, BLOB and NUMERIC columns, NULL in some rows, with
    negative numbers, infinities, -0.0, empty and non-ASCII text."""
    path = str(tmp_path_factory.mktemp("sqlite") / "db.sqlite")
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n NUMERIC)")
        connection.executemany(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            (
                (
                    None if k % 7 == 0 else k * 7919 % 1000 - 500,
                    [None, math.inf, -0.0][k % 11] if k % 11 < 3 else k / 8 - 1000,
                    None if k % 5 == 0 else WORDS[k % 6] * (k % 3 + 1),
                    None if k % 3 == 0 else bytes([k % 256, 0, 255]),
                    None if k % 13 == 0 else k // 2,
                )
                for k in range(ROWS)
            ),
        )
    return path


def _sqlite(path, sql):
    with sqlite3.connect(path) as connection:
        return connection.execute(sql).fetchall()


def _read(spark, bridge, path, db, **options):
    reader = spark.read.format("native").option("source", "sqlite") if path == "jvm" else spark.read.format(bridge)
    return reader.option("path", db).options(**options).load()


def _rows(rows):
    # Spark returns binary as bytearray, and NUMERIC's integers as doubles.
    return sorted(
        repr(tuple(bytes(v) if isinstance(v, bytearray) else v for v in row)) for row in rows
    )


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_reads_the_rows_that_sqlite3_reads(spark, bridge, db, path):
    df = _read(spark, bridge, path, db, table="t", numPartitions="4")
    assert [f.dataType.simpleString() for f in df.schema.fields] == ["bigint", "double", "string", "binary", "double"]
    assert df.rdd.getNumPartitions() == 4
    expected = [(i, r, s, b, None if n is None else float(n)) for (i, r, s, b, n) in _sqlite(db, "SELECT * FROM t")]
    assert _rows(df.collect()) == _rows(expected)
    assert df.count() == ROWS
    assert len(df.select("s").limit(7).collect()) == 7


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_filters_give_the_rows_of_sparks_own_evaluation(spark, bridge, db, path):
    df = _read(spark, bridge, path, db, table="t", numPartitions="3")
    rows = _sqlite(db, "SELECT i, r, s, b FROM t")
    local = spark.createDataFrame(rows, "i bigint, r double, s string, b binary")
    for condition in [
        "i > 100 AND NOT startswith(s, 'a')",
        "NOT (r < 0) OR s IS NULL",
        "r = -0.0",
        "contains(s, '%_') OR endswith(s, '')",
        "s NOT IN ('A', NULL)",
        "b <= X'0900FF'",
        "r < double('NaN')",
        "i IN (1, -499, NULL)",
    ]:
        ours = df.select("i", "r", "s", "b").filter(condition)
        assert _rows(ours.collect()) == _rows(local.filter(condition).collect()), condition


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_writes_append_and_overwrite_as_sqlite3_reads_them_back(spark, bridge, tmp_path, path):
    db = str(tmp_path / "written.sqlite")
    df = spark.createDataFrame([(i, None if i % 3 == 0 else f"n{i}") for i in range(50)], "id bigint, name string").repartition(3)

    def write(frame, mode):
        writer = frame.write.format("native").option("source", "sqlite") if path == "jvm" else frame.write.format(bridge)
        writer.option("path", db).option("table", "people").mode(mode).save()

    write(df, "append")
    write(df, "append")
    assert _sqlite(db, "SELECT count(*), count(DISTINCT id) FROM people") == [(100, 50)]
    write(df.filter("id < 10"), "overwrite")
    assert sorted(_sqlite(db, "SELECT * FROM people")) == sorted((i, None if i % 3 == 0 else f"n{i}") for i in range(10))
    assert _sqlite(db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'spark stage %'") == [(0,)]
