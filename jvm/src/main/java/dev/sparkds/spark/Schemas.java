package dev.sparkds.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
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
    List<Field> fields = new ArrayList<>();
    for (StructField field : schema.fields()) {
      fields.add(arrowField(field.name(), field.dataType(), field.nullable()));
    }
    return new Schema(fields);
  }

  /**
   * The Arrow field of a column of version 1, as Spark's own conversion makes it (list items
   * "element", map entries "entries" of "key" and "value"), written here because that
   * conversion's signature differs in every Spark line.
   */
  private static Field arrowField(String name, DataType type, boolean nullable) {
    List<Field> children = new ArrayList<>();
    ArrowType arrow;
    if (type instanceof ArrayType) {
      ArrayType array = (ArrayType) type;
      arrow = ArrowType.List.INSTANCE;
      children.add(arrowField("element", array.elementType(), array.containsNull()));
    } else if (type instanceof MapType) {
      MapType map = (MapType) type;
      arrow = new ArrowType.Map(false);
      StructType entries =
          new StructType()
              .add("key", map.keyType(), false)
              .add("value", map.valueType(), map.valueContainsNull());
      children.add(arrowField("entries", entries, false));
    } else if (type instanceof StructType) {
      arrow = ArrowType.Struct.INSTANCE;
      for (StructField field : ((StructType) type).fields()) {
        children.add(arrowField(field.name(), field.dataType(), field.nullable()));
      }
    } else {
      arrow = arrowType(type);
    }
    return new Field(name, new FieldType(nullable, arrow, null), children);
  }

  private static ArrowType arrowType(DataType type) {
    if (type instanceof BooleanType) {
      return ArrowType.Bool.INSTANCE;
    } else if (type instanceof ByteType) {
      return new ArrowType.Int(8, true);
    } else if (type instanceof ShortType) {
      return new ArrowType.Int(16, true);
    } else if (type instanceof IntegerType) {
      return new ArrowType.Int(32, true);
    } else if (type instanceof LongType) {
      return new ArrowType.Int(64, true);
    } else if (type instanceof FloatType) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
    } else if (type instanceof DoubleType) {
      return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
    } else if (type instanceof StringType) {
      return ArrowType.Utf8.INSTANCE;
    } else if (type instanceof BinaryType) {
      return ArrowType.Binary.INSTANCE;
    } else if (type instanceof DecimalType) {
      DecimalType decimal = (DecimalType) type;
      return new ArrowType.Decimal(decimal.precision(), decimal.scale(), 128);
    } else if (type instanceof DateType) {
      return new ArrowType.Date(DateUnit.DAY);
    } else if (type instanceof TimestampType) {
      return new ArrowType.Timestamp(TimeUnit.MICROSECOND, TIME_ZONE);
    } else if (type instanceof TimestampNTZType) {
      return new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
    } else if (type instanceof NullType) {
      return ArrowType.Null.INSTANCE;
    }
    // checkType refused every other type before.
    throw new IllegalStateException("no Arrow type of version 1 for " + type);
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
    return SparkLineApi.serialize(toArrow(schema));
  }

  static Schema arrowFromBytes(byte[] bytes) {
    return SparkLineApi.deserialize(bytes);
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
