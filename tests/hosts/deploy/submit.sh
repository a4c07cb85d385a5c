#!/bin/sh
# An application, from the client host: the plugin by --packages from a Maven repository (Maven
# Central, or the mirror of your organisation, here served by the client host), the data
# sources' .sparkpkg files by --files, which Spark gives every executor, and the secret from the
# properties file. Ivy keeps what it fetched in spark.jars.ivy.
exec "$SPARK_HOME/bin/spark-submit" --master spark://master:7077 \
  --properties-file "$SPARK_PROPERTIES" \
  --packages "dev.sparkds:spark-native-datasource-4.3_2.13:$PLUGIN_VERSION" \
  --repositories "$MAVEN_REPOSITORY" --conf "spark.jars.ivy=$IVY_DIR" \
  --files "$PACKAGES" \
  "$@"
