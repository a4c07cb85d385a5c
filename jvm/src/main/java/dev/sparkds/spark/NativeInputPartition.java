package dev.sparkds.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One partition of a read, sent to an executor: the driver's build of the library, the schema
 * to read (an Arrow IPC schema message), the reader's state and the partition's bytes.
 */
final class NativeInputPartition implements InputPartition {
  private static final long serialVersionUID = 1L;

  final LibraryRef library;
  final byte[] schema;
  final byte[] readerState;
  final byte[] partition;

  NativeInputPartition(LibraryRef library, byte[] schema, byte[] readerState, byte[] partition) {
    this.library = library;
    this.schema = schema;
    this.readerState = readerState;
    this.partition = partition;
  }
}
