"""The PySpark side of `cargo sparkds spark`: a Spark session with one native data source ready,
through the JVM plugin or through the Python bridge, then a shell, one SQL statement or a script.

`cargo sparkds spark` runs it as `python3 [-i] session.py`, with its settings as JSON in the
file that SPARKDS_SPARK_SESSION_FILE names (only the user reads it, and it is removed once read:
the options may hold a password): mode (shell, sql or python), sql, script, master, library,
name, jar (the plugin's, or null for the bridge), bridge (the directory that holds
spark_native_bridge), options (the source's options), warehouse, redaction_regex, conf (the
Spark configuration of every session that holds no secret: loopback addresses, authentication)
and properties (a properties file only the user reads, with the session's authentication secret,
which this script removes once Spark has read it).
"""

import json
import os
import runpy
import shlex
import sys

_settings_file = os.environ.pop("SPARKDS_SPARK_SESSION_FILE")
with open(_settings_file, encoding="utf-8") as f:
    settings = json.load(f)
os.remove(_settings_file)
name = settings["name"]
library_dir = os.path.dirname(settings["library"])


def session():
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(settings["master"])
        .appName(f"cargo sparkds spark: {name}")
        .config("spark.ui.enabled", "false")
        .config("spark.log.level", "ERROR")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", settings["warehouse"])
        # `url` too: the catalog's options are configuration, which Spark's default leaves
        # unredacted when it holds a URL (with a password in it).
        .config("spark.redaction.regex", settings["redaction_regex"])
    )
    for key, value in settings["conf"].items():
        builder = builder.config(key, value)
    if settings["jar"]:
        builder = (
            builder.config("spark.jars", settings["jar"])
            .config("spark.driver.extraLibraryPath", library_dir)
            .config("spark.executor.extraLibraryPath", library_dir)
            .config("spark.sql.catalog.native", "dev.sparkds.spark.NativeCatalog")
        )
    else:
        # Executors of a local cluster start Python workers that import the bridge too.
        builder = builder.config("spark.executorEnv.PYTHONPATH", settings["bridge"])
    spark = started(builder)
    spark.sparkContext.setLogLevel("ERROR")
    if settings["jar"]:
        # The catalog's options are its sources' options (spark.sql.catalog.native.end=20), set
        # once the session runs: what the builder holds becomes spark-submit's arguments, which
        # any user of the machine sees (`ps`), and an option may be a password. The catalog
        # reads them when it is first used.
        for key, value in settings["options"].items():
            spark.conf.set(f"spark.sql.catalog.native.{key}", value)
    else:
        from spark_native_bridge import register

        register(spark, settings["library"])
        reader = spark.read.format(name)
        for key, value in settings["options"].items():
            reader = reader.option(key, value)
        # SQL names the source through a view: the bridge has no catalog.
        reader.load().createOrReplaceTempView(name)
    return spark


def started(builder):
    """The session of `builder`, whose spark-submit also reads the properties file: what the
    builder holds becomes spark-submit's arguments, which any user of the machine sees (`ps`),
    and the file holds the secret that the driver, and a local cluster's Master, Workers and
    executors, authenticate each other with (`spark.authenticate`)."""
    properties = settings["properties"]
    before = os.environ.get("PYSPARK_SUBMIT_ARGS")
    # Without --load-spark-defaults, a properties file replaces spark-defaults.conf.
    os.environ["PYSPARK_SUBMIT_ARGS"] = (
        f"--properties-file {shlex.quote(properties)} --load-spark-defaults "
        + (before or "pyspark-shell")
    )
    try:
        return builder.getOrCreate()
    finally:
        if before is None:
            del os.environ["PYSPARK_SUBMIT_ARGS"]
        else:
            os.environ["PYSPARK_SUBMIT_ARGS"] = before
        # Spark has read it, or will not: the secret stays in no file.
        try:
            os.remove(properties)
        except FileNotFoundError:
            pass


def hints():
    if settings["jar"]:
        read = f'spark.read.format("native").option("source", "{name}").load()'
        table = f"native.{name}"
    else:
        read = f'spark.read.format("{name}").load()'
        table = name
    return [
        f"{read}.show()",
        f'spark.sql("SELECT * FROM {table} LIMIT 5").show()',
        f"{read}.printSchema()",
    ]


spark = session()
mode = settings["mode"]
if mode == "sql":
    try:
        spark.sql(settings["sql"]).show()
    except Exception as error:  # Spark's own message, without the Python traceback
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
    finally:
        spark.stop()
elif mode == "python":
    sys.argv = [settings["script"]] + settings["args"]
    runpy.run_path(settings["script"], init_globals={"spark": spark}, run_name="__main__")
    spark.stop()
else:
    print(f"Spark {spark.version} ({settings['master']}): `spark` is a session with `{name}` "
          f"({settings['library']}). Try:")
    for line in hints():
        print(f"  {line}")
    print("exit() or Ctrl-D ends the session.")
    sys.stdout.flush()
