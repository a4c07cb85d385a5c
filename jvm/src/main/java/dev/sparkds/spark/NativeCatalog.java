package dev.sparkds.spark;

import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A catalog whose tables are the native data sources:
 * {@code spark.sql.catalog.ds=dev.sparkds.spark.NativeCatalog}, then
 * {@code SELECT * FROM ds.c_range}. The catalog's options
 * ({@code spark.sql.catalog.ds.end=100}) are the sources' options.
 */
public class NativeCatalog implements TableCatalog {
  private String name;
  private Map<String, String> options;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    SparkLine.check();
    this.name = name;
    this.options = options.asCaseSensitiveMap();
  }

  @Override
  public String name() {
    return name;
  }

  /** The catalog does not list the libraries it could load: it finds them by name. */
  @Override
  public Identifier[] listTables(String[] namespace) {
    return new Identifier[0];
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    if (ident.namespace().length > 0) {
      throw new NoSuchTableException(ident);
    }
    SourceOptions sourceOptions = SourceOptions.named(ident.name(), options);
    return NativeTable.open(LibraryRef.resolve(sourceOptions.name()), sourceOptions, null);
  }

  private UnsupportedOperationException readOnly(String what) {
    return new UnsupportedOperationException(
        "catalog `"
            + name
            + "` lists the native data sources that the application can load: it cannot "
            + what
            + ". Install or add the library instead.");
  }

  @SuppressWarnings("deprecation")
  @Override
  public Table createTable(
      Identifier ident,
      StructType schema,
      org.apache.spark.sql.connector.expressions.Transform[] partitions,
      Map<String, String> properties) {
    throw readOnly("create tables");
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw readOnly("alter tables");
  }

  @Override
  public boolean dropTable(Identifier ident) {
    throw readOnly("drop tables");
  }

  @Override
  public void renameTable(Identifier oldIdent, Identifier newIdent) {
    throw readOnly("rename tables");
  }
}
