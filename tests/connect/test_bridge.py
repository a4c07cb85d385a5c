"""The Python bridge from a Connect client: the client registers the bridge's data source for
c_range (spark.dataSource.register works under Connect), and the server's Python workers run
it. They import spark_native_bridge only from what the session shipped before registering: the
registration carries the session's Python files of that moment."""

from connect_helpers import c_range_rows, failure, rows


def test_the_bridge_registered_from_a_client_reads_c_range(new_session, c_range_library):
    from spark_native_bridge import register, ship_to_executors

    spark = new_session()
    # ANCHOR: bridge
    ship_to_executors(spark)  # spark.addArtifacts(<zip of the bridge>, pyfile=True)
    register(spark, c_range_library, name="bridged_range")
    df = spark.read.format("bridged_range").option("end", 6).load()
    # ANCHOR_END: bridge

    assert rows(df) == c_range_rows(0, 6)


def test_a_bridge_registered_before_it_was_shipped_names_the_missing_module(
    new_session, c_range_library
):
    from spark_native_bridge import register

    spark = new_session()
    register(spark, c_range_library, name="unshipped_range")

    error = failure(lambda: spark.read.format("unshipped_range").load().schema)

    assert error.getCondition() == "PYTHON_DATA_SOURCE_ERROR"
    assert "No module named 'spark_native_bridge'" in str(error)
