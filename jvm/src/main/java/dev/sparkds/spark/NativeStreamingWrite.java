package dev.sparkds.spark;

import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;

/**
 * A streaming write. Spark asks for a writer factory at each micro-batch and then commits or
 * aborts that epoch, and a streaming write has no end of its own: so each epoch gets its own
 * writer (create_writer with the query's ID, streaming), closed once the epoch is committed or
 * aborted, which keeps every handle closed exactly once whenever the query stops. When an
 * epoch's commit fails, Spark aborts it with the same messages: its writer stays the current
 * one until then.
 */
final class NativeStreamingWrite implements StreamingWrite {
  private final NativeTable table;
  private final SourceOptions options;
  private final LogicalWriteInfo info;
  private final int mode;
  private NativeWriter current;

  NativeStreamingWrite(NativeTable table, SourceOptions options, LogicalWriteInfo info, int mode) {
    this.table = table;
    this.options = options;
    this.info = info;
    this.mode = mode;
  }

  @Override
  public synchronized StreamingDataWriterFactory createStreamingWriterFactory(
      PhysicalWriteInfo physical) {
    if (current != null) {
      // The previous epoch ended without a commit or an abort (its job failed to start).
      current.close();
    }
    current =
        NativeWriter.open(
            table, options, Schemas.toBytes(info.schema()), info.queryId(), mode, true);
    return new NativeDataWriterFactory(table.library, info.schema(), current.state);
  }

  private synchronized NativeWriter current() {
    if (current == null) {
      throw new IllegalStateException("a streaming epoch ended that had no writer");
    }
    return current;
  }

  private synchronized NativeWriter take() {
    NativeWriter writer = current();
    current = null;
    return writer;
  }

  @Override
  public void commit(long epochId, WriterCommitMessage[] messages) {
    // Taken only once committed: a failed commit leaves the writer to the abort that follows.
    current().commit(epochId, messages);
    take().close();
  }

  @Override
  public void abort(long epochId, WriterCommitMessage[] messages) {
    NativeWriter writer = take();
    try {
      writer.abort(epochId, messages);
    } finally {
      writer.close();
    }
  }
}
