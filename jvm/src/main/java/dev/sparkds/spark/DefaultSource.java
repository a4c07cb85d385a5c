package dev.sparkds.spark;

import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The format {@code native}: {@code spark.read.format("native").option("source", "c_range")}.
 * The option {@code source} names the native data source; the other options go to its create.
 */
public class DefaultSource implements TableProvider, DataSourceRegister, RelationProvider {
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

  /**
   * Data Source V1, which Spark 3.5 uses for the tables of its session catalog (CREATE TABLE ...
   * USING native) where Spark 4 uses the classes above: the plugin has no V1 relation, so it
   * names what works instead of Spark's "not a valid Spark SQL Data Source".
   */
  @Override
  public BaseRelation createRelation(
      SQLContext sqlContext, scala.collection.immutable.Map<String, String> parameters) {
    throw new NativeDataSourceException(
        "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
        "Spark "
            + SparkContext.getOrCreate().version()
            + " reads and writes the tables of its session catalog (CREATE TABLE ... USING"
            + " native) through Data Source V1, which the plugin does not implement (Spark 4.0"
            + " and later use its Data Source V2 classes): use the catalog"
            + " dev.sparkds.spark.NativeCatalog (SELECT * FROM ds.<source>), or"
            + " spark.read and df.write with format(\"native\").");
  }
}
