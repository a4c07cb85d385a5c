package dev.sparkds.spark;

import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * A batch write: one writer, committed or aborted with the tasks' messages, then closed. When
 * commit fails, Spark calls abort with the same messages (V2TableWriteExec): the writer stays
 * open for it until then.
 */
final class NativeBatchWrite implements BatchWrite {
  /** SPARK_DS_NO_EPOCH. */
  static final long NO_EPOCH = -1;

  private final NativeTable table;
  private final LogicalWriteInfo info;
  private final NativeWriter writer;

  NativeBatchWrite(NativeTable table, SourceOptions options, LogicalWriteInfo info, int mode) {
    this.table = table;
    this.info = info;
    this.writer =
        NativeWriter.open(
            table, options, Schemas.toBytes(info.schema()), info.queryId(), mode, false);
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo physical) {
    return new NativeDataWriterFactory(table.library, info.schema(), writer.state);
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    writer.commit(NO_EPOCH, messages);
    writer.close();
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    try {
      writer.abort(NO_EPOCH, messages);
    } finally {
      writer.close();
    }
  }
}
