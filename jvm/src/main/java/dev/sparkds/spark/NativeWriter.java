package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** A writer handle and its source on the driver: commit or abort, then close, once. */
final class NativeWriter implements AutoCloseable {
  final NativeSource source;
  final long writer;
  final byte[] state;
  private boolean closed;

  private NativeWriter(NativeSource source, long writer, byte[] state) {
    this.source = source;
    this.writer = writer;
    this.state = state;
  }

  static NativeWriter open(
      NativeTable table,
      SourceOptions options,
      byte[] schema,
      String queryId,
      int mode,
      boolean streaming) {
    NativeSource source = NativeSource.open(table.library, options);
    long writer = 0;
    try {
      writer = Native.createWriter(source.handle, schema, queryId, mode, streaming);
      byte[] state = Native.serializeWriter(writer);
      return new NativeWriter(source, writer, state);
    } catch (RuntimeException e) {
      if (writer != 0) {
        Native.closeWriter(writer);
      }
      source.close();
      throw e;
    }
  }

  static byte[][] messages(WriterCommitMessage[] messages) {
    byte[][] bytes = new byte[messages.length][];
    for (int i = 0; i < messages.length; i++) {
      // A task that did not commit has no message: the header passes NULL for it.
      bytes[i] = messages[i] == null ? null : ((NativeCommitMessage) messages[i]).bytes;
    }
    return bytes;
  }

  void commit(long epochId, WriterCommitMessage[] messages) {
    Native.commit(writer, epochId, messages(messages));
  }

  void abort(long epochId, WriterCommitMessage[] messages) {
    Native.abort(writer, epochId, messages(messages));
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      try {
        Native.closeWriter(writer);
      } finally {
        source.close();
      }
    }
  }
}
