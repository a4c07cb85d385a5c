package dev.sparkds.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Loads the plugin's JNI library (libsparkds_jni) into this JVM, once per class loader.
 *
 * <p>A JVM ties a native library to the class loader that loaded it, and refuses to load the
 * same file from a second loader (as Spark Connect's isolated sessions have). So each loader
 * gets its own copy of the library, extracted from the jar (or copied from the override) to a
 * file of its own, in a directory that only this user can write.
 *
 * <p>The jar's library is checked as every library the plugin loads is: the bytes hashed are
 * the bytes loaded. jvm/build.sh records the library's SHA-256 beside it in the jar
 * ({@code <library>.sha256}); the copy is hashed after it is written, compared with that
 * record, and only then loaded, so that a damaged jar or a copy changed on disk fails here, with
 * both hashes, instead of loading.
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
      // A fresh directory of mode 0700 (what createTempDirectory gives on POSIX): nobody else
      // can replace the copy between its hash and its load.
      copy = Files.createTempDirectory("sparkds_jni_").resolve(fileName);
    } catch (IOException e) {
      throw cannotExtract(fileName, e);
    }
    try {
      extract(platform, fileName, copy);
      System.load(copy.toAbsolutePath().toString());
    } finally {
      // Loaded or refused, the file is not needed any more: the loaded mapping keeps the code.
      // Windows does not delete a loaded library, so there it goes when the JVM exits.
      if (!platform.startsWith("windows")) {
        copy.toFile().delete();
        copy.getParent().toFile().delete();
      } else {
        copy.getParent().toFile().deleteOnExit();
        copy.toFile().deleteOnExit();
      }
    }
    loaded = true;
  }

  /**
   * Writes the JNI library to {@code copy}: the override's file, or the jar's resource for
   * {@code platform} after checking it against the hash the jar records.
   */
  private static void extract(String platform, String fileName, Path copy) {
    try {
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
        checkRecordedHash(resource, copy);
      }
    } catch (IOException e) {
      throw cannotExtract(fileName, e);
    }
  }

  private static NativeDataSourceException cannotExtract(String fileName, IOException e) {
    return new NativeDataSourceException(
        "INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED",
        "cannot extract the JNI library "
            + fileName
            + " to "
            + System.getProperty("java.io.tmpdir")
            + ": "
            + e
            + ". Set java.io.tmpdir to a writable directory.");
  }

  /**
   * Compares the SHA-256 of {@code copy}, the library extracted from the jar's {@code resource},
   * with the one recorded beside it in the jar, and throws when they differ or the jar records
   * none.
   */
  static void checkRecordedHash(String resource, Path copy) throws IOException {
    String recorded;
    try (InputStream in = JniLibrary.class.getResourceAsStream(resource + ".sha256")) {
      if (in == null) {
        throw new NativeDataSourceException(
            "INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED",
            "this jar has no SHA-256 for its JNI library (resource "
                + resource
                + ".sha256), so the library cannot be checked before it is loaded: use a jar"
                + " built by jvm/build.sh.");
      }
      recorded = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
    }
    String actual = sha256(copy);
    if (!actual.equals(recorded)) {
      throw new NativeDataSourceException(
          "INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED",
          "the JNI library extracted from this jar to "
              + copy
              + " has SHA-256 "
              + actual
              + ", but the jar records "
              + recorded
              + " for "
              + resource
              + ": the jar is damaged or the copy was changed on disk; it is not loaded."
              + " Download the jar again (its Maven checksums say whether it is whole).");
    }
  }

  /** The lower-case hex SHA-256 of the file at {@code path}. */
  static String sha256(Path path) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
    try (InputStream in = Files.newInputStream(path)) {
      byte[] buffer = new byte[1 << 16];
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
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
