#!/bin/sh
# The Master, on its host. SPARK_LOCAL_IP, the host's address, is what its RPC port and its web
# interface listen on (never every interface); the secret comes from the properties file.
exec "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
  --host "$SPARK_LOCAL_HOSTNAME" --port 7077 --webui-port 8080 \
  --properties-file "$SPARK_PROPERTIES"
