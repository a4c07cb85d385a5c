"""SQL: CREATE TABLE ... USING native, and the catalog of native data sources."""

import pytest


def session_tables_are_v1(spark) -> bool:
    """Spark 3.5 reads and writes tables of its session catalog through Data Source V1, which
    the plugin refuses with a message naming what works instead."""
    return spark.version.startswith("3.")


def assert_refused_as_v1(action):
    with pytest.raises(Exception) as raised:
        action()
    text = str(raised.value)
    assert "[NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION]" in text, text
    assert "through Data Source V1" in text and "dev.sparkds.spark.NativeCatalog" in text


@pytest.mark.core
def test_create_table_using_native_reads_the_source(spark):
    spark.sql("DROP TABLE IF EXISTS jvm_c_range")
    # ANCHOR: create_table
    spark.sql("CREATE TABLE jvm_c_range USING native OPTIONS (source 'c_range', end '7')")
    # ANCHOR_END: create_table
    if session_tables_are_v1(spark):
        try:
            assert_refused_as_v1(lambda: spark.sql("SELECT * FROM jvm_c_range").collect())
        finally:
            spark.sql("DROP TABLE IF EXISTS jvm_c_range")
        return
    try:
        rows = spark.sql("SELECT id, label FROM jvm_c_range ORDER BY id").collect()
        assert [(r.id, r.label) for r in rows] == [
            (i, None if i % 3 == 2 else f"label {i}") for i in range(7)
        ]
        assert spark.sql("SELECT count(*) AS n FROM jvm_c_range").first().n == 7
    finally:
        spark.sql("DROP TABLE IF EXISTS jvm_c_range")


@pytest.mark.core
def test_insert_into_a_table_using_native_writes_through_the_library(spark, tmp_path):
    path = str(tmp_path / "table")
    spark.sql("DROP TABLE IF EXISTS jvm_rw")
    # No columns: the table takes the library's schema, `id` not null included.
    spark.sql(f"CREATE TABLE jvm_rw USING native OPTIONS (source 'e2e_rw', path '{path}')")
    try:
        if session_tables_are_v1(spark):
            assert_refused_as_v1(lambda: spark.sql("INSERT INTO jvm_rw VALUES (1, 'one')"))
            return
        spark.sql("INSERT INTO jvm_rw VALUES (1, 'one'), (2, NULL)")
        rows = spark.sql("SELECT * FROM jvm_rw ORDER BY id").collect()
        assert [(r.id, r.label) for r in rows] == [(1, "one"), (2, None)]
    finally:
        spark.sql("DROP TABLE IF EXISTS jvm_rw")


def test_a_table_may_declare_nullable_a_column_that_has_no_nulls(spark, tmp_path):
    # Spark's DDL makes columns nullable unless NOT NULL: the sample reads its `id`, which has
    # no nulls, as the table declares it, and refuses NOT NULL on `label`, which has some.
    path = str(tmp_path / "table")
    spark.sql("DROP TABLE IF EXISTS jvm_declared")
    spark.sql("CREATE TABLE jvm_declared (id BIGINT, label STRING) USING native "
              f"OPTIONS (source 'e2e_rw', path '{path}')")
    try:
        spark.sql("INSERT INTO jvm_declared VALUES (1, 'one'), (2, NULL)")
        table = spark.table("jvm_declared")
        assert table.schema["id"].nullable
        assert [(r.id, r.label) for r in table.orderBy("id").collect()] == [(1, "one"), (2, None)]
    finally:
        spark.sql("DROP TABLE IF EXISTS jvm_declared")

    spark.sql("CREATE TABLE jvm_declared (id BIGINT, label STRING NOT NULL) USING native "
              f"OPTIONS (source 'e2e_rw', path '{path}')")
    try:
        with pytest.raises(Exception) as raised:
            spark.table("jvm_declared").collect()
        assert "column `label` has nulls in this data source" in str(raised.value)
    finally:
        spark.sql("DROP TABLE IF EXISTS jvm_declared")


@pytest.mark.core
def test_the_catalog_names_sources_and_passes_its_options(spark):
    # ANCHOR: catalog
    spark.conf.set("spark.sql.catalog.nds", "dev.sparkds.spark.NativeCatalog")
    spark.conf.set("spark.sql.catalog.nds.end", "12")

    rows = spark.sql("SELECT id FROM nds.c_range ORDER BY id").collect()
    # ANCHOR_END: catalog
    assert [r.id for r in rows] == list(range(12))
    assert spark.sql("SELECT count(*) AS n FROM nds.c_range WHERE label IS NULL").first().n == 4


def test_the_catalog_reports_a_source_it_cannot_find(spark):
    spark.conf.set("spark.sql.catalog.nds", "dev.sparkds.spark.NativeCatalog")

    with pytest.raises(Exception) as raised:
        spark.sql("SELECT * FROM nds.no_such_source").collect()

    assert "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND" in str(raised.value)
