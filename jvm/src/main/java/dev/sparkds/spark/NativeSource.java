package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import org.apache.spark.sql.types.StructType;

/** A source handle of a library, on the driver: closed exactly once. */
final class NativeSource implements AutoCloseable {
  static final long BATCH_READ = 1L;
  static final long MICRO_BATCH_READ = 1L << 1;
  static final long BATCH_WRITE = 1L << 2;
  static final long STREAMING_WRITE = 1L << 3;
  static final long TRUNCATE = 1L << 4;

  final LibraryRef library;
  final SourceOptions options;
  final long handle;
  private boolean closed;

  private NativeSource(LibraryRef library, SourceOptions options, long handle) {
    this.library = library;
    this.options = options;
    this.handle = handle;
  }

  /**
   * Calls create with {@code options}; first, the values that the session's redaction settings
   * call secret are scrubbed from what the library says (the JNI library scrubs those of its
   * default patterns itself).
   */
  static NativeSource open(LibraryRef library, SourceOptions options) {
    long lib = library.driverHandle();
    String[] secrets = Redaction.secretValues(options.asMap());
    if (secrets.length > 0) {
      Native.treatAsSecret(secrets);
    }
    long handle = Native.create(lib, options.name(), options.keys(), options.values());
    return new NativeSource(library, options, handle);
  }

  long capabilities() {
    return Native.capabilities(handle);
  }

  /** The library's schema, or null when it has no schema function. */
  StructType schema() {
    byte[] bytes = Native.schema(handle);
    return bytes == null ? null : Schemas.fromBytes(bytes, options.name());
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      Native.close(handle);
    }
  }
}
