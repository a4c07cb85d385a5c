package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.SupportsAdmissionControl;

/**
 * A streaming read: one source and one stream reader for the life of the query, closed by
 * stop(). Offsets are the library's bytes.
 */
final class NativeMicroBatchStream implements MicroBatchStream, SupportsAdmissionControl {
  private final NativeTable table;
  private final NativeSource source;
  private final long reader;
  private final byte[] schema;
  private final ColumnVectors.Mode mode;
  private boolean stopped;

  NativeMicroBatchStream(NativeTable table, SourceOptions options) {
    this.table = table;
    this.schema = Schemas.toBytes(table.schema());
    this.mode = ColumnVectors.mode();
    this.source = NativeSource.open(table.library, options);
    try {
      this.reader = Native.createStreamReader(source.handle, schema);
    } catch (RuntimeException e) {
      source.close();
      throw e;
    }
  }

  @Override
  public Offset initialOffset() {
    return new NativeOffset(Native.initialOffset(reader));
  }

  /** latest_offset needs the start of the micro-batch, which only the other form gives. */
  @Override
  public Offset latestOffset() {
    throw new UnsupportedOperationException(
        "latestOffset() is not used: Spark calls latestOffset(start, limit)");
  }

  @Override
  public Offset latestOffset(Offset start, ReadLimit limit) {
    byte[] from = start == null ? Native.initialOffset(reader) : NativeOffset.of(start).bytes;
    return new NativeOffset(Native.latestOffset(reader, from));
  }

  @Override
  public ReadLimit getDefaultReadLimit() {
    return ReadLimit.allAvailable();
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    byte[][] partitions =
        Native.streamPartitions(reader, NativeOffset.of(start).bytes, NativeOffset.of(end).bytes);
    byte[] state = Native.serializeStreamReader(reader);
    InputPartition[] result = new InputPartition[partitions.length];
    for (int i = 0; i < partitions.length; i++) {
      result[i] = new NativeInputPartition(table.library, schema, state, partitions[i], null);
    }
    return result;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new NativeReaderFactory(mode);
  }

  @Override
  public Offset deserializeOffset(String json) {
    return NativeOffset.fromJson(json);
  }

  @Override
  public void commit(Offset end) {
    Native.commitOffset(reader, NativeOffset.of(end).bytes);
  }

  @Override
  public synchronized void stop() {
    if (!stopped) {
      stopped = true;
      try {
        Native.closeStreamReader(reader);
      } finally {
        source.close();
      }
    }
  }

  @Override
  public String toString() {
    return "NativeMicroBatchStream " + table.options.name();
  }
}
