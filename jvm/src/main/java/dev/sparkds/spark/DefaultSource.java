package dev.sparkds.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The format {@code native}: {@code spark.read.format("native").option("source", "c_range")}.
 * The option {@code source} names the native data source; the other options go to its create.
 */
public class DefaultSource implements TableProvider, DataSourceRegister {
  @Override
  public String shortName() {
    return "native";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    SparkLine.check();
    SourceOptions sourceOptions = SourceOptions.of(options.asCaseSensitiveMap());
    return librarySchema(LibraryRef.resolve(sourceOptions.name()), sourceOptions);
  }

  /** The schema that the library declares; an error naming the fix when it declares none. */
  static StructType librarySchema(LibraryRef library, SourceOptions options) {
    try (NativeSource source = NativeSource.open(library, options)) {
      StructType schema = source.schema();
      if (schema == null) {
        throw new NativeDataSourceException(
            "NATIVE_DATA_SOURCE_SCHEMA_REQUIRED",
            "data source `"
                + options.name()
                + "` has no schema function, so the query must give the schema, as in "
                + ".schema(\"id long, label string\") or CREATE TABLE t (id long) USING native.");
      }
      return schema;
    }
  }

  /** The user gives the schema of sources that have none, and may narrow the others'. */
  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(
      StructType schema, Transform[] partitioning, Map<String, String> properties) {
    SparkLine.check();
    SourceOptions options = SourceOptions.of(properties);
    return NativeTable.open(LibraryRef.resolve(options.name()), options, schema);
  }
}
