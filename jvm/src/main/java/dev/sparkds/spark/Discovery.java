package dev.sparkds.spark;

import java.io.File;
import java.net.URI;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.JobArtifactSet;
import org.apache.spark.JobArtifactState;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.SparkFiles;
import scala.Tuple2;

/**
 * Where the driver and the executors look for native data source libraries, as the
 * specification says: the session's packages, then the configured packages, then the native
 * library path.
 */
final class Discovery {
  /** Whether Spark loads native data sources (a static configuration). */
  static final String ENABLED = "spark.sql.dataSource.native.enabled";

  /** Packages, and directories of packages, on the driver's file system, comma-separated. */
  static final String PATHS = "spark.sql.dataSource.native.paths";

  static final String PACKAGE_SUFFIX = ".sparkpkg";

  private Discovery() {}

  /**
   * Throws NATIVE_DATA_SOURCE_DISABLED, naming data source {@code name}, when the application
   * turned native data sources off.
   */
  static void checkEnabled(SparkConf conf, String name) {
    if (!conf.getBoolean(ENABLED, true)) {
      throw new NativeDataSourceException(
          "NATIVE_DATA_SOURCE_DISABLED",
          "native data sources are disabled in this application ("
              + ENABLED
              + "=false), so data source `"
              + name
              + "` cannot be loaded. It is a static configuration: set it when the application "
              + "starts.");
    }
  }

  /**
   * The native library path of this process, absolute directories only (a relative entry, such
   * as the "." that Windows' java.library.path ends with or an empty PATH element, would let the
   * current directory decide what runs): java.library.path (which holds LD_LIBRARY_PATH,
   * and so spark.driver.extraLibraryPath and spark.executor.extraLibraryPath), then
   * {@code <prefix>/lib} for each {@code <prefix>/bin} of PATH. {@code extra} is the
   * extraLibraryPath of this process's role, added in case the launcher did not put it in
   * java.library.path (as in local mode, where executors run in the driver).
   */
  static String[] libraryDirs(String extra) {
    LinkedHashSet<String> dirs = new LinkedHashSet<>();
    addAll(dirs, System.getProperty("java.library.path"));
    addAll(dirs, extra);
    String path = System.getenv("PATH");
    if (path != null) {
      for (String entry : path.split(File.pathSeparator)) {
        File bin = new File(entry);
        if (bin.isAbsolute() && bin.getName().equals("bin") && bin.getParentFile() != null) {
          dirs.add(new File(bin.getParentFile(), "lib").getPath());
        }
      }
    }
    return dirs.toArray(new String[0]);
  }

  private static void addAll(LinkedHashSet<String> dirs, String list) {
    if (list == null) {
      return;
    }
    for (String entry : list.split(File.pathSeparator)) {
      if (!entry.isEmpty() && new File(entry).isAbsolute()) {
        dirs.add(entry);
      }
    }
  }

  /** The native library path of the driver. */
  static String[] driverLibraryDirs(SparkConf conf) {
    return libraryDirs(conf.get("spark.driver.extraLibraryPath", null));
  }

  /** The native library path of an executor (or of the driver, in local mode). */
  static String[] executorLibraryDirs() {
    SparkEnv env = SparkEnv.get();
    String extra = null;
    if (env != null) {
      extra = env.conf().get("spark.executor.extraLibraryPath", null);
      String driverExtra = env.conf().get("spark.driver.extraLibraryPath", null);
      if (driverExtra != null) {
        // In local mode the executor is the driver's JVM, launched with the driver's path.
        extra = extra == null ? driverExtra : extra + File.pathSeparator + driverExtra;
      }
    }
    return libraryDirs(extra);
  }

