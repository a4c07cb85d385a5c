package dev.sparkds.spark;

/** The smoke test's stand-in, with the constructor the JNI library calls. */
public class NativeDataSourceException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  public final String errorClass;

  public NativeDataSourceException(String errorClass, String message) {
    super("[" + errorClass + "] " + message);
    this.errorClass = errorClass;
  }
}
