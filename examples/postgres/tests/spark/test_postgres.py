"""The postgres example on Spark, through the JVM plugin (`format("native")`) and through the
bridge, against Spark's own JDBC source on the same server: the same rows and the same Spark
types for every supported PostgreSQL type, reads partitioned as JDBC partitions them or by
pages, filters, and writes (append and overwrite) that JDBC reads back as they were written."""

import itertools
import time

import pytest
from pyspark.sql import functions as F

_names = itertools.count()

COLUMNS = (
    "id integer NOT NULL, s smallint, i integer, b bigint, n numeric(12,3), r real, d double precision, "
    "t text, v varchar(10), c char(4), ok boolean, day date, ts timestamp, tz timestamptz, "
    "bin bytea, ints integer[], texts text[], nums numeric(5,2)[], days date[], big numeric"
)

ROWS = """
 (1, -32768, -2147483648, -9223372036854775808, -123456789.123, '-0', '-Infinity',
  'héllo ☃', 'x', 'ab', true, '1969-12-31', '1900-01-01 00:00:00.000001',
  '2024-02-29 23:59:59.999999+00', '\\x00ff10', '{1,NULL,3}', '{"a",NULL,""}',
  '{1.5,-2.25}', '{2000-01-01}', 1.000000000000000001),
 (2, 32767, 2147483647, 9223372036854775807, 0.001, 1.5, 'Infinity', '', 'yy', 'abcd',
  false, '2262-04-11', '2000-01-01 00:00:00', '1970-01-01 00:00:00+00', '\\x', '{}', '{}',
  '{}', '{}', -12345678901234567890.123456789012345678),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL)
"""


def _table(pg, what, columns=COLUMNS, rows=ROWS):
    name = f"{what}_{next(_names)}"
    pg.psql(f"CREATE TABLE {name} ({columns})")
    if rows:
        pg.psql(f"INSERT INTO {name} VALUES {rows}")
    return name


def _native(spark, pg, **options):
    return spark.read.format("native").option("source", "postgres").options(**pg.options(**options)).load()


def _bridged(spark, bridge, pg, **options):
    return spark.read.format(bridge).options(**pg.options(**options)).load()


def _jdbc(spark, pg, **options):
    return spark.read.format("jdbc").options(**pg.jdbc_options(**options)).load()


def _rows(df):
    # repr: NaN is not equal to itself, its repr is.
    return sorted(repr(row) for row in df.collect())


def _types(df):
    return [(f.name, f.dataType.simpleString(), f.nullable) for f in df.schema.fields]


@pytest.mark.parametrize("path", ["jvm", "bridge"])
@pytest.mark.parametrize("ntz", [None, "false", "true"])
def test_every_type_reads_with_the_rows_and_types_of_sparks_jdbc_source(spark, bridge, pg, path, ntz):
    table = _table(pg, "types")
    options = dict(dbtable=table) if ntz is None else dict(dbtable=table, preferTimestampNTZ=ntz)
    jdbc = _jdbc(spark, pg, **options)
    ours = _native(spark, pg, **options) if path == "jvm" else _bridged(spark, bridge, pg, **options)

    types = {name: (type_, nullable) for name, type_, nullable in _types(ours)}
    assert types["ts"] == ("timestamp_ntz" if ntz == "true" else "timestamp", True)
    # `id` is NOT NULL: not nullable here, where Spark's JDBC source reads every column as
    # nullable (JDBCRDD.resolveTable's alwaysNullable); the types are the same.
    assert types["id"] == ("int", False)
    assert all(nullable for _, _, nullable in _types(jdbc))
    assert [t[:2] for t in _types(ours)] == [t[:2] for t in _types(jdbc)]
    assert [t[2] for t in _types(ours)] == [name != "id" for name, _, _ in _types(ours)]
    assert _rows(ours) == _rows(jdbc)


# Types that Spark's JDBC source reads as strings (the JDBC driver reports them as OTHER,
# SQLXML or, for an enum, VARCHAR; money by its name), arrays of some, and timestamp arrays.
TEXT_COLUMNS = (
    "id integer, u uuid, jb jsonb, j json, ip inet, net cidr, mac macaddr, mac8 macaddr8, x xml, "
    "m MOOD, iv interval, cash money, tsv tsvector, pt point, lsn pg_lsn, span int4range, "
    "us uuid[], jbs jsonb[], ips inet[], feelings MOOD[], ts timestamp, tss timestamp[]"
)

