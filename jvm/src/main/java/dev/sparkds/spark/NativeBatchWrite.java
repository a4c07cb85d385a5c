package dev.sparkds.spark;

import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** A batch write: one writer, committed or aborted once with the tasks' messages. */
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
    try {
      writer.commit(NO_EPOCH, messages);
    } finally {
      writer.close();
    }
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
