package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import java.lang.ref.Cleaner;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * A writer handle and its source on the driver: committed or aborted, then closed exactly once
 * whatever happens. A commit that fails leaves it open, since Spark then calls abort with the
 * same messages (and abort needs an open writer to remove what the tasks staged); abort closes
 * it, success or failure. A writer that Spark drops without either (its abort never came, as when
 * a streaming query stops after a failed commit) is closed once it is garbage-collected, without
 * an abort: the library's close_writer runs, and what the tasks staged stays for the library's
 * own cleanup.
 */
final class NativeWriter implements AutoCloseable {
  /** One thread for the writers of this JVM that are dropped without being closed. */
  private static final Cleaner CLEANER = Cleaner.create();

  final long writer;
  final byte[] state;
  private final String name;
  private final Handles handles;
  private final Cleaner.Cleanable cleanable;

  /** What closing needs, apart from the writer object, so that the cleaner can run it. */
  private static final class Handles implements Runnable {
    private final NativeSource source;
    private final long writer;
    private volatile boolean closed;

    Handles(NativeSource source, long writer) {
      this.source = source;
      this.writer = writer;
    }

    @Override
    public void run() {
      closed = true;
      try {
        Native.closeWriter(writer);
      } finally {
        source.close();
      }
    }
  }

  private NativeWriter(NativeSource source, long writer, byte[] state) {
    this.writer = writer;
    this.state = state;
    this.name = source.options.name();
    this.handles = new Handles(source, writer);
    this.cleanable = CLEANER.register(this, handles);
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

  /** commit; the writer stays open, for Spark's abort when it fails. */
  void commit(long epochId, WriterCommitMessage[] messages) {
    checkOpen("commit");
    Native.commit(writer, epochId, messages(messages));
  }

  /** abort; the writer stays open until {@link #close}. */
  void abort(long epochId, WriterCommitMessage[] messages) {
    checkOpen("abort");
    Native.abort(writer, epochId, messages(messages));
  }

  private void checkOpen(String call) {
    if (handles.closed) {
      throw new IllegalStateException(
          "the write of data source `"
              + name
              + "` is over (committed, or aborted): it cannot "
              + call
              + " again");
    }
  }

  /** close_writer, then the source's close: the first call only. */
  @Override
  public void close() {
    cleanable.clean();
  }
}
