"""One Spark application in one time zone (the JVM's, the session's and this machine's: `TZ`),
reading the rows of a table of edge timestamps through the plugin and through Spark's JDBC
source, and Spark's own literals of the same local times: prints, as JSON, each row's
microseconds since 1970 by each way. test_edge_times.py runs it once per zone.

    TZ=<zone> python3 edge_times.py < settings.json

The settings (on standard input: they hold a password) name the jar, the library directory,
the JDBC jar, the table, and the connection options of the plugin and of JDBC."""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import spark_session  # noqa: E402


def main():
    settings = json.load(sys.stdin)
    zone = os.environ["TZ"]
    builder = spark_session.builder(
        "sparkds-postgres-edge-times",
        settings["warehouse"],
        master="local[1]",
        jars=[settings["jar"], settings["jdbc_jar"]],
        library_path=settings["libraries"],
        conf={
            "spark.sql.session.timeZone": zone,
            "spark.driver.extraJavaOptions": f"-Duser.timezone={zone}",
        },
    )
    with spark_session.started(builder) as spark:
        table = settings["table"]
        native = (
            spark.read.format("native").option("source", "postgres")
            .options(**settings["options"]).option("dbtable", table).load()
        )
        jdbc = spark.read.format("jdbc").options(**settings["jdbc_options"]).option("dbtable", table).load()
        micros = ["label", "unix_micros(ts) AS ts", "unix_micros(tz) AS tz"]
        result = {
            way: {row.label: [row.ts, row.tz] for row in df.selectExpr(*micros).collect()}
            for way, df in (("plugin", native), ("jdbc", jdbc))
        }
        result["literal"] = {
            label: [
                spark.sql(f"SELECT unix_micros(TIMESTAMP '{text}')").first()[0],
                spark.sql(f"SELECT unix_micros(TIMESTAMP '{text}')").first()[0],
            ]
            for label, text in settings["local_times"].items()
        }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
