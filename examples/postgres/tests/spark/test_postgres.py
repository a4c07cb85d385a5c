"""The postgres example on Spark, through the JVM plugin (`format("native")`) and through the
bridge, against Spark's own JDBC source on the same server: the same rows and the same Spark
types for every supported PostgreSQL type, reads partitioned as JDBC partitions them, filters,
and writes (append and overwrite) that JDBC reads back as they were written."""

import itertools

import pytest

_names = itertools.count()

COLUMNS = (
    "id integer, s smallint, i integer, b bigint, n numeric(12,3), r real, d double precision, "
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
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields]


@pytest.mark.parametrize("path", ["jvm", "bridge"])
def test_every_type_reads_with_the_rows_and_types_of_sparks_jdbc_source(spark, bridge, pg, path):
    table = _table(pg, "types")
    jdbc = _jdbc(spark, pg, dbtable=table)
    ours = _native(spark, pg, dbtable=table) if path == "jvm" else _bridged(spark, bridge, pg, dbtable=table)

    assert _types(ours) == _types(jdbc)
    assert _rows(ours) == _rows(jdbc)


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
