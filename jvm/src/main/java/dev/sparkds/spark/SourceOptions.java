package dev.sparkds.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.TableCatalog;

/**
 * The options that reach the library's create: the user's, as written (case kept), without
 * the plugin's own option {@code source}, which names the data source.
 */
public final class SourceOptions implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The option that names the native data source: {@code .option("source", "c_range")}. */
  public static final String SOURCE = "source";

  /**
   * The plugin's option that turns filter pushdown off for a read, as for Spark's JDBC source:
   * {@code .option("pushDownPredicate", "false")} offers no filter to the library, and Spark
   * evaluates them all. It does not reach the library.
   */
  public static final String PUSH_DOWN_PREDICATE = "pushDownPredicate";

  /**
   * The plugin's option that says what becomes of the filters a library accepted (rule 31: the
   * library returns only rows where they are TRUE): {@code check} (the default: each executor
   * evaluates them on every row the library returns, and a row where one is not TRUE fails the
   * task with INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE), {@code reevaluate} (Spark keeps
   * them after the scan and evaluates them again, as it does the filters the library refused:
   * rows that break them are dropped, and no LIMIT is pushed) or {@code trust} (neither: the
   * library's rows are the query's). It does not reach the library.
   */
  public static final String ACCEPTED_FILTERS = "acceptedFilters";

  /** What becomes of the filters a library accepted: see {@link #ACCEPTED_FILTERS}. */
  enum AcceptedFilters {
    CHECK,
    REEVALUATE,
    TRUST;

    /** The option's value: check, reevaluate or trust. */
    String value() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** The plugin's options: they configure the plugin, and the library never sees them. */
  private static final Set<String> PLUGIN_OPTIONS =
      Set.of(
          PUSH_DOWN_PREDICATE.toLowerCase(Locale.ROOT), ACCEPTED_FILTERS.toLowerCase(Locale.ROOT));

  private final String name;
  private final LinkedHashMap<String, String> options;

  /** Whether {@code key} (any case) is an option of the plugin's, which the library never sees. */
  static boolean isPluginOption(String key) {
    return PLUGIN_OPTIONS.contains(key.toLowerCase(Locale.ROOT));
  }

  private SourceOptions(String name, LinkedHashMap<String, String> options) {
    this.name = name;
    this.options = options;
  }

  /**
   * The data source named by the option {@code source} (any case) and the other options;
   * throws NATIVE_DATA_SOURCE_MISSING_SOURCE when no option names it.
   */
  public static SourceOptions of(Map<String, String> caseSensitive) {
    String name = null;
    LinkedHashMap<String, String> rest = new LinkedHashMap<>();
    for (Map.Entry<String, String> entry : withoutTableProperties(caseSensitive).entrySet()) {
      if (entry.getKey().equalsIgnoreCase(SOURCE)) {
        name = entry.getValue();
      } else {
        rest.put(entry.getKey(), entry.getValue());
      }
    }
    checkPushDownPredicate(rest);
    acceptedFilters(rest);
    if (name == null || name.trim().isEmpty()) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_MISSING_SOURCE",
          "the format `native` needs the option `source`, the name of the native data source, "
              + "as in .option(\"source\", \"c_range\") or OPTIONS (source 'c_range').");
    }
    return new SourceOptions(name.trim().toLowerCase(Locale.ROOT), rest);
  }

  /**
   * The options of a table of the session catalog (CREATE TABLE ... USING native OPTIONS
   * (...)) come with the catalog's reserved properties, such as {@code owner}, and, in some
   * paths, with the prefix {@code option.}: the library gets the options alone.
   */
  static Map<String, String> withoutTableProperties(Map<String, String> properties) {
    LinkedHashMap<String, String> options = new LinkedHashMap<>();
    for (Map.Entry<String, String> entry : properties.entrySet()) {
      String key = entry.getKey();
      if (RESERVED.contains(key.toLowerCase(Locale.ROOT))) {
        continue;
      }
      if (key.startsWith(TableCatalog.OPTION_PREFIX)) {
        key = key.substring(TableCatalog.OPTION_PREFIX.length());
      }
      options.put(key, entry.getValue());
    }
    return options;
  }

  private static final Set<String> RESERVED =
      Set.of(
          TableCatalog.PROP_LOCATION,
          TableCatalog.PROP_IS_MANAGED_LOCATION,
          TableCatalog.PROP_EXTERNAL,
          // PROP_TABLE_TYPE and PROP_COLLATION, which Spark 3.5's TableCatalog lacks.
          "table_type",
          TableCatalog.PROP_COMMENT,
          "collation",
          TableCatalog.PROP_PROVIDER,
          TableCatalog.PROP_OWNER);

  /** The same options for data source {@code name} (the catalog names it by its table). */
  public static SourceOptions named(String name, Map<String, String> options) {
    LinkedHashMap<String, String> copy = new LinkedHashMap<>(options);
    copy.keySet().removeIf(key -> key.equalsIgnoreCase(SOURCE));
    return new SourceOptions(name.toLowerCase(Locale.ROOT), copy);
  }

  /**
   * The options with {@code other}'s added: a query's options (a read's or a write's) over a
   * table's. A table whose options hold a secret (a password, a token, a URL that may carry
   * either) takes no option from a query but the plugin's own: one more option could send its
   * credentials elsewhere (another {@code url} or host, no TLS), and the query's user may not be
   * the one who configured the table. Throws NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION, naming
   * the keys and never their values.
   */
  public SourceOptions with(Map<String, String> other) {
    LinkedHashMap<String, String> merged = new LinkedHashMap<>(options);
    List<String> refused = new ArrayList<>();
    boolean credentials = options.keySet().stream().anyMatch(Redaction::isSecretKey);
    for (Map.Entry<String, String> entry : other.entrySet()) {
      String key = entry.getKey();
      if (key.equalsIgnoreCase(SOURCE)) {
        continue;
      }
      boolean same =
          options.entrySet().stream()
              .anyMatch(
                  own -> own.getKey().equalsIgnoreCase(key) && own.getValue().equals(entry.getValue()));
      if (credentials && !same && !PLUGIN_OPTIONS.contains(key.toLowerCase(Locale.ROOT))) {
        refused.add(key);
        continue;
      }
      merged.keySet().removeIf(own -> own.equalsIgnoreCase(key));
      merged.put(key, entry.getValue());
    }
    if (!refused.isEmpty()) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_OPERATION",
          "the table of data source `"
              + name
              + "` holds credentials in its options, so a query may not add or change its "
              + "options, and this one gives "
              + String.join(", ", refused)
              + ": set them where the table is configured (the catalog's options, or CREATE "
              + "TABLE ... OPTIONS), or read with spark.read.format(\"native\") and options of "
              + "your own.");
    }
    return new SourceOptions(name, merged);
  }

  public String name() {
    return name;
  }

  /** Whether filters are offered to the library: the option {@code pushDownPredicate}. */
  boolean pushDownPredicate() {
    for (Map.Entry<String, String> entry : options.entrySet()) {
      if (entry.getKey().equalsIgnoreCase(PUSH_DOWN_PREDICATE)) {
        return Boolean.parseBoolean(entry.getValue().trim());
      }
    }
    return true;
  }

  /** What becomes of the filters the library accepts: the option {@code acceptedFilters}. */
  AcceptedFilters acceptedFilters() {
    return acceptedFilters(options);
  }

  /**
   * The option {@code acceptedFilters} of {@code options} (any case), {@code check} without
   * it; an IllegalArgumentException names a value that is none of the three.
   */
  private static AcceptedFilters acceptedFilters(Map<String, String> options) {
    for (Map.Entry<String, String> entry : options.entrySet()) {
      if (!entry.getKey().equalsIgnoreCase(ACCEPTED_FILTERS)) {
        continue;
      }
      String value = entry.getValue().trim();
      for (AcceptedFilters mode : AcceptedFilters.values()) {
        if (mode.value().equalsIgnoreCase(value)) {
          return mode;
        }
      }
      throw new IllegalArgumentException(
          "the option `"
              + ACCEPTED_FILTERS
              + "` must be `check`, `reevaluate` or `trust`, got `"
              + value
              + "`");
    }
    return AcceptedFilters.CHECK;
  }

  private static void checkPushDownPredicate(Map<String, String> options) {
    for (Map.Entry<String, String> entry : options.entrySet()) {
      String value = entry.getValue().trim();
      if (entry.getKey().equalsIgnoreCase(PUSH_DOWN_PREDICATE)
          && !value.equalsIgnoreCase("true")
          && !value.equalsIgnoreCase("false")) {
        throw new IllegalArgumentException(
            "the option `" + PUSH_DOWN_PREDICATE + "` must be `true` or `false`, got `"
                + value + "`");
      }
    }
  }

  public Map<String, String> asMap() {
    LinkedHashMap<String, String> all = new LinkedHashMap<>();
    all.put(SOURCE, name);
    all.putAll(options);
    return all;
  }

  /** The keys that reach the library's create: all but the plugin's own. */
  String[] keys() {
    return libraryOptions().keySet().toArray(new String[0]);
  }

  String[] values() {
    return libraryOptions().values().toArray(new String[0]);
  }

  private LinkedHashMap<String, String> libraryOptions() {
    LinkedHashMap<String, String> library = new LinkedHashMap<>(options);
    library.keySet().removeIf(key -> PLUGIN_OPTIONS.contains(key.toLowerCase(Locale.ROOT)));
    return library;
  }
}
