"""What the claims share: the wait for a streaming query's micro-batches, and (from
tests/support/expected.py) c_range's rows, a DataFrame's rows, the error a call raises and the
rows that Spark's own WHERE keeps."""

import os
import time

from expected import c_range_rows, failure, rows, spark_keeps  # noqa: F401 (the claims import them from here)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
