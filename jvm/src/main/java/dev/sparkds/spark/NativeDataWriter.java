package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The writer of one task attempt: rows go into Arrow Java vectors (off-heap, allocated here),
 * and each full batch is described in place to the library's write, which copies what it
 * keeps. Spark calls commit or abort, then close.
 */
final class NativeDataWriter implements DataWriter<InternalRow> {
  private final TaskContext task;
  private final BufferAllocator allocator;
  private final VectorSchemaRoot root;
  private final ArrowWriter arrow;
  private final int maxRecords;
  private final long maxBytes;
  private long dataWriter;
  private int rows;

  NativeDataWriter(
      LibraryRef library,
      StructType schema,
      byte[] schemaBytes,
      byte[] writerState,
      long epochId,
      long taskId,
      int maxRecords,
      long maxBytes) {
    this.task = TaskContext.get();
    this.maxRecords = maxRecords;
    this.maxBytes = maxBytes;
    long handle = library.executorHandle();
    this.dataWriter =
        Native.createDataWriter(
            handle,
            schemaBytes,
            writerState,
            epochId,
            task == null ? taskId : task.taskAttemptId(),
            task == null ? 0 : task.stageId(),
            task == null ? 0 : task.partitionId(),
            task == null ? 0 : task.attemptNumber(),
            task);
    this.allocator =
        ArrowUtils.rootAllocator().newChildAllocator("sparkds writer", 0, Long.MAX_VALUE);
    this.root = VectorSchemaRoot.create(Schemas.toArrow(schema), allocator);
    this.arrow = ArrowWriter.create(root);
  }

  @Override
  public void write(InternalRow row) {
    arrow.write(row);
    rows++;
    if (rows >= maxRecords || (maxBytes != Long.MAX_VALUE && SparkLineApi.sizeInBytes(arrow) >= maxBytes)) {
      flush();
    }
  }

  private void flush() {
    if (rows == 0) {
      return;
    }
    if (task != null) {
      task.killTaskIfInterrupted();
    }
    arrow.finish();
    Native.write(dataWriter, describe(root));
    arrow.reset();
    rows = 0;
  }

  /** The root's buffers in the layout of Native.write: see Native. */
  static long[] describe(VectorSchemaRoot root) {
    List<Long> out = new ArrayList<>();
    out.add((long) root.getRowCount());
    for (FieldVector vector : root.getFieldVectors()) {
      describe(vector, out);
    }
    long[] result = new long[out.size()];
    for (int i = 0; i < result.length; i++) {
      result[i] = out.get(i);
    }
    return result;
  }

  private static void describe(FieldVector vector, List<Long> out) {
    out.add((long) vector.getValueCount());
    out.add((long) vector.getNullCount());
    List<ArrowBuf> buffers = vector.getFieldBuffers();
    out.add((long) buffers.size());
    for (ArrowBuf buffer : buffers) {
      // getFieldBuffers sets each writer index to the bytes that the values use.
      out.add(buffer.memoryAddress());
      out.add(buffer.writerIndex());
    }
    for (FieldVector child : vector.getChildrenFromFields()) {
      describe(child, out);
    }
  }

  @Override
  public WriterCommitMessage commit() {
    flush();
    return new NativeCommitMessage(Native.commitDataWriter(dataWriter));
  }

  @Override
  public void abort() {
    Native.abortDataWriter(dataWriter);
  }

  @Override
  public void close() {
    if (dataWriter != 0) {
      long closing = dataWriter;
      dataWriter = 0;
      try {
        Native.closeDataWriter(closing);
      } finally {
        root.close();
        allocator.close();
      }
    }
  }
}
