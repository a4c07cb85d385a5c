package dev.sparkds.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One partition of a read, sent to an executor: the driver's build of the library, the schema
 * to read (an Arrow IPC schema message), the reader's state, the partition's bytes, and the
 * predicates that the library accepted, which the executor checks every row against (a message
 * of spark_datasource_filters.h; null for none, or when they are not checked).
 */
final class NativeInputPartition implements InputPartition {
  private static final long serialVersionUID = 2L;

  final LibraryRef library;
  final byte[] schema;
  final byte[] readerState;
  final byte[] partition;
  final byte[] acceptedFilters;

  NativeInputPartition(
      LibraryRef library,
      byte[] schema,
      byte[] readerState,
      byte[] partition,
      byte[] acceptedFilters) {
    this.library = library;
    this.schema = schema;
    this.readerState = readerState;
    this.partition = partition;
    this.acceptedFilters = acceptedFilters;
  }
}
