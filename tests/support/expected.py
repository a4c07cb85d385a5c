"""What the Spark suites expect of examples/c_range and of a failing call, written once: c_range's
rows, a DataFrame's (id, label) rows, and the exception a call must raise. (The conformance
fixture range.c has other rows: `name`, NULL on every fourth.)"""


def c_range_rows(start, end):
    """The rows of c_range over [start, end): `label i`, NULL for every third row."""
    return [(i, None if i % 3 == 2 else f"label {i}") for i in range(start, end)]


def rows(df):
    """The (id, label) rows of `df`, sorted."""
    return sorted((row.id, row.label) for row in df.collect())


def failure(call):
    """The exception that `call()` raises, which must be one."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test looks at what the query got
        return error
    raise AssertionError("no error was raised")
