package dev.sparkds.spark;

import java.util.Collections;
import java.util.Map;
import org.apache.spark.SparkThrowable;

/**
 * A failure of a native data source, with the error class of the specification (such as
 * NATIVE_DATA_SOURCE_ERROR or INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED). The JNI library
 * throws it with this constructor; the plugin's Java code throws it too.
 */
public class NativeDataSourceException extends RuntimeException implements SparkThrowable {
  private static final long serialVersionUID = 1L;

  /** The book's section of the error classes (a test holds it equal to the SDK's BOOK_URL). */
  static final String ERRORS_URL =
      "https://sparkds.github.io/spark-datasource-template/jvm/errors.html";

  private final String errorClass;
  private final String detail;

  public NativeDataSourceException(String errorClass, String message) {
    super("[" + errorClass + "] " + message + " See " + link(errorClass));
    this.errorClass = errorClass;
    this.detail = message;
  }

  /**
   * The address of the class's row in the book: the class in lower case, `.` and `_` as `-`
   * (INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED is #invalid-native-data-source-library-replaced).
   */
  public static String link(String errorClass) {
    return ERRORS_URL + "#" + errorClass.toLowerCase(java.util.Locale.ROOT).replaceAll("[._]", "-");
  }

  // Not @Override: Spark 3.5's SparkThrowable has getErrorClass only.
  public String getCondition() {
    return errorClass;
  }

  @SuppressWarnings("deprecation")
  @Override
  public String getErrorClass() {
    return errorClass;
  }

  /**
   * The SQLSTATE of the class: Spark's error-class registry does not know these classes, so
   * the default lookup would find nothing. 39000 is "external routine invocation exception";
   * a library that cannot be found or loaded is 42K0E-like in Spark, but a single state keeps
   * callers' handling simple.
   */
  @Override
  public String getSqlState() {
    if (errorClass.equals("NATIVE_DATA_SOURCE_ERROR")) {
      return "39000";
    }
    return "42000";
  }

  /** The message without its class, as the library or the plugin wrote it. */
  @Override
  public Map<String, String> getMessageParameters() {
    return Collections.singletonMap("message", detail);
  }

  // Not @Override: not in Spark 3.5's SparkThrowable.
  public String getDefaultMessageTemplate() {
    return "<message>";
  }
}
