"""The library's log (SparkDsHost.log) in Spark's log: one log4j logger per library,
`dev.sparkds.spark.native.<name>`, at the level the library gave."""

import contextlib

from jvm_helpers import native

LOGGER = "dev.sparkds.spark.native.jvm_types"


@contextlib.contextmanager
def captured(spark, logger_name, level):
    """What `logger_name` logs at `level` or above while the block runs, as `LEVEL name message`
    lines: a log4j appender on that logger, removed afterwards."""
    jvm = spark._jvm
    core = jvm.org.apache.logging.log4j.core
    logger = jvm.org.apache.logging.log4j.LogManager.getLogger(logger_name)
    writer = jvm.java.io.StringWriter()
    layout = core.layout.PatternLayout.newBuilder().withPattern("%p %c %m%n").build()
    appender = core.appender.WriterAppender.createAppender(
        layout, None, writer, "sparkds-test", False, True
    )
    appender.start()
    previous = logger.getLevel()
    logger.addAppender(appender)
    logger.setLevel(getattr(jvm.org.apache.logging.log4j.Level, level))
    lines = []
    try:
        yield lines
    finally:
        logger.removeAppender(appender)
        logger.setLevel(previous)
        appender.stop()
        lines.extend(writer.toString().splitlines())


def test_the_library_log_reaches_sparks_log_at_its_level(spark):
    with captured(spark, LOGGER, "INFO") as lines:
        native(spark, "jvm_types", log="hello from jvm_types").load().schema

    assert f"INFO {LOGGER} hello from jvm_types" in lines
    assert not [line for line in lines if "(debug)" in line], "debug is below INFO"


def test_a_lower_level_shows_the_library_debug_messages(spark):
    with captured(spark, LOGGER, "DEBUG") as lines:
        native(spark, "jvm_types", log="more detail").load().schema

    assert f"DEBUG {LOGGER} more detail (debug)" in lines
