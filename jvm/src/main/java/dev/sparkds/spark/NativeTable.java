package dev.sparkds.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A native data source with the options of a query: what Spark reads from and writes to. */
public final class NativeTable implements SupportsRead, SupportsWrite {
  final LibraryRef library;
  final SourceOptions options;
  private final StructType schema;
  final long capabilityBits;

  private NativeTable(
      LibraryRef library, SourceOptions options, StructType schema, long capabilityBits) {
    this.library = library;
    this.options = options;
    this.schema = schema;
    this.capabilityBits = capabilityBits;
  }

  /**
   * Asks the library for its capabilities, and for its schema when the query gives none.
   */
  static NativeTable open(LibraryRef library, SourceOptions options, StructType schema) {
    try (NativeSource source = NativeSource.open(library, options)) {
      long bits = source.capabilities();
      StructType resolved = schema;
      if (resolved == null) {
        resolved = source.schema();
        if (resolved == null) {
          throw new NativeDataSourceException(
              "NATIVE_DATA_SOURCE_SCHEMA_REQUIRED",
              "data source `"
                  + options.name()
                  + "` has no schema function, so the query must give the schema.");
        }
      }
      return new NativeTable(library, options, resolved, bits);
    }
  }

  @Override
  public String name() {
    return "native." + options.name();
  }

  // Table.schema() is deprecated for columns(), which Spark 4.3 derives from it.
  @SuppressWarnings("deprecation")
  @Override
  public StructType schema() {
    return schema;
  }

  /**
   * The options, shown by SHOW TBLPROPERTIES, DESCRIBE TABLE EXTENDED and plans: a secret
   * value is {@code *********(redacted)}, as Spark shows its own sources' (see Redaction).
   */
  @Override
  public Map<String, String> properties() {
    return Redaction.redact(options.asMap());
  }

  @Override
  public Set<TableCapability> capabilities() {
    Set<TableCapability> set = EnumSet.noneOf(TableCapability.class);
    if ((capabilityBits & NativeSource.BATCH_READ) != 0) {
      set.add(TableCapability.BATCH_READ);
    }
    if ((capabilityBits & NativeSource.MICRO_BATCH_READ) != 0) {
      set.add(TableCapability.MICRO_BATCH_READ);
    }
    if ((capabilityBits & NativeSource.BATCH_WRITE) != 0) {
      set.add(TableCapability.BATCH_WRITE);
    }
    if ((capabilityBits & NativeSource.STREAMING_WRITE) != 0) {
      set.add(TableCapability.STREAMING_WRITE);
    }
    if ((capabilityBits & NativeSource.TRUNCATE) != 0) {
      set.add(TableCapability.TRUNCATE);
    }
    return set;
  }

  boolean has(long bit) {
    return (capabilityBits & bit) != 0;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap scanOptions) {
    return new NativeScanBuilder(this, options.with(scanOptions.asCaseSensitiveMap()));
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new NativeWriteBuilder(this, options.with(info.options().asCaseSensitiveMap()), info);
  }
}
