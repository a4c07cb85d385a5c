"""Secret options: no error, plan, table property or log line shows the value of an option whose
key Spark redacts (`spark.sql.redaction.options.regex`, `spark.redaction.regex`, or their
defaults), even from a library that repeats it. The fixture is the conformance suite's range
source built with FAULT_ECHO_SECRETS: it logs its `password` and refuses any but `open-sesame`
with an error that repeats the one it got."""

import os
import subprocess

import pytest

from jvm_helpers import ROOT, captured, native

REDACTED = "*********(redacted)"
RIGHT = "open-sesame"
WRONG = "wrong-horse-5e1f"


@pytest.fixture(scope="module")
def echo_secrets(dirs):
    """The data source `echo_secrets`, in a directory of the session's library path."""
    fixture = os.path.join(ROOT, "tests", "conformance", "fixtures", "range.c")
    header = os.path.join(ROOT, "crates", "spark-datasource")
    library = os.path.join(dirs["scratch"], "libspark_datasource_echo_secrets.so")
    subprocess.run(
        ["cc", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-pthread", "-I", header,
         "-DFAULT_ECHO_SECRETS", "-o", library, fixture],
        check=True,
    )
    return "echo_secrets"


def test_a_wrong_password_is_in_neither_the_error_nor_the_log(spark, echo_secrets):
    with captured(spark, "", "INFO") as lines:
        with pytest.raises(Exception) as raised:
            native(spark, echo_secrets, password=WRONG).load()
    text = str(raised.value)

    assert "[NATIVE_DATA_SOURCE_ERROR]" in text
    assert f"wrong password `{REDACTED}`" in text
    assert WRONG not in text
    logged = "\n".join(lines)
    assert f"create: password `{REDACTED}`" in logged
    assert WRONG not in logged


def test_a_plan_shows_no_secret_option(spark, echo_secrets, capsys):
    with captured(spark, "", "INFO") as lines:
        df = native(spark, echo_secrets, password=RIGHT, end=3).load()
        assert df.count() == 3
        plans = df._jdf.queryExecution().toString()
        df.explain(mode="extended")
    explained = capsys.readouterr().out

    assert "NativeScan echo_secrets" in explained
    for text in [plans, explained, "\n".join(lines)]:
        assert RIGHT not in text


def test_a_table_with_a_password_shows_it_nowhere(spark, echo_secrets):
    spark.sql("DROP TABLE IF EXISTS jvm_secret")
    spark.sql(f"CREATE TABLE jvm_secret USING native "
              f"OPTIONS (source '{echo_secrets}', password '{RIGHT}', end '4')")
    try:
        assert spark.sql("SELECT count(*) AS n FROM jvm_secret").first().n == 4
        properties = spark.sql("SHOW TBLPROPERTIES jvm_secret").collect()
        described = spark.sql("DESCRIBE TABLE EXTENDED jvm_secret").collect()
        explained = spark.sql("EXPLAIN EXTENDED SELECT * FROM jvm_secret").first()[0]
    finally:
        spark.sql("DROP TABLE IF EXISTS jvm_secret")

    for rows in [properties, described]:
        assert RIGHT not in str(rows)
    assert RIGHT not in explained
    assert REDACTED in str(described)


def test_a_catalog_tables_properties_are_redacted(spark, echo_secrets):
    # NativeTable.properties() itself: the catalog's options are the table's.
    spark.conf.set("spark.sql.catalog.secret_ds", "dev.sparkds.spark.NativeCatalog")
    spark.conf.set("spark.sql.catalog.secret_ds.password", RIGHT)
    spark.conf.set("spark.sql.catalog.secret_ds.end", "2")

    described = spark.sql(f"DESCRIBE TABLE EXTENDED secret_ds.{echo_secrets}").collect()
    properties = spark.sql(f"SHOW TBLPROPERTIES secret_ds.{echo_secrets}").collect()

    shown = {row[0]: row[1] for row in properties}
    assert shown["password"] == REDACTED
    assert shown["end"] == "2"
    assert RIGHT not in str(described)
    jvm = spark._jvm
    catalog = spark._jsparkSession.sessionState().catalogManager().catalog("secret_ds")
    no_namespace = spark.sparkContext._gateway.new_array(jvm.java.lang.String, 0)
    table = catalog.loadTable(jvm.org.apache.spark.sql.connector.catalog.Identifier.of(
        no_namespace, echo_secrets))
    # Spark's own rule also hides a value that matches a pattern, as this source's name does.
    assert dict(table.properties()) == {"source": REDACTED, "password": REDACTED, "end": "2"}


def test_a_query_cannot_add_options_to_a_catalog_table_that_holds_credentials(spark, echo_secrets):
    # Another option from the query could send the catalog's password elsewhere (another url,
    # another host, no TLS): a table with credentials takes none but the plugin's own.
    spark.conf.set("spark.sql.catalog.guarded_ds", "dev.sparkds.spark.NativeCatalog")
    spark.conf.set("spark.sql.catalog.guarded_ds.password", RIGHT)
    spark.conf.set("spark.sql.catalog.guarded_ds.end", "2")
    table = f"guarded_ds.{echo_secrets}"

    assert spark.read.table(table).count() == 2
    # The plugin's own options, and an option equal to the table's, are taken.
    assert spark.read.option("pushDownPredicate", "false").table(table).count() == 2
    assert spark.read.option("end", "2").table(table).count() == 2
    with pytest.raises(Exception) as raised:
        spark.read.option("end", "5").option("url", "elsewhere").table(table).count()
    text = str(raised.value)
    assert "[NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION]" in text
    assert "gives end, url:" in text
    assert RIGHT not in text and "elsewhere" not in text
    # A table without credentials takes the query's options, as before.
    spark.conf.set("spark.sql.catalog.open_ds", "dev.sparkds.spark.NativeCatalog")
    spark.conf.set("spark.sql.catalog.open_ds.end", "2")
    assert spark.read.option("end", "5").table("open_ds.c_range").count() == 5


def test_the_sessions_own_redaction_pattern_makes_more_options_secret(spark):
    # c_range repeats a malformed value of `end`; here `end` is secret by the session's setting.
    spark.conf.set("spark.sql.redaction.options.regex", "(?i)url|^end$")
    try:
        with pytest.raises(Exception) as raised:
            native(spark, "c_range", end="ten-8b2c").load()
    finally:
        spark.conf.unset("spark.sql.redaction.options.regex")
    text = str(raised.value)

    assert f"option `end` must be a non-negative integer, got `{REDACTED}`" in text
    assert "ten-8b2c" not in text
