package dev.sparkds.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * Sent to the executors: what a task needs to write, the driver's build of the library, the
 * schema, the writer's state, and the bounds of the Arrow batches given to write
 * (spark.sql.execution.arrow.maxRecordsPerBatch and maxBytesPerBatch).
 */
final class NativeDataWriterFactory implements DataWriterFactory, StreamingDataWriterFactory {
  private static final long serialVersionUID = 1L;

  private final LibraryRef library;
  private final StructType schema;
  private final byte[] schemaBytes;
  private final byte[] writerState;
  private final int maxRecords;
  private final long maxBytes;

  NativeDataWriterFactory(LibraryRef library, StructType schema, byte[] writerState) {
    this.library = library;
    this.schema = schema;
    this.schemaBytes = Schemas.toBytes(schema);
    this.writerState = writerState;
    SQLConf conf = SQLConf.get();
    int records = conf.arrowMaxRecordsPerBatch();
    // 0 or less means no bound in Spark's own use of the setting; a batch still needs one.
    this.maxRecords = records > 0 ? records : 10000;
    long bytes = SparkLineApi.arrowMaxBytesPerBatch(conf);
    this.maxBytes = bytes > 0 ? bytes : Long.MAX_VALUE;
  }

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    return new NativeDataWriter(
        library, schema, schemaBytes, writerState, NativeBatchWrite.NO_EPOCH, taskId,
        maxRecords, maxBytes);
  }

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
    return new NativeDataWriter(
        library, schema, schemaBytes, writerState, epochId, taskId, maxRecords, maxBytes);
  }
}
