"""The suite's server takes only clients that give its token."""

import pytest


def test_a_client_without_the_token_or_with_another_is_refused(server):
    from pyspark.sql import SparkSession

    address, _ = server.split("/;token=")
    for url in [address, f"{address}/;token={'0' * 64}"]:
        session = SparkSession.builder.remote(url).create()
        with pytest.raises(Exception) as refused:
            session.range(1).collect()
        assert "Invalid authentication token" in str(refused.value), url
