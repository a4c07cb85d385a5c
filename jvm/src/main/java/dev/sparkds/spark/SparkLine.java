package dev.sparkds.spark;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.apache.spark.SparkContext;

/**
 * The Spark line this jar is built for (jvm/build.sh writes it in spark-line.properties), checked
 * against the session's Spark before the plugin does anything: a jar compiled against another
 * line's classes would otherwise fail in the middle of a query, with a NoSuchMethodError.
 */
final class SparkLine {
  private SparkLine() {}

  private static volatile boolean checked;

  /** Fails with one message naming both versions when the session runs another line. */
  static void check() {
    if (checked) {
      return;
    }
    Properties built = built();
    String session = SparkContext.getOrCreate().version();
    String line = built.getProperty("line");
    if (!line.equals(lineOf(session))) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_SPARK_VERSION",
          "this jar of the JVM plugin is built for Spark "
              + line
              + " (Scala "
              + built.getProperty("scala")
              + ") and the session runs Spark "
              + session
              + ": use the plugin's jar of Spark "
              + lineOf(session)
              + " (spark-native-datasource-spark-"
              + lineOf(session)
              + ".jar; jars are built for Spark "
              + built.getProperty("lines")
              + ").");
    }
    checked = true;
  }

  /** The line (major.minor) of a Spark version such as 4.0.5 or 4.1.0-preview1. */
  static String lineOf(String version) {
    String[] parts = version.split("[.-]", 3);
    return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
  }

  private static Properties built() {
    Properties properties = new Properties();
    try (InputStream in = SparkLine.class.getResourceAsStream("spark-line.properties")) {
      if (in != null) {
        properties.load(in);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the plugin's spark-line.properties", e);
    }
    if (properties.getProperty("line") == null) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_SPARK_VERSION",
          "this jar of the JVM plugin does not say which Spark line it is built for"
              + " (dev/sparkds/spark/spark-line.properties): build it with jvm/build.sh.");
    }
    return properties;
  }
}
