package dev.sparkds.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.ReferenceManager;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Turns the JNI library's description of a batch (see Native.next) into a ColumnarBatch over
 * the same memory: nothing is copied. Columns of flat types get a NativeColumnVector; the
 * others are loaded into Arrow Java vectors whose buffers wrap the addresses with
 * ReferenceManager.NO_OP (the library, not Java, frees them), read by ArrowColumnVector.
 */
final class BatchLoader implements AutoCloseable {
  private final List<Field> fields;
  private final DataType[] types;
  private final boolean[] flat;
  private final int[] nodeCounts;
  private final BufferAllocator allocator;
  private final VectorSchemaRoot root;
  private final VectorLoader vectorLoader;

  BatchLoader(Schema schema, ColumnVectors.Mode mode) {
    this.fields = schema.getFields();
    int n = fields.size();
    this.types = new DataType[n];
    this.flat = new boolean[n];
    this.nodeCounts = new int[n];
    List<Field> nested = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Field field = fields.get(i);
      types[i] = ArrowUtils.fromArrowField(field);
      nodeCounts[i] = countNodes(field);
      flat[i] = mode == ColumnVectors.Mode.NATIVE && NativeColumnVector.supports(types[i]);
      if (!flat[i]) {
        nested.add(field);
      }
    }
    if (nested.isEmpty()) {
      allocator = null;
      root = null;
      vectorLoader = null;
    } else {
      // Arrow Java allocates a validity buffer of its own for a column without nulls.
      allocator =
          ArrowUtils.rootAllocator().newChildAllocator("sparkds reader", 0, Long.MAX_VALUE);
      root = VectorSchemaRoot.create(new Schema(nested), allocator);
      vectorLoader = new VectorLoader(root);
    }
  }

  private static int countNodes(Field field) {
    int count = 1;
    for (Field child : field.getChildren()) {
      count += countNodes(child);
    }
    return count;
  }

  ColumnarBatch load(long[] description) {
    int rows = Math.toIntExact(description[0]);
    int position = 1;
    ColumnVector[] columns = new ColumnVector[fields.size()];
    List<ArrowFieldNode> nodes = root == null ? null : new ArrayList<>();
    List<ArrowBuf> buffers = root == null ? null : new ArrayList<>();
    for (int i = 0; i < columns.length; i++) {
      if (flat[i]) {
        long length = description[position];
        long nullCount = description[position + 1];
        int bufferCount = (int) description[position + 2];
        long[] addresses = new long[bufferCount];
        for (int b = 0; b < bufferCount; b++) {
          addresses[b] = description[position + 3 + 2 * b];
        }
        position += 3 + 2 * bufferCount;
        columns[i] = new NativeColumnVector(types[i], length, nullCount, addresses);
      } else {
        for (int node = 0; node < nodeCounts[i]; node++) {
          long length = description[position];
          long nullCount = description[position + 1];
          int bufferCount = (int) description[position + 2];
          nodes.add(new ArrowFieldNode(length, nullCount));
          for (int b = 0; b < bufferCount; b++) {
            long address = description[position + 3 + 2 * b];
            long size = description[position + 4 + 2 * b];
            buffers.add(new ArrowBuf(ReferenceManager.NO_OP, null, size, address));
          }
          position += 3 + 2 * bufferCount;
        }
      }
    }
    if (root != null) {
      try (ArrowRecordBatch batch = new ArrowRecordBatch(rows, nodes, buffers)) {
        vectorLoader.load(batch);
      }
      List<FieldVector> vectors = root.getFieldVectors();
      int next = 0;
      for (int i = 0; i < columns.length; i++) {
        if (!flat[i]) {
          columns[i] = new LoadedVector(vectors.get(next++));
        }
      }
    }
    return new ColumnarBatch(columns, rows);
  }

  /**
   * A column of the root, which every batch reloads: Spark may close a batch's columns when it
   * is done with the batch, and ArrowColumnVector.close() closes its vector, which drops a
   * struct's or a list's child vectors, so the next batch would not load. The loader closes
   * the root itself.
   */
  private static final class LoadedVector extends ArrowColumnVector {
    LoadedVector(FieldVector vector) {
      super(vector);
    }

    @Override
    public void close() {}
  }

  @Override
  public void close() {
    if (root != null) {
      root.close();
      allocator.close();
    }
  }
}
