package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The stream of one partition: each next() asks the library for a batch and wraps its buffers
 * in place. A batch is valid until the next call of next() or close(), as Spark's own
 * off-heap batches are.
 */
final class NativePartitionReader implements PartitionReader<ColumnarBatch> {
  private final TaskContext task;
  private final BatchLoader loader;
  private long stream;
  private ColumnarBatch batch;

  NativePartitionReader(NativeInputPartition partition, ColumnVectors.Mode mode) {
    this.task = TaskContext.get();
    long library = partition.library.executorHandle();
    this.loader = new BatchLoader(Schemas.arrowFromBytes(partition.schema), mode);
    try {
      this.stream =
          Native.read(
              library,
              partition.schema,
              partition.readerState,
              partition.partition,
              partition.acceptedFilters,
              task == null ? 0 : task.taskAttemptId(),
              task == null ? 0 : task.stageId(),
              task == null ? 0 : task.partitionId(),
              task == null ? 0 : task.attemptNumber(),
              task);
    } catch (RuntimeException e) {
      loader.close();
      throw e;
    }
  }

  @Override
  public boolean next() {
    if (task != null) {
      // A killed task stops between batches (the library also sees is_interrupted).
      task.killTaskIfInterrupted();
    }
    long[] description = Native.next(stream);
    if (description == null) {
      batch = null;
      return false;
    }
    batch = loader.load(description);
    return true;
  }

  @Override
  public ColumnarBatch get() {
    return batch;
  }

  @Override
  public void close() {
    if (stream != 0) {
      long closing = stream;
      stream = 0;
      batch = null;
      try {
        Native.closeStream(closing);
      } finally {
        loader.close();
      }
    }
  }
}
