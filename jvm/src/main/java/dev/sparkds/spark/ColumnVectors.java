package dev.sparkds.spark;

import java.util.Locale;
import org.apache.spark.sql.SparkSession;

/** How reads wrap the library's buffers in Spark's ColumnVectors. */
final class ColumnVectors {
  /**
   * {@code native} (the default): the plugin's own vectors for the columns of flat types,
   * which read the buffers with Platform's unchecked loads, and Spark's ArrowColumnVector for
   * arrays, structs and maps; {@code arrow}: ArrowColumnVector for every column.
   */
  static final String CONF = "spark.sparkds.columnVectors";

  enum Mode {
    NATIVE,
    ARROW
  }

  private ColumnVectors() {}

  static Mode mode() {
    String value = "native";
    SparkSession session = SparkSession.getActiveSession().getOrElse(() -> null);
    if (session != null) {
      value = session.conf().get(CONF, "native");
    }
    switch (value.toLowerCase(Locale.ROOT)) {
      case "native":
        return Mode.NATIVE;
      case "arrow":
        return Mode.ARROW;
      default:
        throw new NativeDataSourceException(
            "NATIVE_DATA_SOURCE_INVALID_CONF",
            CONF + " must be `native` or `arrow`, got `" + value + "`.");
    }
  }
}
