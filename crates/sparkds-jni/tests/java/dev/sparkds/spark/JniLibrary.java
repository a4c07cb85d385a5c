package dev.sparkds.spark;

/** The smoke test's stand-in for the plugin's loader: the JNI library named by a property. */
public final class JniLibrary {
  private JniLibrary() {}

  public static void ensureLoaded() {
    System.load(System.getProperty("sparkds.jni.library"));
  }
}
