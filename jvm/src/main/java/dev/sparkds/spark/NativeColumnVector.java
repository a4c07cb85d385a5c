package dev.sparkds.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
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
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A column of a flat type read in place from the Arrow C data buffers of a batch, with
 * Platform's unchecked loads: Arrow Java's vectors check bounds on every value and allocate a
 * validity buffer for columns without nulls, which costs as much as the read itself.
 *
 * <p>Buffers, in the C data interface's order: validity (0 when the column has no nulls), then
 * the values (fixed width: 1 bit for booleans, 16 bytes for decimals), or the int32 offsets and
 * the bytes (strings and binary). The JNI library has checked that each array is at least as
 * long as the batch; the addresses are valid until the next batch.
 */
final class NativeColumnVector extends ColumnVector {
  private final long length;
  private final int nullCount;
  private final long validity;
  private final long values;
  private final long data;

  NativeColumnVector(DataType type, long length, long nullCount, long[] buffers) {
    super(type);
    this.length = length;
    this.nullCount = (int) nullCount;
    this.validity = nullCount == 0 || buffers.length == 0 ? 0 : buffers[0];
    this.values = buffers.length > 1 ? buffers[1] : 0;
    this.data = buffers.length > 2 ? buffers[2] : 0;
  }

  /** Whether this vector reads columns of {@code type}. */
  static boolean supports(DataType type) {
    return type instanceof BooleanType
        || type instanceof ByteType
        || type instanceof ShortType
        || type instanceof IntegerType
        || type instanceof DateType
        || type instanceof LongType
        || type instanceof TimestampType
        || type instanceof TimestampNTZType
        || type instanceof FloatType
        || type instanceof DoubleType
        || type instanceof DecimalType
        || type instanceof StringType
        || type instanceof BinaryType
        || type instanceof NullType;
  }

  @Override
  public void close() {
    // The library owns the memory: the stream releases it.
  }

  @Override
  public boolean hasNull() {
    return nullCount > 0;
  }

  @Override
  public int numNulls() {
    return nullCount;
  }

  @Override
  public boolean isNullAt(int rowId) {
    if (nullCount == 0) {
      return false;
    }
    if (validity == 0) {
      // A column of type null (no buffers), or all nulls without a validity buffer.
      return true;
    }
    return (Platform.getByte(null, validity + (rowId >> 3)) & (1 << (rowId & 7))) == 0;
  }

  @Override
  public boolean getBoolean(int rowId) {
    return (Platform.getByte(null, values + (rowId >> 3)) & (1 << (rowId & 7))) != 0;
  }

  @Override
  public byte getByte(int rowId) {
    return Platform.getByte(null, values + rowId);
  }

  @Override
  public short getShort(int rowId) {
    return Platform.getShort(null, values + 2L * rowId);
  }

  @Override
  public int getInt(int rowId) {
    return Platform.getInt(null, values + 4L * rowId);
  }

  @Override
  public long getLong(int rowId) {
    return Platform.getLong(null, values + 8L * rowId);
  }

  @Override
  public float getFloat(int rowId) {
    return Platform.getFloat(null, values + 4L * rowId);
  }

  @Override
  public double getDouble(int rowId) {
    return Platform.getDouble(null, values + 8L * rowId);
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) {
      return null;
    }
    long address = values + 16L * rowId;
    long low = Platform.getLong(null, address);
    if (precision <= Decimal.MAX_LONG_DIGITS()) {
      // The value fits in the low 64 bits (little-endian two's complement).
      return Decimal.createUnsafe(low, precision, scale);
    }
    long high = Platform.getLong(null, address + 8);
    byte[] bigEndian = new byte[16];
    for (int i = 0; i < 8; i++) {
      bigEndian[i] = (byte) (high >>> (56 - 8 * i));
      bigEndian[8 + i] = (byte) (low >>> (56 - 8 * i));
    }
    return Decimal.apply(new BigDecimal(new BigInteger(bigEndian), scale), precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = Platform.getInt(null, values + 4L * rowId);
    int end = Platform.getInt(null, values + 4L * rowId + 4);
    return UTF8String.fromAddress(null, data + start, end - start);
  }

  @Override
  public byte[] getBinary(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = Platform.getInt(null, values + 4L * rowId);
    int end = Platform.getInt(null, values + 4L * rowId + 4);
    byte[] bytes = new byte[end - start];
    Platform.copyMemory(null, data + start, bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length);
    return bytes;
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw new UnsupportedOperationException("a column of " + dataType() + " has no arrays");
  }

  @Override
  public ColumnarMap getMap(int ordinal) {
    throw new UnsupportedOperationException("a column of " + dataType() + " has no maps");
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw new UnsupportedOperationException("a column of " + dataType() + " has no children");
  }

  @Override
  public String toString() {
    return "NativeColumnVector(" + dataType() + ", " + length + " values)";
  }
}
