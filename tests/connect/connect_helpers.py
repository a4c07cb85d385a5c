"""Helpers of the Spark Connect suite."""

from expected import c_range_rows, failure, rows  # noqa: F401 (the tests import them from here)


def native(spark, source: str, **options):
    """spark.read.format("native").option("source", source) with `options`."""
    reader = spark.read.format("native").option("source", source)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader


def plan(df) -> str:
    """The physical plan, as the server prints it for the client."""
    return df._explain_string(mode="simple")
