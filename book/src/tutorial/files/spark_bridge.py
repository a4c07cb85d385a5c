"""Reads my_source on Spark 4.0 to 4.3, through the Python Data Source API.

Run it from the project's directory, with the bridge (the python/ package of the repository)
importable by the driver and by the Python workers of the executors, which inherit the
environment in local mode:

    PYTHONPATH="$PWD/../spark-datasource-template/python" python3 spark_bridge.py
"""

import sys

from pyspark.sql import SparkSession

from spark_native_bridge import register

LIBRARY = "target/release/libspark_datasource_my_source.so"

spark = (
    SparkSession.builder.master("local[2]")
    .appName("my_source on the bridge")
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

# The library declares its capabilities; the bridge registers a Python data source that calls
# its functions, named after the library file: my_source.
register(spark, LIBRARY)

df = spark.read.format("my_source").option("end", 20).option("prefix", "item").load()
df.printSchema()
df.show()

# Through the bridge, Spark applies select and limit after the read: the Python Data Source API
# offers neither column pruning nor a limit to the library, as Spark 4.4 does.
rows = df.select("id", "even").limit(3).collect()
print(rows)
if [row.id for row in rows] != [0, 1, 2]:
    sys.exit(f"unexpected rows: {rows}")

spark.stop()
