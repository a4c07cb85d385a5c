#!/bin/sh
# A Worker, on each of its hosts, with the properties file of the Master's: it starts the
# executors of applications in its work directory and gives them the secret in their
# environment (which other users cannot read), never on their command line.
exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
  --host "$SPARK_LOCAL_HOSTNAME" --cores 2 --memory 2g \
  --work-dir "$SPARK_WORKER_DIR" --properties-file "$SPARK_PROPERTIES" \
  spark://master:7077
