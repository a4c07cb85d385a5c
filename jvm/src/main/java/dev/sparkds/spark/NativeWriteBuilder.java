package dev.sparkds.spark;

import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend;

/**
 * A write: append, or truncate (save mode overwrite, output mode complete) when the source
 * declares SPARK_DS_TRUNCATE. The output mode update writes the updated rows as appends.
 */
final class NativeWriteBuilder implements SupportsTruncate, SupportsStreamingUpdateAsAppend {
  static final int APPEND = 0;
  static final int TRUNCATE = 1;

  private final NativeTable table;
  private final SourceOptions options;
  private final LogicalWriteInfo info;
  private int mode = APPEND;

  NativeWriteBuilder(NativeTable table, SourceOptions options, LogicalWriteInfo info) {
    this.table = table;
    this.options = options;
    this.info = info;
  }

  @Override
  public WriteBuilder truncate() {
    if (!table.has(NativeSource.TRUNCATE)) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
          "data source `"
              + options.name()
              + "` does not declare SPARK_DS_TRUNCATE, so it cannot overwrite: write with "
              + "mode(\"append\").");
    }
    mode = TRUNCATE;
    return this;
  }

  @Override
  public Write build() {
    NativeTable table = this.table;
    SourceOptions options = this.options;
    LogicalWriteInfo info = this.info;
    int mode = this.mode;
    return new Write() {
      @Override
      public String description() {
        return "NativeWrite " + options.name() + (mode == TRUNCATE ? " (truncate)" : "");
      }

      @Override
      public BatchWrite toBatch() {
        if (!table.has(NativeSource.BATCH_WRITE)) {
          throw new NativeDataSourceException(
              "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
              "data source `" + options.name() + "` does not declare SPARK_DS_BATCH_WRITE.");
        }
        return new NativeBatchWrite(table, options, info, mode);
      }

      @Override
      public StreamingWrite toStreaming() {
        if (!table.has(NativeSource.STREAMING_WRITE)) {
          throw new NativeDataSourceException(
              "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
              "data source `" + options.name() + "` does not declare SPARK_DS_STREAMING_WRITE.");
        }
        return new NativeStreamingWrite(table, options, info, mode);
      }
    };
  }
}
