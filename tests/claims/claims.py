"""What the claims share: c_range's rows, rows of a DataFrame, the error a call raises, and the
wait for a streaming query's micro-batches."""

import os
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    except Exception as error:  # noqa: BLE001 - the claim looks at what the query got
        return error
    raise AssertionError("no error was raised")


def input_rows(progress) -> int:
    """The rows a micro-batch's progress reports: a plain dict before pyspark 4.0; after, an
    object whose property sums its sources' rows where the item is None (over Connect)."""
    if hasattr(type(progress), "numInputRows"):
        return progress.numInputRows or 0
    return progress["numInputRows"] or 0


def run_batches(query, batches, timeout=180):
    """Waits until `batches` micro-batches with rows have committed, then stops `query`.
    Progress is reported once a micro-batch has committed: polling it runs no Spark job."""
    deadline = time.monotonic() + timeout
    while sum(1 for p in query.recentProgress if input_rows(p) > 0) < batches:
        if query.exception() is not None:
            raise query.exception()
        assert time.monotonic() < deadline, "the streaming query did not progress"
        time.sleep(0.3)
    query.stop()
    return query
