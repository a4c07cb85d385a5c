package dev.sparkds.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.apache.spark.sql.internal.SQLConf;

/**
 * Secret options, by Spark's rule: a key that matches {@code spark.sql.redaction.options.regex}
 * or {@code spark.redaction.regex} of the session, or their defaults (which the SDK's
 * {@code is_secret_key} implements for the Rust side), has a value that nothing shows.
 */
final class Redaction {
  /** What Spark shows instead of a secret value. */
  static final String REPLACEMENT = "*********(redacted)";

  static final String OPTIONS_REGEX = "spark.sql.redaction.options.regex";
  static final String SECRETS_REGEX = "spark.redaction.regex";

  /** Spark's defaults of the two settings: a session may add keys, never remove these. */
  private static final Pattern DEFAULT_OPTIONS = Pattern.compile("(?i)url");

  private static final Pattern DEFAULT_SECRETS =
      Pattern.compile("(?i)secret|password|token|access[.]?key");

  private Redaction() {}

  /** Whether the value of option {@code key} is secret in this session (or by default). */
  static boolean isSecretKey(String key) {
    if (DEFAULT_OPTIONS.matcher(key).find() || DEFAULT_SECRETS.matcher(key).find()) {
      return true;
    }
    SQLConf conf = SQLConf.get();
    for (String setting : new String[] {OPTIONS_REGEX, SECRETS_REGEX}) {
      Pattern pattern = sessionPattern(conf, setting);
      if (pattern != null && pattern.matcher(key).find()) {
        return true;
      }
    }
    return false;
  }

  private static Pattern sessionPattern(SQLConf conf, String setting) {
    String regex = conf.getConfString(setting, null);
    if (regex == null || regex.isEmpty()) {
      return null;
    }
    try {
      return Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      // Spark refuses the same pattern where it uses it; the defaults still apply here.
      return null;
    }
  }

  /**
   * {@code options} as a plan or a table's properties may show them: Spark's rule of
   * {@code SQLConf.redactOptions} (a pattern found in the key or in the value hides the value),
   * with the session's patterns and the defaults. The order is kept.
   */
  static Map<String, String> redact(Map<String, String> options) {
    List<Pattern> patterns = new ArrayList<>(List.of(DEFAULT_OPTIONS, DEFAULT_SECRETS));
    SQLConf conf = SQLConf.get();
    for (String setting : new String[] {OPTIONS_REGEX, SECRETS_REGEX}) {
      Pattern pattern = sessionPattern(conf, setting);
      if (pattern != null) {
        patterns.add(pattern);
      }
    }
    LinkedHashMap<String, String> shown = new LinkedHashMap<>();
    for (Map.Entry<String, String> entry : options.entrySet()) {
      String value = entry.getValue();
      boolean secret = isSecretKey(entry.getKey());
      for (int i = 0; !secret && value != null && i < patterns.size(); i++) {
        secret = patterns.get(i).matcher(value).find();
      }
      shown.put(entry.getKey(), secret ? REPLACEMENT : value);
    }
    return shown;
  }

  /**
   * The non-empty values of the secret options of {@code options}, which no message of the
   * library may show. A {@code url} (a key that only Spark's default options pattern finds) is
   * left to the JNI library's rule, which hides the credentials the URL carries and not the
   * host, so that an error still names the host that failed; plans redact it whole.
   */
  static String[] secretValues(Map<String, String> options) {
    List<String> values = new ArrayList<>();
    for (Map.Entry<String, String> entry : options.entrySet()) {
      String key = entry.getKey();
      String value = entry.getValue();
      boolean url = DEFAULT_OPTIONS.matcher(key).find() && !DEFAULT_SECRETS.matcher(key).find();
      if (value != null && !value.isEmpty() && !url && isSecretKey(key)) {
        values.add(value);
      }
    }
    return values.toArray(new String[0]);
  }
}
