"""The suite's server takes only clients that give its token."""

import pytest


def test_a_client_without_the_token_or_with_another_is_refused(server):
    from pyspark.sql import SparkSession

    address, _ = server.split("/;token=")
    # The server's words for each: no token at all, or another one.
    for url, why in [
        (address, "No authentication token provided"),
        (f"{address}/;token={'0' * 64}", "Invalid authentication token"),
    ]:
        session = SparkSession.builder.remote(url).create()
        try:
            with pytest.raises(Exception) as refused:
                session.range(1).collect()
        finally:
            # Else it stays the process's active session, which pyspark's client asks for
            # settings in later tests, and is refused.
            session.stop()
        assert why in str(refused.value), url
