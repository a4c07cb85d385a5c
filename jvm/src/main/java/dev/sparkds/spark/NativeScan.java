package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import java.util.Arrays;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;

/** A read of a native data source: a batch, or the micro-batches of a stream. */
final class NativeScan implements Scan, Batch {
  private final NativeTable table;
  private final SourceOptions options;
  private final PushedFilters filters;
  private final Integer limit;
  private final StructType pruned;
  private InputPartition[] planned;

  NativeScan(
      NativeTable table,
      SourceOptions options,
      PushedFilters filters,
      Integer limit,
      StructType pruned) {
    this.table = table;
    this.options = options;
    this.filters = filters;
    this.limit = limit;
    this.pruned = pruned;
  }

  @Override
  public StructType readSchema() {
    return pruned != null ? pruned : table.schema();
  }

  /**
   * Shown in the plan: the source, the predicates, limit and columns that the library accepted,
   * and what becomes of the accepted predicates.
   */
  @Override
  public String description() {
    StringBuilder text = new StringBuilder("NativeScan ").append(options.name());
    text.append(" [").append(table.library.path()).append("]");
    text.append(filters.describe());
    if (limit != null) {
      text.append(" PushedLimit: ").append(limit);
    }
    if (pruned != null) {
      text.append(" PrunedColumns: [")
          .append(String.join(", ", Arrays.asList(pruned.fieldNames())))
          .append("]");
    }
    text.append(filters.describeMode());
    return text.toString();
  }

  @Override
  public ColumnarSupportMode columnarSupportMode() {
    return ColumnarSupportMode.SUPPORTED;
  }

  @Override
  public Batch toBatch() {
    if (!table.has(NativeSource.BATCH_READ)) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
          "data source `" + options.name() + "` does not declare SPARK_DS_BATCH_READ.");
    }
    return this;
  }

  @Override
  public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
    if (!table.has(NativeSource.MICRO_BATCH_READ)) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
          "data source `" + options.name() + "` does not declare SPARK_DS_MICRO_BATCH_READ.");
    }
    return new NativeMicroBatchStream(table, options);
  }

  /**
   * Plans the read once: a reader of the table's schema, the pushdowns replayed (the predicates
   * offered, then the accepted limit and columns),
   * the partitions and the reader's state; the reader and its source are closed at once.
   */
  @Override
  public synchronized InputPartition[] planInputPartitions() {
    if (planned != null) {
      return planned;
    }
    byte[][] partitions;
    byte[] state;
    try (NativeSource source = NativeSource.open(table.library, options)) {
      long reader = Native.createReader(source.handle, Schemas.toBytes(table.schema()));
      try {
        Native.replay(
            reader,
            filters.message(),
            filters.answers(),
            limit == null ? -1 : limit,
            true,
            pruned == null ? null : Schemas.toBytes(pruned));
        partitions = Native.partitions(reader);
        state = Native.serializeReader(reader);
      } finally {
        Native.closeReader(reader);
      }
    }
    byte[] schema = Schemas.toBytes(readSchema());
    byte[] toCheck = filters.toCheck();
    InputPartition[] result = new InputPartition[partitions.length];
    for (int i = 0; i < partitions.length; i++) {
      result[i] = new NativeInputPartition(table.library, schema, state, partitions[i], toCheck);
    }
    planned = result;
    return result;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new NativeReaderFactory(ColumnVectors.mode());
  }
}
