"""The rest example on Spark, through the JVM plugin and through the bridge, against the issues
API's own pages: every issue with its values, the filters Spark keeps and those the API
evaluates, a LIMIT in one request, the token in no plan or error, and the Python data source of
the benchmark reading the same rows."""

from datetime import datetime

import pytest

from pyspark.sql import functions as F

PATHS = ["plugin", "bridge"]


def read(spark, bridge, api, path, **options):
    if path == "plugin":
        return spark.read.format("native").option("source", "rest").options(**api.options(**options)).load()
    return spark.read.format(bridge).options(**api.options(**options)).load()


def failure(spark, bridge, path, options):
    """The message of a read of every issue with `options` through `path`, which must fail."""
    if path == "plugin":
        bad = spark.read.format("native").option("source", "rest").options(**options).load()
    else:
        bad = spark.read.format(bridge).options(**options).load()
    with pytest.raises(Exception) as caught:
        bad.collect()
    return str(caught.value)


def rows(df):
    """(number, title, state, created_at, updated_at, comments, login, label names), sorted."""
    picked = df.select(
        "number", "title", "state", "created_at", "updated_at", "comments",
        F.col("user.login"), F.col("labels.name"),
    )
    return sorted(tuple(r) for r in picked.collect())


def api_rows(issues):
    at = lambda text: datetime.fromisoformat(text).replace(tzinfo=None)  # noqa: E731 (session UTC)
    return sorted(
        (i["number"], i["title"], i["state"], at(i["created_at"]), at(i["updated_at"]),
         i["comments"], i["user"]["login"], [label["name"] for label in i["labels"]])
        for i in issues
    )


@pytest.mark.parametrize("path", PATHS)
def test_every_issue_reads_with_the_api_s_values(spark, bridge, api, path):
    assert rows(read(spark, bridge, api, path)) == api_rows(api.issues())


@pytest.mark.parametrize("path", PATHS)
def test_filters_read_the_rows_spark_keeps(spark, bridge, api, path):
    condition = (
        "state = 'open' AND updated_at >= TIMESTAMP '2024-01-04 00:00:00' "
        "AND number % 3 = 0 AND title LIKE 'Issue%'"
    )
    ours = read(spark, bridge, api, path).where(condition)
    local = spark.createDataFrame(
        [(i["number"], i["title"], i["state"], datetime.fromisoformat(i["updated_at"]))
         for i in api.issues()],
        "number int, title string, state string, updated_at timestamp",
    )
    expected = sorted(r.number for r in local.where(condition).collect())
    assert expected, "the condition keeps some issues"
    assert sorted(r.number for r in ours.collect()) == expected
    if path == "plugin":
        plan = ours._jdf.queryExecution().executedPlan().toString()
        assert "state" in plan and "PushedFilters" in plan, plan
        # A timestamp as the query wrote it (in the session's time zone), not in microseconds.
        assert "updated_at >= TIMESTAMP '2024-01-04 00:00:00'" in plan, plan


def test_a_limit_is_one_request_through_the_plugin(spark, api):
    before = api.requests()
    df = spark.read.format("native").option("source", "rest").options(**api.options()).load()
    assert len(df.limit(10).collect()) == 10
    assert api.requests() - before == 1


@pytest.mark.parametrize("path", PATHS)
def test_the_token_is_in_no_plan_and_no_error(spark, bridge, api, path):
    df = read(spark, bridge, api, path)
    if path == "plugin":
        plan = df.where("state = 'open'")._jdf.queryExecution().executedPlan().toString()
        assert api.options()["token"] not in plan
    message = failure(spark, bridge, path, dict(api.options(), token="a-wrong-token-42"))
    assert "answered 401" in message and "a-wrong-token-42" not in message, message


def test_the_python_data_source_reads_the_same_rows(spark, api, python_source):
    df = spark.read.format(python_source).options(**api.options()).load()
    assert rows(df) == api_rows(api.issues())


@pytest.mark.parametrize("path", PATHS)
def test_an_error_names_the_api_s_host_and_not_the_credentials_of_its_url(spark, bridge, api, path):
    # A url is secret in plans (Spark's rule), but an error shows it without its credentials
    # only, so that it says which host failed.
    host = api.url.split("://", 1)[1].rstrip("/")
    options = dict(api.options(), token="a-wrong-token-42", url=f"http://reader:pa55-8c1d@{host}")
    message = failure(spark, bridge, path, options)
    assert "answered 401" in message and host in message, message
    assert "pa55-8c1d" not in message and "a-wrong-token-42" not in message, message