TEXT_ROWS = """
 (1, 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"b": 1, "a": [1, 2]}', '{"b":1,  "a":2}',
  '192.168.0.1', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', '<a>x</a>',
  'happy', '1 day 02:03:04.5', 12.34, 'a fat cat', '(1,2)', '16/B374D848', '[1,5)',
  '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,NULL}', ARRAY['{"x": 1}'::jsonb], '{1.2.3.4,::1,10.0.0.1/8}',
  '{sad,happy}', '2024-03-10 02:30:00', '{"2024-01-01 00:00:00",NULL}'),
 (2, '00000000-0000-0000-0000-000000000000', '[]', 'null', '::1', '::/0', '00:00:00:00:00:00',
  '00:00:00:00:00:00:00:00', '', 'sad', '-1 mons', -0.5, '', '(0,0)', '0/0', 'empty', '{}', '{}',
  '{}', '{}', '1900-01-01 00:00:00.000001', '{}'),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL)
"""


@pytest.mark.parametrize("path", ["jvm", "bridge"])
@pytest.mark.parametrize("ntz", ["false", "true"])
def test_types_that_jdbc_reads_as_strings_read_as_it_reads_them(spark, bridge, pg, path, ntz):
    mood = f"mood_{next(_names)}"
    pg.psql(f"CREATE TYPE {mood} AS ENUM ('sad', 'happy')")
    table = _table(pg, "texts", columns=TEXT_COLUMNS.replace("MOOD", mood), rows=TEXT_ROWS)
    options = dict(dbtable=table, preferTimestampNTZ=ntz)
    jdbc = _jdbc(spark, pg, **options)
    ours = _native(spark, pg, **options) if path == "jvm" else _bridged(spark, bridge, pg, **options)

    assert _types(ours) == _types(jdbc)
    assert ("jb", "string", True) in _types(ours)
    assert _rows(ours) == _rows(jdbc)
    # Filters on them: those that PostgreSQL evaluates as Spark does are pushed, the others
    # (a uuid or an enum is not compared as its text) are left to Spark. The rows are those
    # that Spark keeps of JDBC's rows; JDBC itself pushes `m < 'sad'` and PostgreSQL compares
    # enums in their declared order, which keeps no row here.
    spark_evaluates = _jdbc(spark, pg, pushDownPredicate="false", **options)
    for condition in [
        "u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",
        "m < 'sad'",
        "jb LIKE '[%'",
        "ts > timestamp'2000-01-01 00:00:00'" if ntz == "false" else "ts > timestamp_ntz'2000-01-01 00:00:00'",
        "ts IS NULL",
    ]:
        assert _rows(ours.where(condition)) == _rows(spark_evaluates.where(condition)), condition
    assert _rows(ours.where("m < 'sad'")) != []


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_writes_read_back_through_jdbc_as_they_were_written(spark, bridge, pg, path):
    source = _table(pg, "written_from")
    df = _jdbc(spark, pg, dbtable=source).repartition(2)
    target = f"written_{path}_{next(_names)}"

    def write(frame, mode):
        if path == "jvm":
            writer = frame.write.format("native").option("source", "postgres")
        else:
            writer = frame.write.format(bridge)
        writer.options(**pg.options(dbtable=target)).mode(mode).save()

    write(df, "append")
    write(df, "append")
    back = _jdbc(spark, pg, dbtable=target)
    assert _types(back) == _types(df)
    assert _rows(back) == sorted(_rows(df) * 2)

    write(df.where("id = 1"), "overwrite")
    assert _rows(_jdbc(spark, pg, dbtable=target)) == _rows(df.where("id = 1"))
    staged = pg.psql("SELECT count(*) FROM pg_class WHERE relname LIKE 'sparkds\\_%'", args=["-t"])
    assert staged.strip() == "0"


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_a_partitioned_read_has_the_partitions_and_rows_of_jdbc(spark, bridge, pg, path):
    table = _table(
        pg,
        "numbers",
        columns="id bigint, name text",
        rows=None,
    )
    pg.psql(
        f"INSERT INTO {table} SELECT i, 'n' || i FROM generate_series(1, 1000) AS i; "
        f"INSERT INTO {table} VALUES (NULL, 'no id')"
    )
    partitioning = dict(dbtable=table, partitionColumn="id", lowerBound="1", upperBound="1001", numPartitions="2")
    ours = _native(spark, pg, **partitioning) if path == "jvm" else _bridged(spark, bridge, pg, **partitioning)
    jdbc = _jdbc(spark, pg, **partitioning)

    assert ours.rdd.getNumPartitions() == jdbc.rdd.getNumPartitions() == 2
    assert _rows(ours) == _rows(jdbc)
    condition = "id > 10 AND name < 'n5' AND id IN (11, 12, 400, 999, 1000)"
    assert _rows(ours.where(condition)) == _rows(jdbc.where(condition))
    assert _rows(ours.select("name").limit(3)) != []


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_a_read_by_pages_has_every_row_once_and_lets_go_of_its_snapshot(spark, bridge, pg, path):
    table = _table(pg, "paged", columns="id bigint, name text", rows=None)
    pg.psql(f"INSERT INTO {table} SELECT i, 'n' || i FROM generate_series(1, 30000) AS i")
    pages = dict(dbtable=table, partitionColumn="ctid", numPartitions="3")
    ours = _native(spark, pg, **pages) if path == "jvm" else _bridged(spark, bridge, pg, **pages)
    if path == "bridge":
        # Spark plans a Python data source in a Python worker, which may end once it planned
        # (here the first read worked and the next ones did not), and the snapshot with it:
        # then the tasks say so, and no read returns other rows.
        expected = _rows(_jdbc(spark, pg, dbtable=table))
        for _ in range(3):
            try:
                assert _rows(ours) == expected
            except Exception as e:  # noqa: BLE001 (Spark wraps the task's error)
                assert "through the Python bridge, Spark plans in a Python worker" in str(e), str(e)
        return

    # Queries that run every partition (a plan alone, such as `rdd.getNumPartitions()`, holds its
    # snapshot until `snapshotTimeout`).
    # (A read of no column is one partition: the server counts its rows.)
    assert len(ours.groupBy(F.spark_partition_id()).agg(F.count("id")).collect()) == 3
    assert _rows(ours) == _rows(_jdbc(spark, pg, dbtable=table))
    # Each read planned its own snapshot, held by the driver (the plugin's JVM, or the bridge's
    # Python worker that planned it) until its tasks committed.
    held = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sparkds-read-snapshot'"
    for _ in range(100):
        if pg.psql(held, args=["-t"]).strip() == "0":
            break
        time.sleep(0.1)
    assert pg.psql(held, args=["-t"]).strip() == "0"


