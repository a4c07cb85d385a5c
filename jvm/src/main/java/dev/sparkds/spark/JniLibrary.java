package dev.sparkds.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Loads the plugin's JNI library (libsparkds_jni) into this JVM, once per class loader.
 *
 * <p>A JVM ties a native library to the class loader that loaded it, and refuses to load the
 * same file from a second loader (as Spark Connect's isolated sessions have). So each loader
 * gets its own copy of the library, extracted from the jar (or copied from the override) to a
 * file of its own.
 */
public final class JniLibrary {
  /** Names a JNI library to use instead of the jar's (for tests and unusual platforms). */
  public static final String OVERRIDE_PROPERTY = "sparkds.jni.library";

  public static final String OVERRIDE_ENV = "SPARKDS_JNI_LIBRARY";

  private static boolean loaded;

  private JniLibrary() {}

  /** Loads the JNI library if this class loader has not yet. */
  public static synchronized void ensureLoaded() {
    if (loaded) {
      return;
    }
    String platform = platform();
    String fileName = System.mapLibraryName("sparkds_jni");
    Path copy;
    try {
      copy = Files.createTempFile("sparkds_jni_", "_" + fileName);
      String override = System.getProperty(OVERRIDE_PROPERTY, System.getenv(OVERRIDE_ENV));
      if (override != null && !override.isEmpty()) {
        Path source = Paths.get(override);
        if (!Files.isRegularFile(source)) {
          throw new NativeDataSourceException(
              "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND",
              "the JNI library that "
                  + OVERRIDE_PROPERTY
                  + " (or "
                  + OVERRIDE_ENV
                  + ") names does not exist: "
                  + source
                  + ". Build it with jvm/build.sh, or unset the override to use the jar's.");
        }
        Files.copy(source, copy, StandardCopyOption.REPLACE_EXISTING);
      } else {
        String resource = "/dev/sparkds/spark/native/" + platform + "/" + fileName;
        try (InputStream in = JniLibrary.class.getResourceAsStream(resource)) {
          if (in == null) {
            throw new NativeDataSourceException(
                "NATIVE_DATA_SOURCE_UNSUPPORTED_PLATFORM",
                "this jar has no JNI library for "
                    + platform
                    + " (resource "
                    + resource
                    + "): use a jar built for this platform, built with jvm/build.sh on it.");
          }
          Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    } catch (IOException e) {
      throw new NativeDataSourceException(
          "INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED",
          "cannot extract the JNI library "
              + fileName
              + " to "
              + System.getProperty("java.io.tmpdir")
              + ": "
              + e
              + ". Set java.io.tmpdir to a writable directory.");
    }
    System.load(copy.toAbsolutePath().toString());
    // The loaded mapping keeps the code; the file itself is not needed any more, except on
    // Windows, which does not delete a loaded library.
    if (!platform.startsWith("windows")) {
      copy.toFile().delete();
    } else {
      copy.toFile().deleteOnExit();
    }
    loaded = true;
  }

  /**
   * The platform key of the packages' manifests for this JVM: linux-x86_64, linux-aarch64,
   * osx-x86_64, osx-aarch64 or windows-x86_64; anything else throws
   * NATIVE_DATA_SOURCE_UNSUPPORTED_PLATFORM.
   */
  public static String platform() {
    String os = System.getProperty("os.name", "");
    return platformOf(os, System.getProperty("os.arch", ""), isLinux(os) && runsOnMusl());
  }

  /**
   * The platform key of a JVM that reports {@code osName} and {@code osArch} and runs on musl's
   * C library or not (as on Alpine Linux: the JNI library and the libraries of the packages are
   * built for glibc, so none of them would load).
   */
  public static String platformOf(String osName, String osArch, boolean musl) {
    String os = osName.toLowerCase(Locale.ROOT);
    String arch = osArch.toLowerCase(Locale.ROOT);
    String osKey;
    if (isLinux(os)) {
      osKey = "linux";
    } else if (os.startsWith("mac") || os.startsWith("darwin")) {
      osKey = "osx";
    } else if (os.startsWith("windows")) {
      osKey = "windows";
    } else {
      osKey = null;
    }
    String archKey;
    if (arch.equals("amd64") || arch.equals("x86_64")) {
      archKey = "x86_64";
    } else if (arch.equals("aarch64") || arch.equals("arm64")) {
      archKey = "aarch64";
    } else {
      archKey = null;
    }
    boolean supported =
        osKey != null
            && archKey != null
            && !(osKey.equals("windows") && archKey.equals("aarch64"))
            && !(osKey.equals("linux") && musl);
    if (!supported) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_UNSUPPORTED_PLATFORM",
          "native data sources run on linux-x86_64, linux-aarch64 (with glibc), osx-x86_64, "
              + "osx-aarch64 and windows-x86_64, not on "
              + osName
              + " "
              + osArch
              + (musl ? " with musl" : "")
              + ". Run the driver and the executors on one of those.");
    }
    return osKey + "-" + archKey;
  }

  private static boolean isLinux(String osName) {
    return osName.toLowerCase(Locale.ROOT).startsWith("linux");
  }

  /** Whether this process runs on musl: its dynamic loader, ld-musl-<arch>.so.1, is mapped. */
  private static boolean runsOnMusl() {
    try (Stream<String> maps = Files.lines(Paths.get("/proc/self/maps"))) {
      return maps.anyMatch(line -> line.contains("/ld-musl-"));
    } catch (IOException | UncheckedIOException e) {
      // No /proc (a restricted container): take glibc, the JNI library's load says otherwise.
      return false;
    }
  }
}
