package dev.sparkds.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Tuple2;

/**
 * A catalog whose tables are the native data sources:
 * {@code spark.sql.catalog.ds=dev.sparkds.spark.NativeCatalog}, then
 * {@code SELECT * FROM ds.c_range}. The catalog's options
 * ({@code spark.sql.catalog.ds.end=100}) are the sources' options.
 *
 * <p>A catalog whose options in the cluster's configuration (the SparkConf that the
 * application or the Spark Connect server started with) hold a secret takes all its options
 * from there: see {@link #options}.
 */
public class NativeCatalog implements TableCatalog {
  private String name;
  private Map<String, String> options;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    SparkLine.check();
    this.name = name;
    this.options = options(name, options.asCaseSensitiveMap(), clusterOptions(name));
  }

  /**
   * The options of catalog {@code name} in the cluster's configuration: the SparkConf, which
   * a session cannot change (a session's SET changes its own SQL configuration only).
   */
  private static Map<String, String> clusterOptions(String name) {
    LinkedHashMap<String, String> cluster = new LinkedHashMap<>();
    SparkEnv env = SparkEnv.get();
    if (env == null) {
      return cluster;
    }
    for (Tuple2<String, String> entry : env.conf().getAllWithPrefix(prefix(name))) {
      cluster.put(entry._1(), entry._2());
    }
    return cluster;
  }

  private static String prefix(String name) {
    return "spark.sql.catalog." + name + ".";
  }

  /**
   * The catalog's options, from what Spark gives {@link #initialize} ({@code session}: the
   * session's settings over the SparkConf's) and the SparkConf's own ({@code cluster}).
   *
   * <p>Spark loads a catalog once per session, from that session's settings, and every Spark
   * Connect session is a new one: a session that runs {@code SET
   * spark.sql.catalog.<name>.url=...} before its first use of the catalog would have the
   * cluster's password sent to a host of its choosing (or, with {@code sslmode}, without TLS).
   * So when the cluster's options hold a secret (a key that Spark redacts: {@code password},
   * {@code url}, {@code token}...), all of the catalog's options come from the cluster, and a
   * session value that differs from the cluster's, or that the cluster lacks, is refused with
   * NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION naming its keys (never the values). The plugin's
   * own options ({@code pushDownPredicate}, {@code acceptedFilters}) stay the session's: they
   * never reach the library. A catalog without a secret in the cluster's options takes the
   * session's, as before.
   */
  static Map<String, String> options(
      String name, Map<String, String> session, Map<String, String> cluster) {
    if (cluster.keySet().stream().noneMatch(Redaction::isSecretKey)) {
      return session;
    }
    LinkedHashMap<String, String> options = new LinkedHashMap<>(cluster);
    List<String> refused = new ArrayList<>();
    for (Map.Entry<String, String> entry : session.entrySet()) {
      String key = entry.getKey();
      String value = entry.getValue();
      boolean same =
          cluster.entrySet().stream()
              .anyMatch(own -> own.getKey().equalsIgnoreCase(key) && own.getValue().equals(value));
      if (same) {
        continue;
      }
      if (SourceOptions.isPluginOption(key)) {
        options.keySet().removeIf(own -> own.equalsIgnoreCase(key));
        options.put(key, value);
      } else {
        refused.add(prefix(name) + key);
      }
    }
    if (!refused.isEmpty()) {
      refused.sort(String.CASE_INSENSITIVE_ORDER);
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
          "catalog `"
              + name
              + "` holds credentials in the cluster's configuration (SparkConf), so its options "
              + "come from there alone, and this session sets "
              + String.join(", ", refused)
              + " to a value of its own: set "
              + (refused.size() == 1 ? "it" : "them")
              + " where the cluster is configured (spark-defaults.conf, or --conf of the "
              + "application or of the Spark Connect server), unset "
              + (refused.size() == 1 ? "it" : "them")
              + " in this session, or read with spark.read.format(\"native\") and options of "
              + "your own.");
    }
    return options;
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
