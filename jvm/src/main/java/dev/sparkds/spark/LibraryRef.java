package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import java.io.File;
import java.io.Serializable;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;

/**
 * The build of a library that the driver resolved and loaded: its name, where the driver found
 * it (a library file, or a package and its entry), the SHA-256 of the bytes it loaded, and the
 * isolated session whose package it came from. Executors load only that build.
 */
public final class LibraryRef implements Serializable {
  private static final long serialVersionUID = 3L;

  private static final String SESSION_PACKAGE = "session package ";

  private final String name;
  private final String path;
  private final String sha256;
  private final String origin;
  private final String entry;
  // The artifact session (JobArtifactState's uuid) of the isolated session that resolved the
  // library, or null for the default session: executors keep its files in a folder of that name.
  private final String artifactSession;

  public LibraryRef(String name, String path, String sha256, String origin, String entry) {
    this(name, path, sha256, origin, entry, null);
  }

  LibraryRef(
      String name,
      String path,
      String sha256,
      String origin,
      String entry,
      String artifactSession) {
    this.name = name;
    this.path = path;
    this.sha256 = sha256;
    this.origin = origin;
    this.entry = entry;
    this.artifactSession = artifactSession;
  }

  /** Finds and loads the library of data source {@code name}, on the driver. */
  static LibraryRef resolve(String name) {
    SparkContext context = SparkContext.getOrCreate();
    SparkConf conf = context.getConf();
    Discovery.checkEnabled(conf, name);
    String[] found =
        Native.resolve(
            name,
            Discovery.sessionPackages(context),
            Discovery.configuredPackages(conf),
            Discovery.driverLibraryDirs(conf),
            Discovery.privateDir(),
            sparkVersion());
    return new LibraryRef(
        name, found[0], found[1], found[2], found[3], Discovery.artifactSession());
  }

  public String name() {
    return name;
  }

  /** The library file, or the package, where the driver found the library. */
  public String path() {
    return path;
  }

  public String sha256() {
    return sha256;
  }

  /** Where the driver found it: a package, a configured package, or a library directory. */
  public String origin() {
    return origin;
  }

  /** The package's entry of the library, or "" for an installed library file. */
  public String entry() {
    return entry;
  }

  /** The driver's build on the driver, which {@link #resolve} loaded. */
  long driverHandle() {
    return Native.loadBuild(
        name,
        sha256,
        path,
        entry,
        new String[0],
        Discovery.driverLibraryDirs(SparkContext.getOrCreate().getConf()),
        Discovery.privateDir(),
        sparkVersion());
  }

  /**
   * Loads the driver's build on an executor, once per JVM: from the session's copy of the
   * driver's package, or the driver's path if that holds the same build, else from the
   * executor's native library path; NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND, naming both
   * checksums, when no file there is that build.
   */
  public long executorHandle() {
    return Native.loadBuild(
        name,
        sha256,
        path,
        entry,
        sessionCopies(),
        Discovery.executorLibraryDirs(),
        Discovery.privateDir(),
        sparkVersion());
  }

  /**
   * The copies of the driver's session package that this node got with the session's files:
   * {@link Discovery#sessionFileCopies}.
   */
  private String[] sessionCopies() {
    if (entry.isEmpty() || !origin.startsWith(SESSION_PACKAGE)) {
      return new String[0];
    }
    return Discovery.sessionFileCopies(new File(path).getName(), artifactSession);
  }

  static String sparkVersion() {
    try {
      Object module = Class.forName("org.apache.spark.package$").getField("MODULE$").get(null);
      return (String) module.getClass().getMethod("SPARK_VERSION").invoke(module);
    } catch (ReflectiveOperationException e) {
      return "unknown";
    }
  }

  @Override
  public String toString() {
    String where = entry.isEmpty() ? path : entry + " of " + path;
    return name + " (" + where + ", sha256 " + sha256 + ")";
  }
}
