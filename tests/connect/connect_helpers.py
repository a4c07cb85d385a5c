"""Helpers of the Spark Connect suite."""


def native(spark, source: str, **options):
    """spark.read.format("native").option("source", source) with `options`."""
    reader = spark.read.format("native").option("source", source)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader


def plan(df) -> str:
    """The physical plan, as the server prints it for the client."""
    return df._explain_string(mode="simple")


def c_range_rows(end):
    return [(i, None if i % 3 == 2 else f"label {i}") for i in range(end)]


def failure(call):
    """The exception that `call()` raises, which must be one."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test looks at what the client got
        return error
    raise AssertionError("no error was raised")
