package dev.sparkds.spark;

import java.nio.ByteBuffer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.util.ArrowUtils;

/** Spark schemas as the Arrow IPC schema messages that cross the JNI boundary. */
final class Schemas {
  private Schemas() {}

  /**
   * The time zone of Arrow timestamps: the header's timestamp is timestamp[us, UTC], whatever
   * the session's time zone (Spark's timestamps are instants).
   */
  static final String TIME_ZONE = "UTC";

  /**
   * The Arrow schema of {@code schema}, after checking that each column has a type of version
   * 1: Spark's own conversion also knows intervals, variants and others, which no library is
   * given (the specification: Spark fails such an operation before it calls the library).
   */
  static Schema toArrow(StructType schema) {
    for (StructField field : schema.fields()) {
      checkType(field.name(), field.dataType());
    }
    // Not the three-argument form, whose flag asks for large strings: the header's strings
    // and binaries have 32-bit offsets ("u" and "z").
    return ArrowUtils.toArrowSchema(
        schema, TIME_ZONE, true, false, ArrowUtils.toArrowSchema$default$5());
  }

  private static void checkType(String column, DataType type) {
    if (type instanceof ArrayType) {
      checkType(column + ".element", ((ArrayType) type).elementType());
    } else if (type instanceof MapType) {
      checkType(column + ".key", ((MapType) type).keyType());
      checkType(column + ".value", ((MapType) type).valueType());
    } else if (type instanceof StructType) {
      for (StructField field : ((StructType) type).fields()) {
        checkType(column + "." + field.name(), field.dataType());
      }
    } else if (!(type instanceof BooleanType
        || type instanceof ByteType
        || type instanceof ShortType
        || type instanceof IntegerType
        || type instanceof LongType
        || type instanceof FloatType
        || type instanceof DoubleType
        || type instanceof DecimalType
        || type instanceof StringType
        || type instanceof BinaryType
        || type instanceof DateType
        || type instanceof TimestampType
        || type instanceof TimestampNTZType
        || type instanceof NullType)) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_TYPE",
          "column `"
              + column
              + "` has the type "
              + type.sql()
              + ", which native data sources do not support: the types of version 1 are "
              + "boolean, tinyint, smallint, int, bigint, float, double, decimal, string, "
              + "binary, date, timestamp, timestamp_ntz, void, and arrays, structs and maps of "
              + "them. Cast the column, or leave it out.");
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
