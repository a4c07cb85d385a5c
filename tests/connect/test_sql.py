"""SQL from a Connect client: CREATE TABLE ... USING native, and the catalog NativeCatalog set
by the session."""


def test_create_table_using_native_reads_and_inserts(spark, tmp_path):
    path = str(tmp_path / "table")
    spark.sql("DROP TABLE IF EXISTS connect_range")
    spark.sql("DROP TABLE IF EXISTS connect_rw")
    spark.sql("CREATE TABLE connect_range USING native OPTIONS (source 'c_range', end '5')")
    spark.sql(f"CREATE TABLE connect_rw USING native OPTIONS (source 'e2e_rw', path '{path}')")
    try:
        assert [r.id for r in spark.sql("SELECT id FROM connect_range ORDER BY id").collect()] \
            == list(range(5))
        spark.sql("INSERT INTO connect_rw SELECT id, label FROM connect_range WHERE id < 2")
        rows = spark.table("connect_rw").orderBy("id").collect()
        assert [(r.id, r.label) for r in rows] == [(0, "label 0"), (1, "label 1")]
    finally:
        spark.sql("DROP TABLE IF EXISTS connect_range")
        spark.sql("DROP TABLE IF EXISTS connect_rw")


def test_the_catalog_set_by_a_client_names_sources_and_passes_its_options(new_session):
    session = new_session()
    # ANCHOR: catalog
    session.conf.set("spark.sql.catalog.ds", "dev.sparkds.spark.NativeCatalog")
    session.conf.set("spark.sql.catalog.ds.end", "4")
    rows = session.sql("SELECT id FROM ds.c_range ORDER BY id").collect()
    # ANCHOR_END: catalog

    assert [r.id for r in rows] == [0, 1, 2, 3]
