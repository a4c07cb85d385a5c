package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Offers the query's conditions, LIMIT and columns to the library (push_filters of
 * spark_datasource_filters.h, push_limit, prune_columns), in the header's order: Spark pushes
 * predicates first, then columns, then the limit.
 *
 * <p>Spark asks whether a pushdown was accepted before it plans the read, so the builder asks a
 * reader of its own, which it closes in build(); the scan replays what was offered and accepted
 * on the reader that plans the partitions.
 */
final class NativeScanBuilder
    implements SupportsPushDownV2Filters, SupportsPushDownLimit, SupportsPushDownRequiredColumns {
  private final NativeTable table;
  private final SourceOptions options;
  private NativeSource probeSource;
  private long probeReader;
  private Integer limit;
  private StructType pruned;
  private PushedFilters filters = PushedFilters.NONE;

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

  /**
   * Offers the predicates that the encoding can express to the library, once, on a fresh probe
   * reader (push_filters comes before every other pushdown), and returns the others and the
   * ones it did not accept, which Spark evaluates after the scan.
   */
  @Override
  public Predicate[] pushPredicates(Predicate[] predicates) {
    if (!table.has(NativeSource.BATCH_READ) || !options.pushDownPredicate()) {
      return predicates;
    }
    // The header allows one push_filters per reader, before push_limit: should Spark offer
    // predicates again, a new probe reader hears them, and no earlier limit stands.
    closeProbe();
    limit = null;
    List<Predicate> offered = new ArrayList<>();
    List<byte[]> encoded = new ArrayList<>();
    for (Predicate predicate : predicates) {
      byte[] bytes = FilterEncoder.encode(predicate);
      if (bytes != null) {
        offered.add(predicate);
        encoded.add(bytes);
      }
    }
    byte[] answers = null;
    byte[] message = null;
    if (!offered.isEmpty()) {
      message = FilterEncoder.message(encoded);
      try {
        answers = Native.pushFilters(probe(), message);
      } catch (RuntimeException e) {
        closeProbe();
        throw e;
      }
    }
    filters =
        PushedFilters.of(
            options.name(),
            predicates,
            offered,
            encoded,
            message,
            answers,
            options.acceptedFilters());
    return filters.postScan();
  }

  @Override
  public Predicate[] pushedPredicates() {
    return filters.accepted();
  }

  @Override
  public boolean pushLimit(int limit) {
    if (!table.has(NativeSource.BATCH_READ)) {
      return false;
    }
    // A limit applied before Spark's own filter would drop rows that pass it.
    if (!filters.allAccepted()) {
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
    Set<String> kept = new HashSet<>();
    for (StructField field : required.fields()) {
      topLevel = topLevel.add(full.apply(field.name()));
      kept.add(field.name());
    }
    // The executors check the accepted predicates on every row: the columns they name are
    // read too, and Spark projects them away after the scan.
    for (String column : filters.columnsToCheck()) {
      if (kept.add(column)) {
        topLevel = topLevel.add(full.apply(column));
      }
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
    return new NativeScan(table, options, filters, limit, pruned);
  }
}
