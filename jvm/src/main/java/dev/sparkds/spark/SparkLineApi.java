package dev.sparkds.spark;

import java.nio.ByteBuffer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StringType;

/**
 * The calls that differ between Spark lines (or the Arrow release each ships), for Spark 4:
 * jvm/build.sh replaces this file with jvm/src/spark-&lt;line&gt;/java/'s where a line has one.
 */
final class SparkLineApi {
  private SparkLineApi() {}

  /** Whether strings of {@code type} compare as their bytes (the binary collation). */
  static boolean comparesAsBytes(StringType type) {
    return type.isUTF8BinaryCollation();
  }

  /** spark.sql.execution.arrow.maxBytesPerBatch. */
  static long arrowMaxBytesPerBatch(SQLConf conf) {
    return conf.arrowMaxBytesPerBatch();
  }

  /** The bytes that {@code writer} holds. */
  static long sizeInBytes(ArrowWriter writer) {
    return writer.sizeInBytes();
  }

  /** {@code schema} as an Arrow IPC schema message. */
  static byte[] serialize(Schema schema) {
    return schema.serializeAsMessage();
  }

  static Schema deserialize(byte[] message) {
    return Schema.deserializeMessage(ByteBuffer.wrap(message));
  }
}
