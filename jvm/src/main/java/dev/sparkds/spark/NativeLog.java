package dev.sparkds.spark;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The log of native data source libraries (SparkDsHost.log), in Spark's log. */
public final class NativeLog {
  private NativeLog() {}

  /**
   * Writes {@code message} at {@code level} (SPARK_DS_LOG_ERROR = 1 ... SPARK_DS_LOG_TRACE = 5)
   * to the logger {@code dev.sparkds.spark.native.<library>}. Called from any thread.
   */
  public static void log(String library, int level, String message) {
    Logger logger = LoggerFactory.getLogger("dev.sparkds.spark.native." + library);
    // Levels beyond the header's are logged as the nearest one it has.
    if (level <= 1) {
      logger.error(message);
    } else if (level == 2) {
      logger.warn(message);
    } else if (level == 3) {
      logger.info(message);
    } else if (level == 4) {
      logger.debug(message);
    } else {
      logger.trace(message);
    }
  }
}
