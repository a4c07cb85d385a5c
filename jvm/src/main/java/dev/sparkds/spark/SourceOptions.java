package dev.sparkds.spark;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The options that reach the library's create: the user's, as written (case kept), without
 * the plugin's own option {@code source}, which names the data source.
 */
public final class SourceOptions implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The option that names the native data source: {@code .option("source", "c_range")}. */
  public static final String SOURCE = "source";

  private final String name;
  private final LinkedHashMap<String, String> options;

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
    for (Map.Entry<String, String> entry : caseSensitive.entrySet()) {
      if (entry.getKey().equalsIgnoreCase(SOURCE)) {
        name = entry.getValue();
      } else {
        rest.put(entry.getKey(), entry.getValue());
      }
    }
    if (name == null || name.trim().isEmpty()) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_MISSING_SOURCE",
          "the format `native` needs the option `source`, the name of the native data source, "
              + "as in .option(\"source\", \"c_range\") or OPTIONS (source 'c_range').");
    }
    return new SourceOptions(name.trim().toLowerCase(Locale.ROOT), rest);
  }

  /** The same options for data source {@code name} (the catalog names it by its table). */
  public static SourceOptions named(String name, Map<String, String> options) {
    LinkedHashMap<String, String> copy = new LinkedHashMap<>(options);
    copy.keySet().removeIf(key -> key.equalsIgnoreCase(SOURCE));
    return new SourceOptions(name.toLowerCase(Locale.ROOT), copy);
  }

  /** The options with {@code other}'s added (a write's options over a table's). */
  public SourceOptions with(Map<String, String> other) {
    LinkedHashMap<String, String> merged = new LinkedHashMap<>(options);
    for (Map.Entry<String, String> entry : other.entrySet()) {
      if (entry.getKey().equalsIgnoreCase(SOURCE)) {
        continue;
      }
      merged.keySet().removeIf(key -> key.equalsIgnoreCase(entry.getKey()));
      merged.put(entry.getKey(), entry.getValue());
    }
    return new SourceOptions(name, merged);
  }

  public String name() {
    return name;
  }

  public Map<String, String> asMap() {
    LinkedHashMap<String, String> all = new LinkedHashMap<>();
    all.put(SOURCE, name);
    all.putAll(options);
    return all;
  }

  String[] keys() {
    return options.keySet().toArray(new String[0]);
  }

  String[] values() {
    return options.values().toArray(new String[0]);
  }
}
