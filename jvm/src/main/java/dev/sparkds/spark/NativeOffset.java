package dev.sparkds.spark;

import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * An offset of a stream: the library's bytes, stored in the query's checkpoint as
 * {@code {"sparkds":"<base64>"}}.
 */
final class NativeOffset extends Offset {
  private static final Pattern JSON = Pattern.compile("\\{\\s*\"sparkds\"\\s*:\\s*\"([A-Za-z0-9+/=]*)\"\\s*}");

  final byte[] bytes;

  NativeOffset(byte[] bytes) {
    this.bytes = bytes;
  }

  @Override
  public String json() {
    return "{\"sparkds\":\"" + Base64.getEncoder().encodeToString(bytes) + "\"}";
  }

  static NativeOffset fromJson(String json) {
    Matcher matcher = JSON.matcher(json.trim());
    if (!matcher.matches()) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_INVALID_OFFSET",
          "the checkpoint holds the offset `"
              + json
              + "`, which a native data source did not write: use a new checkpointLocation "
              + "for a query that reads another source.");
    }
    return new NativeOffset(Base64.getDecoder().decode(matcher.group(1)));
  }

  static NativeOffset of(Offset offset) {
    return offset instanceof NativeOffset ? (NativeOffset) offset : fromJson(offset.json());
  }
}
