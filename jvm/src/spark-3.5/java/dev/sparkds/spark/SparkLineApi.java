package dev.sparkds.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StringType;

/** The calls that differ between Spark lines, for Spark 3.5 (Scala 2.12, Arrow 12). */
final class SparkLineApi {
  private SparkLineApi() {}

  /** Spark 3.5 has no collations: every string compares as its bytes. */
  static boolean comparesAsBytes(StringType type) {
    return true;
  }

  /** Spark 3.5 has no spark.sql.execution.arrow.maxBytesPerBatch: only records bound a batch. */
  static long arrowMaxBytesPerBatch(SQLConf conf) {
    return Long.MAX_VALUE;
  }

  /** The bytes of {@code writer}'s vectors (Spark 3.5's ArrowWriter does not count them). */
  static long sizeInBytes(ArrowWriter writer) {
    long bytes = 0;
    for (FieldVector vector : writer.root().getFieldVectors()) {
      bytes += vector.getBufferSize();
    }
    return bytes;
  }

  /** {@code schema} as an Arrow IPC schema message (Arrow 12 has no serializeAsMessage). */
  static byte[] serialize(Schema schema) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (WriteChannel channel = new WriteChannel(Channels.newChannel(out))) {
      MessageSerializer.serialize(channel, schema);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static Schema deserialize(byte[] message) {
    try (ReadChannel channel =
        new ReadChannel(Channels.newChannel(new ByteArrayInputStream(message)))) {
      return MessageSerializer.deserializeSchema(channel);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
