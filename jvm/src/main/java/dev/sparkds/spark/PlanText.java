package dev.sparkds.spark;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.util.V2ExpressionSQLBuilder;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * A pushed predicate as the plan shows it: Spark's own text, except that dates and timestamps
 * read as SQL literals (`at > TIMESTAMP '2024-05-01 12:00:00'`, in the session's time zone)
 * where Spark's connector API prints their internal numbers (days, microseconds).
 */
final class PlanText extends V2ExpressionSQLBuilder {
  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss");

  private final ZoneId zone;

  private PlanText(ZoneId zone) {
    this.zone = zone;
  }

  /** `predicate` in the session's time zone; Spark's text when the builder cannot say it. */
  static String of(Predicate predicate) {
    try {
      return new PlanText(ZoneId.of(SQLConf.get().sessionLocalTimeZone())).build(predicate);
    } catch (RuntimeException e) {
      return predicate.toString();
    }
  }

  @Override
  protected String visitLiteral(Literal<?> literal) {
    Object value = literal.value();
    DataType type = literal.dataType();
    if (value instanceof Integer && type instanceof DateType) {
      return "DATE '" + LocalDate.ofEpochDay((Integer) value) + "'";
    }
    if (value instanceof Long && type instanceof TimestampType) {
      return "TIMESTAMP '" + local(micros((Long) value).atZone(zone).toLocalDateTime()) + "'";
    }
    if (value instanceof Long && type instanceof TimestampNTZType) {
      LocalDateTime time = LocalDateTime.ofInstant(micros((Long) value), ZoneOffset.UTC);
      return "TIMESTAMP_NTZ '" + local(time) + "'";
    }
    return super.visitLiteral(literal);
  }

  private static Instant micros(long micros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000L);
  }

  /** Seconds, and the fraction without its trailing zeros, as Spark prints a timestamp. */
  private static String local(LocalDateTime time) {
    String text = SECONDS.format(time);
    int nanos = time.getNano();
    if (nanos == 0) {
      return text;
    }
    String fraction = String.format("%09d", nanos).replaceAll("0+$", "");
    return text + "." + fraction;
  }
}
