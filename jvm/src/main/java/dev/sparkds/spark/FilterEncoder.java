package dev.sparkds.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark's V2 predicates in the binary encoding of spark_datasource_filters.h, version 1 (the
 * header's section "The encoding, version 1" is the specification; the codes below are its
 * #defines).
 *
 * <p>A predicate is encoded only when every part of it has a code: a column reference (its
 * {@link NamedReference#fieldNames()} path), a literal of a type of the header (with the value
 * Spark holds, exactly), or a predicate of the header's operators. Anything else (a cast, an
 * arithmetic or other function, a literal of another type, a string of a collation other than
 * UTF8_BINARY, whose comparisons are not the header's byte order) makes the whole predicate
 * unencodable, and it is left to Spark.
 */
public final class FilterEncoder {
  private FilterEncoder() {}

  // Operators.
  static final int EQ = 1;
  static final int NULL_SAFE_EQ = 2;
  static final int LT = 3;
  static final int LE = 4;
  static final int GT = 5;
  static final int GE = 6;
  static final int IN = 7;
  static final int IS_NULL = 8;
  static final int IS_NOT_NULL = 9;
  static final int AND = 10;
  static final int OR = 11;
  static final int NOT = 12;
  static final int STARTS_WITH = 13;
  static final int ENDS_WITH = 14;
  static final int CONTAINS = 15;
  static final int ALWAYS_TRUE = 16;
  static final int ALWAYS_FALSE = 17;

  // Value kinds.
  static final int COLUMN = 0;
  static final int LITERAL = 1;

  // Literal types.
  static final int TYPE_NULL = 0;
  static final int TYPE_BOOLEAN = 1;
  static final int TYPE_INT8 = 2;
  static final int TYPE_INT16 = 3;
  static final int TYPE_INT32 = 4;
  static final int TYPE_INT64 = 5;
  static final int TYPE_FLOAT32 = 6;
  static final int TYPE_FLOAT64 = 7;
  static final int TYPE_DECIMAL128 = 8;
  static final int TYPE_UTF8 = 9;
  static final int TYPE_BINARY = 10;
  static final int TYPE_DATE32 = 11;
  static final int TYPE_TIMESTAMP = 12;
  static final int TYPE_TIMESTAMP_NTZ = 13;

  /** The header's largest decimal precision (decimal128). */
  private static final int MAX_PRECISION = 38;

  /**
   * Nesting deeper than this is left to Spark: the SDK's parser answers 0 beyond its depth
   * limit (64) anyway, and a bounded recursion here cannot overflow the planner's stack.
   */
  static final int MAX_DEPTH = 64;

  /** Thrown inside the encoder for a part that has no code; never leaves this class. */
  private static final class NotEncodable extends Exception {
    private static final long serialVersionUID = 1L;
    static final NotEncodable INSTANCE = new NotEncodable();

    private NotEncodable() {
      super(null, null, false, false);
    }
  }

  /**
   * One predicate as the header's `predicate`: its u32 length, then its operator and operands.
   *
   * @return the bytes, or null when the predicate holds something the encoding cannot express
   */
  public static byte[] encode(Predicate predicate) {
    Out out = new Out();
    try {
      predicate(out, predicate, 1);
    } catch (NotEncodable e) {
      return null;
    }
    return out.toByteArray();
  }

  /** A message: the u32 count, then the predicates as {@link #encode} returned them. */
  public static byte[] message(List<byte[]> predicates) {
    Out out = new Out();
    out.u32(predicates.size());
    for (byte[] predicate : predicates) {
      out.bytes(predicate);
    }
    return out.toByteArray();
  }

  /** {@link #message(List)} of an array, for callers outside Java (the tests, through py4j). */
  public static byte[] message(byte[][] predicates) {
    return message(Arrays.asList(predicates));
  }

  private static void predicate(Out out, Predicate predicate, int depth) throws NotEncodable {
    if (depth > MAX_DEPTH) {
      throw NotEncodable.INSTANCE;
    }
    int start = out.reserveLength();
    Expression[] children = predicate.children();
    switch (predicate.name()) {
      case "=" -> binary(out, EQ, children);
      case "<=>" -> binary(out, NULL_SAFE_EQ, children);
      case "<" -> binary(out, LT, children);
      case "<=" -> binary(out, LE, children);
      case ">" -> binary(out, GT, children);
      case ">=" -> binary(out, GE, children);
      case "STARTS_WITH" -> binary(out, STARTS_WITH, children);
      case "ENDS_WITH" -> binary(out, ENDS_WITH, children);
      case "CONTAINS" -> binary(out, CONTAINS, children);
      case "IN" -> {
        if (children.length < 1) {
          throw NotEncodable.INSTANCE;
        }
        out.u8(IN);
        value(out, children[0]);
        out.u32(children.length - 1);
        for (int i = 1; i < children.length; i++) {
          value(out, children[i]);
        }
      }
      case "IS_NULL" -> unary(out, IS_NULL, children);
      case "IS_NOT_NULL" -> unary(out, IS_NOT_NULL, children);
      case "AND", "OR" -> {
        if (children.length != 2) {
          throw NotEncodable.INSTANCE;
        }
        out.u8(predicate.name().equals("AND") ? AND : OR);
        predicate(out, asPredicate(children[0]), depth + 1);
        predicate(out, asPredicate(children[1]), depth + 1);
      }
      case "NOT" -> {
        if (children.length != 1) {
          throw NotEncodable.INSTANCE;
        }
        out.u8(NOT);
        predicate(out, asPredicate(children[0]), depth + 1);
      }
      case "ALWAYS_TRUE", "ALWAYS_FALSE" -> {
        if (children.length != 0) {
          throw NotEncodable.INSTANCE;
        }
        out.u8(predicate.name().equals("ALWAYS_TRUE") ? ALWAYS_TRUE : ALWAYS_FALSE);
      }
      default -> throw NotEncodable.INSTANCE;
    }
    out.fillLength(start);
  }

  private static Predicate asPredicate(Expression expression) throws NotEncodable {
    if (expression instanceof Predicate predicate) {
      return predicate;
    }
    throw NotEncodable.INSTANCE;
  }

  private static void binary(Out out, int operator, Expression[] children) throws NotEncodable {
    if (children.length != 2) {
      throw NotEncodable.INSTANCE;
    }
    out.u8(operator);
    value(out, children[0]);
    value(out, children[1]);
  }

  private static void unary(Out out, int operator, Expression[] children) throws NotEncodable {
    if (children.length != 1) {
      throw NotEncodable.INSTANCE;
    }
    out.u8(operator);
    value(out, children[0]);
  }

  private static void value(Out out, Expression expression) throws NotEncodable {
    if (expression instanceof NamedReference reference) {
      String[] parts = reference.fieldNames();
      if (parts.length == 0) {
        throw NotEncodable.INSTANCE;
      }
      out.u8(COLUMN);
      out.u32(parts.length);
      for (String part : parts) {
        out.sized(part.getBytes(StandardCharsets.UTF_8));
      }
    } else if (expression instanceof Literal<?> literal) {
      out.u8(LITERAL);
      literal(out, literal.value(), literal.dataType());
    } else {
      throw NotEncodable.INSTANCE;
    }
  }

  /** `literal = u8 type, parameters, u8 null, value`, from Spark's internal value. */
  private static void literal(Out out, Object value, DataType type) throws NotEncodable {
    if (type instanceof NullType) {
      out.u8(TYPE_NULL);
      out.u8(1);
      return;
    }
    if (type instanceof DecimalType decimal) {
      int precision = decimal.precision();
      int scale = decimal.scale();
      if (precision < 1 || precision > MAX_PRECISION || scale < 0 || scale > precision) {
        throw NotEncodable.INSTANCE;
      }
      out.u8(TYPE_DECIMAL128);
      out.u8(precision);
      out.u8(scale);
      if (nullValue(out, value)) {
        return;
      }
      out.i128(unscaled(value, scale));
      return;
    }
    int code = typeCode(type);
    out.u8(code);
    if (nullValue(out, value)) {
      return;
    }
    switch (code) {
      case TYPE_BOOLEAN -> out.u8(as(value, Boolean.class) ? 1 : 0);
      case TYPE_INT8 -> out.u8(as(value, Byte.class));
      case TYPE_INT16 -> out.i16(as(value, Short.class));
      case TYPE_INT32, TYPE_DATE32 -> out.i32(as(value, Integer.class));
      case TYPE_INT64, TYPE_TIMESTAMP, TYPE_TIMESTAMP_NTZ -> out.i64(as(value, Long.class));
      case TYPE_FLOAT32 -> out.i32(Float.floatToRawIntBits(as(value, Float.class)));
      case TYPE_FLOAT64 -> out.i64(Double.doubleToRawLongBits(as(value, Double.class)));
      case TYPE_UTF8 -> {
        if (value instanceof UTF8String utf8) {
          out.sized(utf8.getBytes());
        } else {
          out.sized(as(value, String.class).getBytes(StandardCharsets.UTF_8));
        }
      }
      case TYPE_BINARY -> out.sized(as(value, byte[].class));
      default -> throw NotEncodable.INSTANCE;
    }
  }

  private static int typeCode(DataType type) throws NotEncodable {
    if (type instanceof BooleanType) {
      return TYPE_BOOLEAN;
    } else if (type instanceof ByteType) {
      return TYPE_INT8;
    } else if (type instanceof ShortType) {
      return TYPE_INT16;
    } else if (type instanceof IntegerType) {
      return TYPE_INT32;
    } else if (type instanceof LongType) {
      return TYPE_INT64;
    } else if (type instanceof FloatType) {
      return TYPE_FLOAT32;
    } else if (type instanceof DoubleType) {
      return TYPE_FLOAT64;
    } else if (type instanceof StringType string && SparkLineApi.comparesAsBytes(string)) {
      // Other collations compare (and match STARTS_WITH...) otherwise than as bytes.
      return TYPE_UTF8;
    } else if (type instanceof BinaryType) {
      return TYPE_BINARY;
    } else if (type instanceof DateType) {
      return TYPE_DATE32;
    } else if (type instanceof TimestampType) {
      return TYPE_TIMESTAMP;
    } else if (type instanceof TimestampNTZType) {
      return TYPE_TIMESTAMP_NTZ;
    }
    throw NotEncodable.INSTANCE;
  }

  /** Writes the null flag; true when the value is NULL (and nothing follows). */
  private static boolean nullValue(Out out, Object value) {
    out.u8(value == null ? 1 : 0);
    return value == null;
  }

  private static <T> T as(Object value, Class<T> type) throws NotEncodable {
    if (type.isInstance(value)) {
      return type.cast(value);
    }
    throw NotEncodable.INSTANCE;
  }

  /** The unscaled value at exactly `scale`; a value that would need rounding has no code. */
  private static BigInteger unscaled(Object value, int scale) throws NotEncodable {
    BigDecimal exact;
    if (value instanceof Decimal decimal) {
      exact = decimal.toJavaBigDecimal();
    } else if (value instanceof BigDecimal big) {
      exact = big;
    } else {
      throw NotEncodable.INSTANCE;
    }
    try {
      BigInteger unscaled = exact.setScale(scale).unscaledValue();
      if (unscaled.bitLength() > 127) {
        throw NotEncodable.INSTANCE;
      }
      return unscaled;
    } catch (ArithmeticException e) {
      throw NotEncodable.INSTANCE;
    }
  }

  /** A growing little-endian buffer. */
  private static final class Out {
    private ByteBuffer buffer = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);

    private void room(int bytes) {
      if (buffer.remaining() < bytes) {
        int capacity = Math.max(buffer.capacity() * 2, buffer.position() + bytes);
        ByteBuffer larger = ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
        buffer.flip();
        larger.put(buffer);
        buffer = larger;
      }
    }

    void u8(int value) {
      room(1);
      buffer.put((byte) value);
    }

    void i16(short value) {
      room(2);
      buffer.putShort(value);
    }

    void i32(int value) {
      room(4);
      buffer.putInt(value);
    }

    void u32(int value) {
      i32(value);
    }

    void i64(long value) {
      room(8);
      buffer.putLong(value);
    }

    /** 16 bytes of two's complement, little-endian; `value` fits in 128 bits. */
    void i128(BigInteger value) {
      byte[] bigEndian = value.toByteArray();
      byte fill = (byte) (value.signum() < 0 ? 0xff : 0);
      room(16);
      for (int i = 0; i < 16; i++) {
        int from = bigEndian.length - 1 - i;
        buffer.put(from >= 0 ? bigEndian[from] : fill);
      }
    }

    void bytes(byte[] bytes) {
      room(bytes.length);
      buffer.put(bytes);
    }

    /** `u32 n, then n bytes`. */
    void sized(byte[] bytes) {
      u32(bytes.length);
      bytes(bytes);
    }

    /** Reserves a u32 length, to be filled once what it measures is written. */
    int reserveLength() {
      int at = buffer.position();
      i32(0);
      return at;
    }

    void fillLength(int at) {
      buffer.putInt(at, buffer.position() - at - 4);
    }

    byte[] toByteArray() {
      return Arrays.copyOf(buffer.array(), buffer.position());
    }
  }
}
