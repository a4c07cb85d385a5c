package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;

/**
 * A streaming read: one source and one stream reader for the life of the query, closed by
 * stop(). Offsets are the library's bytes.
 *
 * <p>It supports Trigger.AvailableNow itself. Without it, Spark 3.5 wraps the stream and asks
 * latest_offset from the stream's initial offset, not from the checkpoint's, so a restarted query
 * planned an end before its start; Spark 4 instead falls back to one micro-batch.
 */
final class NativeMicroBatchStream implements MicroBatchStream, SupportsTriggerAvailableNow {
  private final NativeTable table;
  private final NativeSource source;
  private final long reader;
  private final byte[] schema;
  private final ColumnVectors.Mode mode;
  private boolean stopped;
  /** Trigger.AvailableNow: set by prepareForTriggerAvailableNow. */
  private boolean availableNow;
  /** Under Trigger.AvailableNow, the end that the query's first latestOffset answered. */
  private NativeOffset availableNowEnd;

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

  /**
   * Under Trigger.AvailableNow the query reads up to the end that the library gives for the
   * query's start (from its checkpoint), and then stops: later calls answer that end again, so
   * Spark sees no new data. The library's latest_offset may bound one micro-batch, so that end is
   * what one call gives, as Spark 4's single-batch fallback reads.
   */
  @Override
  public Offset latestOffset(Offset start, ReadLimit limit) {
    if (availableNowEnd != null) {
      return availableNowEnd;
    }
    byte[] from = start == null ? Native.initialOffset(reader) : NativeOffset.of(start).bytes;
    NativeOffset latest = new NativeOffset(Native.latestOffset(reader, from));
    if (availableNow) {
      availableNowEnd = latest;
    }
    return latest;
  }

  @Override
  public void prepareForTriggerAvailableNow() {
    availableNow = true;
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
