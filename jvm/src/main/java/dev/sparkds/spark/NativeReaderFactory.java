package dev.sparkds.spark;

import java.util.Iterator;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Opens the read of a partition on an executor: columnar, over the library's buffers. */
final class NativeReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;

  private final ColumnVectors.Mode mode;

  NativeReaderFactory(ColumnVectors.Mode mode) {
    this.mode = mode;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new NativePartitionReader((NativeInputPartition) partition, mode);
  }

  /** Rows, for the plans that ask for them: the rows of the columnar batches. */
  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    NativePartitionReader batches = new NativePartitionReader((NativeInputPartition) partition, mode);
    return new PartitionReader<InternalRow>() {
      private Iterator<InternalRow> rows;
      private InternalRow row;

      @Override
      public boolean next() throws java.io.IOException {
        while (rows == null || !rows.hasNext()) {
          if (!batches.next()) {
            return false;
          }
          rows = batches.get().rowIterator();
        }
        row = rows.next();
        return true;
      }

      @Override
      public InternalRow get() {
        return row;
      }

      @Override
      public void close() {
        batches.close();
      }
    };
  }
}
