"""The error classes of the plugin as a Connect client sees them: a PySparkException whose
condition is the plugin's class, with the message of the library or of the lookup, never
Spark's internal error."""

from connect_helpers import failure, native


def looks_like(error, condition):
    assert error.getCondition() == condition, str(error)
    assert "INTERNAL_ERROR" not in str(error)
    return error.getMessageParameters()["message"]


def test_a_missing_library_reaches_the_client_with_its_class_and_message(spark, scratch):
    # ANCHOR: error
    error = failure(lambda: native(spark, "no_such_source").load().schema)
    # error.getCondition() == "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND"
    # ANCHOR_END: error

    message = looks_like(error, "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND")
    assert "libspark_datasource_no_such_source" in message
    assert scratch["installed"] in message, "the server's library path is named"
    assert message in str(error)


def test_a_bad_option_reaches_the_client_as_the_librarys_error(spark):
    error = failure(lambda: native(spark, "c_range", end="ten").load().collect())

    message = looks_like(error, "NATIVE_DATA_SOURCE_ERROR")
    assert message == (
        "native data source `c_range`: `create` failed: "
        "option `end` must be a non-negative integer, got `ten`"
    )


def test_a_failure_while_planning_on_the_server_reaches_the_client(spark, tmp_path):
    error = failure(
        lambda: native(spark, "e2e_rw", path=str(tmp_path / "none")).load().collect()
    )

    message = looks_like(error, "NATIVE_DATA_SOURCE_ERROR")
    assert "write to it first, or check the option `path`" in message


def test_the_format_without_a_source_names_the_option(spark):
    error = failure(lambda: spark.read.format("native").load().schema)

    message = looks_like(error, "NATIVE_DATA_SOURCE_MISSING_SOURCE")
    assert '.option("source", "c_range")' in message