  /**
   * The packages that the session added (SparkContext.addFile, which PySpark's
   * {@code spark.addArtifact(path, file=True)} calls), in the order they were added: files whose
   * name ends in .sparkpkg, as local paths of the driver.
   *
   * <p>Only the files of the session that runs the query: an isolated session (Spark Connect's,
   * with spark.sql.artifact.isolation.enabled) runs its queries with its JobArtifactState active,
   * whose files are its own, while SparkContext.allAddedFiles holds every session's. Sessions
   * without isolation have no active state, and share the context's files, as the specification
   * says.
   */
  static String[] sessionPackages(SparkContext context) {
    // The Scala map's iterator: the same source compiles on Scala 2.12 and 2.13.
    scala.collection.Iterator<Tuple2<String, Object>> added =
        JobArtifactSet.getActiveOrDefault(context).files().iterator();
    List<Map.Entry<String, Object>> entries = new ArrayList<>();
    while (added.hasNext()) {
      Tuple2<String, Object> file = added.next();
      entries.add(Map.entry(file._1(), file._2()));
    }
    entries.sort(
        (a, b) -> {
          int byTime = Long.compare((Long) a.getValue(), (Long) b.getValue());
          return byTime != 0 ? byTime : a.getKey().compareTo(b.getKey());
        });
    List<String> packages = new ArrayList<>();
    for (Map.Entry<String, Object> entry : entries) {
      String uri = entry.getKey();
      if (!uri.toLowerCase(Locale.ROOT).endsWith(PACKAGE_SUFFIX)) {
        continue;
      }
      packages.add(localPath(uri));
    }
    return packages.toArray(new String[0]);
  }

  /**
   * The artifact session of the query that runs on this thread: the uuid of the active
   * JobArtifactState, which an isolated session (Spark Connect's) sets while it plans and runs
   * its queries; null for the default session, whose files every session shares.
   */
  static String artifactSession() {
    scala.Option<JobArtifactState> state = JobArtifactSet.getCurrentJobArtifactState();
    return state.isDefined() ? state.get().uuid() : null;
  }

  /**
   * Where this node keeps its copy of the session file {@code fileName}: an executor fetches the
   * files of an isolated session into a folder named after its artifact session, under
   * SparkFiles' root (Executor.updateDependencies), and those of the default session into the
   * root itself. The task's thread has no active JobArtifactState there, so SparkFiles.get()
   * names the root's copy only: the session's folder comes from the driver.
   */
  static String[] sessionFileCopies(String fileName, String artifactSession) {
    List<String> copies = new ArrayList<>();
    try {
      String root = SparkFiles.getRootDirectory();
      if (artifactSession != null) {
        copies.add(new File(new File(root, artifactSession), fileName).getAbsolutePath());
      }
      copies.add(new File(root, fileName).getAbsolutePath());
    } catch (RuntimeException e) {
      // No SparkEnv: no session files on this node.
    }
    return copies.toArray(new String[0]);
  }

  private static String localPath(String uri) {
    try {
      URI parsed = new URI(uri);
      if (parsed.getScheme() == null) {
        return uri;
      }
      if (parsed.getScheme().equals("file")) {
        return Paths.get(parsed).toString();
      }
      // Remote files are fetched to the driver's SparkFiles directory when they are added.
      return SparkFiles.get(new File(parsed.getPath()).getName());
    } catch (Exception e) {
      return SparkFiles.get(new File(uri).getName());
    }
  }

  /** The packages of spark.sql.dataSource.native.paths. */
  static String[] configuredPackages(SparkConf conf) {
    String value = conf.get(PATHS, "");
    List<String> paths = new ArrayList<>();
    for (String entry : value.split(",")) {
      if (!entry.trim().isEmpty()) {
        paths.add(entry.trim());
      }
    }
    return paths.toArray(new String[0]);
  }

  /**
   * Where the JNI library writes the private copies that it loads libraries from (each in a
   * directory of its own, mode 0700, removed once loaded): the directory of the session's files,
   * under Spark's local directory, since the system's temporary directory may forbid executing
   * what is in it. The JNI library falls back to that temporary directory when this one is
   * missing.
   */
  static String privateDir() {
    try {
      return new File(SparkFiles.getRootDirectory()).getAbsolutePath();
    } catch (RuntimeException e) {
      return "";
    }
  }
}
