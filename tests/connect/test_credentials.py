"""The cluster's credentials stay with the hosts the cluster names, whatever a Connect session
sets. Every Connect session loads its catalogs afresh, from its own settings over the server's
SparkConf, so a session's `SET spark.sql.catalog.<c>.url=...` before the catalog's first use
would move the catalog's password to a host of the session's choosing; and the postgres example
took the PGPASSWORD of the machine that connects for any URL. Each test has a stand-in server
record what reaches it (fake_postgres.py): the server's catalog `pg_cluster` and its PGPASSWORD
are set up in conftest.py."""

import pytest

from conftest import CLUSTER_CATALOG, CLUSTER_PASSWORD, SERVER_PGPASSWORD
from connect_helpers import failure, native
from fake_postgres import REFUSAL, FakePostgres

PREFIX = f"spark.sql.catalog.{CLUSTER_CATALOG}"


@pytest.fixture
def elsewhere():
    """A stand-in for a host that a session names."""
    host = FakePostgres()
    yield host
    host.close()


def read_catalog(session):
    return failure(lambda: session.sql(f"SELECT * FROM {CLUSTER_CATALOG}.postgres").collect())


def test_a_session_cannot_point_the_clusters_catalog_at_another_host(
    new_session, postgres_library, elsewhere
):
    session = new_session()
    session.conf.set(f"{PREFIX}.url", elsewhere.url())
    session.conf.set(f"{PREFIX}.connectTimeout", "3")

    error = read_catalog(session)

    assert elsewhere.connections == [], "the catalog connected where the session said"
    assert error.getCondition() == "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION", str(error)
    message = error.getMessageParameters()["message"]
    assert f"this session sets {PREFIX}.connectTimeout, {PREFIX}.url to a value" in message
    assert "credentials in the cluster's configuration (SparkConf)" in message
    for secret in (elsewhere.url(), CLUSTER_PASSWORD):
        assert secret not in str(error)


def test_a_session_that_changes_no_connection_key_reads_the_clusters_host(
    new_session, postgres_library, cluster_database
):
    session = new_session()
    # The cluster's own value, and an option of the plugin's: neither is refused.
    session.conf.set(f"{PREFIX}.user", "cluster")
    session.conf.set(f"{PREFIX}.pushDownPredicate", "false")
    before = len(cluster_database.passwords())

    error = read_catalog(session)

    assert REFUSAL in str(error), str(error)
    assert cluster_database.passwords()[before:] == [CLUSTER_PASSWORD]
    assert CLUSTER_PASSWORD not in str(error)


def test_the_servers_pgpassword_goes_to_no_host_that_a_session_names(
    spark, postgres_library, elsewhere
):
    # Without a password: the connector used to take the server's PGPASSWORD, and a session
    # that allows a password in clear text got it.
    options = dict(url=elsewhere.url(), user="anyone", dbtable="orders", sslmode="disable",
                   allowPasswordWithoutTls="true")

    error = failure(lambda: native(spark, "postgres", **options).load().schema)

    assert elsewhere.passwords() == []
    assert "the server asks for a password, and none was given" in str(error), str(error)
    assert "`passwordFromEnvironment`" in str(error)
    assert SERVER_PGPASSWORD not in str(error)


def test_the_servers_pgpassword_is_taken_when_a_read_opts_in(spark, postgres_library, elsewhere):
    options = dict(url=elsewhere.url(), user="anyone", dbtable="orders", sslmode="disable",
                   allowPasswordWithoutTls="true", passwordFromEnvironment="true")

    error = failure(lambda: native(spark, "postgres", **options).load().schema)

    assert elsewhere.passwords() == [SERVER_PGPASSWORD]
    assert SERVER_PGPASSWORD not in str(error)
