"""The library's log (SparkDsHost.log) in Spark's log: one log4j logger per library,
`dev.sparkds.spark.native.<name>`, at the level the library gave."""

from jvm_helpers import captured, native

LOGGER = "dev.sparkds.spark.native.jvm_types"


def test_the_library_log_reaches_sparks_log_at_its_level(spark):
    with captured(spark, LOGGER, "INFO") as lines:
        native(spark, "jvm_types", log="hello from jvm_types").load().schema

    assert f"INFO {LOGGER} hello from jvm_types" in lines
    assert not [line for line in lines if "(debug)" in line], "debug is below INFO"


def test_a_lower_level_shows_the_library_debug_messages(spark):
    with captured(spark, LOGGER, "DEBUG") as lines:
        native(spark, "jvm_types", log="more detail").load().schema

    assert f"DEBUG {LOGGER} more detail (debug)" in lines
