package dev.sparkds.spark;

import java.nio.ByteBuffer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/** Spark schemas as the Arrow IPC schema messages that cross the JNI boundary. */
final class Schemas {
  private Schemas() {}

  /**
   * The time zone of Arrow timestamps: the header's timestamp is timestamp[us, UTC], whatever
   * the session's time zone (Spark's timestamps are instants).
   */
  static final String TIME_ZONE = "UTC";

  static Schema toArrow(StructType schema) {
    try {
      // Not the three-argument form, whose flag asks for large strings: the header's strings
      // and binaries have 32-bit offsets ("u" and "z").
      return ArrowUtils.toArrowSchema(
          schema, TIME_ZONE, true, false, ArrowUtils.toArrowSchema$default$5());
    } catch (RuntimeException e) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_TYPE",
          "the schema "
              + schema.simpleString()
              + " has a type that native data sources do not support ("
              + e.getMessage()
              + "): the types of version 1 are boolean, tinyint, smallint, int, bigint, float, "
              + "double, decimal, string, binary, date, timestamp, timestamp_ntz, void, array, "
              + "struct and map.");
    }
  }

  static byte[] toBytes(StructType schema) {
    return toArrow(schema).serializeAsMessage();
  }

  static Schema arrowFromBytes(byte[] bytes) {
    return Schema.deserializeMessage(ByteBuffer.wrap(bytes));
  }

  static StructType fromBytes(byte[] bytes, String source) {
    Schema arrow = arrowFromBytes(bytes);
    try {
      return ArrowUtils.fromArrowSchema(arrow);
    } catch (RuntimeException e) {
      throw new NativeDataSourceException(
          "INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE",
          "the schema of data source `"
              + source
              + "` has a type that Spark cannot read: "
              + e.getMessage()
              + " (schema: "
              + arrow
              + "). Use the Arrow types of version 1 that spark_datasource.h lists.");
    }
  }
}
