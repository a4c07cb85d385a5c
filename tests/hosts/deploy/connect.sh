#!/bin/sh
# A Spark Connect server on the cluster, from the client host: a driver like any other, with the
# properties file and the plugin by --packages. It listens on the loopback address of its host
# and takes only clients that give the token of SPARK_CONNECT_AUTHENTICATE_TOKEN, which it reads
# from its environment. The sessions add their packages themselves.
exec "$SPARK_HOME/bin/spark-submit" --master spark://master:7077 \
  --class org.apache.spark.sql.connect.service.SparkConnectServer \
  --properties-file "$SPARK_PROPERTIES" \
  --packages "dev.sparkds:spark-native-datasource-4.3_2.13:$PLUGIN_VERSION" \
  --repositories "$MAVEN_REPOSITORY" --conf "spark.jars.ivy=$IVY_DIR" \
  --conf spark.connect.grpc.binding.address=127.0.0.1 \
  --conf spark.connect.grpc.binding.port=15002 \
  "$@"
