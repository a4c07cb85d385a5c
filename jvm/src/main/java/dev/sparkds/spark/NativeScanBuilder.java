package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Offers the query's LIMIT and columns to the library (push_limit, prune_columns).
 *
 * <p>Spark asks whether a pushdown was accepted before it plans the read, so the builder asks a
 * reader of its own, which it closes in build(); the scan replays what was accepted on the
 * reader that plans the partitions.
 */
final class NativeScanBuilder implements SupportsPushDownLimit, SupportsPushDownRequiredColumns {
  private final NativeTable table;
  private final SourceOptions options;
  private NativeSource probeSource;
  private long probeReader;
  private Integer limit;
  private StructType pruned;

  NativeScanBuilder(NativeTable table, SourceOptions options) {
    this.table = table;
    this.options = options;
  }

  private long probe() {
    if (probeSource == null) {
      NativeSource source = NativeSource.open(table.library, options);
      try {
        probeReader = Native.createReader(source.handle, Schemas.toBytes(table.schema()));
      } catch (RuntimeException e) {
        source.close();
        throw e;
      }
      probeSource = source;
    }
    return probeReader;
  }

  private void closeProbe() {
    if (probeSource != null) {
      try {
        Native.closeReader(probeReader);
      } finally {
        probeSource.close();
        probeSource = null;
      }
    }
  }

  @Override
  public boolean pushLimit(int limit) {
    if (!table.has(NativeSource.BATCH_READ)) {
      return false;
    }
    try {
      boolean accepted = Native.pushLimit(probe(), limit);
      if (accepted) {
        this.limit = limit;
      }
      return accepted;
    } catch (RuntimeException e) {
      closeProbe();
      throw e;
    }
  }

  @Override
  public void pruneColumns(StructType required) {
    if (!table.has(NativeSource.BATCH_READ)) {
      return;
    }
    // The header's prune_columns takes top-level fields of the reader's schema: Spark may
    // also prune inside structs, which a library is not asked to do.
    StructType full = table.schema();
    StructType topLevel = new StructType();
    for (StructField field : required.fields()) {
      topLevel = topLevel.add(full.apply(field.name()));
    }
    if (topLevel.equals(full)) {
      return;
    }
    try {
      if (Native.pruneColumns(probe(), Schemas.toBytes(topLevel))) {
        pruned = topLevel;
      }
    } catch (RuntimeException e) {
      closeProbe();
      throw e;
    }
  }

  @Override
  public Scan build() {
    closeProbe();
    return new NativeScan(table, options, limit, pruned);
  }
}