def test_errors_name_the_table_and_never_show_the_password(spark, pg):
    from pyspark.errors import PySparkException
    from py4j.protocol import Py4JJavaError

    with pytest.raises((PySparkException, Py4JJavaError)) as caught:
        _native(spark, pg, dbtable="no_such_table").collect()
    assert 'relation "no_such_table" does not exist' in str(caught.value)

    wrong = "wrong-pw-in-spark-5c2e"
    options = pg.options(dbtable="t")
    options["password"] = wrong
    with pytest.raises((PySparkException, Py4JJavaError)) as caught:
        spark.read.format("native").option("source", "postgres").options(**options).load().collect()
    assert "password authentication failed" in str(caught.value)
    assert wrong not in str(caught.value)



def test_a_filter_at_the_edge_of_the_timestamp_range_keeps_the_rows_that_spark_keeps(spark, pg):
    # The plugin only: through the bridge, Spark's own conversion of this literal for the
    # Python Data Source API fails the query first (ArithmeticException: long overflow).
    table = _table(pg, "edge", columns="id integer, tz timestamptz", rows=None)
    pg.psql(
        f"INSERT INTO {table} SELECT i, TIMESTAMPTZ '2024-01-01 00:00+00' + i * INTERVAL '1 minute' "
        "FROM generate_series(1, 500) AS i"
    )
    ours = _native(spark, pg, dbtable=table)
    # Its literal, shifted to PostgreSQL's epoch, wrapped: the filter returned no row.
    edge = "tz > timestamp_micros(-9223372036854775000)"
    assert ours.where(edge).count() == 500
    assert ours.where(f"NOT ({edge})").count() == 0


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_rows_larger_than_a_batch_budget_all_arrive(spark, bridge, pg, path):
    # A batch closes at batchBytes of text: 40 rows of 100 KB at 1 MB a batch make 4 batches or
    # more, each under the budget's row.
    query = "SELECT i AS id, repeat('x', 100000) AS body FROM generate_series(1, 40) AS i"
    options = dict(query=query, batchBytes="1000000")
    ours = _native(spark, pg, **options) if path == "jvm" else _bridged(spark, bridge, pg, **options)
    assert ours.selectExpr("count(*)", "sum(length(body))").collect()[0][:] == (40, 4_000_000)
