package dev.sparkds.spark;

import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** The commit message of a task: the library's bytes. */
final class NativeCommitMessage implements WriterCommitMessage {
  private static final long serialVersionUID = 1L;

  final byte[] bytes;

  NativeCommitMessage(byte[] bytes) {
    this.bytes = bytes;
  }
}
