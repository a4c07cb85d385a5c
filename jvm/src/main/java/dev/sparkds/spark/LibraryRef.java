package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import java.io.Serializable;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;

/**
 * The build of a library that the driver resolved: its name, its path on the driver and its
 * SHA-256. Executors load only that build.
 */
public final class LibraryRef implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Where this JVM found each driver build: by checksum and driver path. */
  private static final ConcurrentHashMap<String, String> LOCATED = new ConcurrentHashMap<>();

  private final String name;
  private final String path;
  private final String sha256;
  private final String origin;

  public LibraryRef(String name, String path, String sha256, String origin) {
    this.name = name;
    this.path = path;
    this.sha256 = sha256;
    this.origin = origin;
  }

  /** Finds the library of data source {@code name}, on the driver. */
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
            Discovery.extractDir(conf));
    return new LibraryRef(name, found[0], found[1], found[2]);
  }

  public String name() {
    return name;
  }

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

  /**
   * Loads the library on the driver, at the path where it was found. The JNI library loads a
   * path once per JVM, and throws INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED when the file
   * changed since.
   */
  long driverHandle() {
    return Native.load(path, sha256, sparkVersion());
  }

  /**
   * Loads the driver's build on an executor: from the driver's path if that file is the same
   * build, else from the executor's native library path; NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND
   * when no file there is that build. The search runs once per JVM and build.
   */
  public long executorHandle() {
    String located =
        LOCATED.computeIfAbsent(
            sha256 + "\0" + path,
            key -> Native.locateBuild(name, sha256, path, Discovery.executorLibraryDirs()));
    return Native.load(located, sha256, sparkVersion());
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
    return name + " (" + path + ", sha256 " + sha256 + ")";
  }
}
