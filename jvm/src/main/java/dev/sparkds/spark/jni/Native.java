/*
 * The boundary between the plugin's Java code and its JNI library (crates/sparkds-jni), which
 * loads native data source libraries and calls their function tables. Every method here is a
 * thin step of the protocol of spark_datasource.h; the Data Source V2 classes decide when to
 * call which.
 *
 * Conventions, kept by both sides:
 * - Handles are `long`s that the JNI library returns and releases: each handle returned by a
 *   create or open method is passed exactly once to its close method. Libraries are never
 *   unloaded (a JVM loads a library from a path once).
 * - Schemas cross as Arrow IPC flatbuffer messages holding a Schema: what Arrow Java's
 *   Schema.serializeAsMessage() writes and Schema.deserializeMessage(ByteBuffer) reads.
 * - Partitions, reader and writer states, offsets and commit messages are the library's bytes,
 *   passed through unchanged. A `byte[]` result is null where the library leaves the optional
 *   function NULL.
 * - Options are the keys and values as the user wrote them (case kept), in two arrays of the
 *   same length.
 * - A batch crosses as a `long[]` that describes Arrow buffers in place (no copy):
 *     [0]  number of rows
 *     then, for each field of the schema in depth-first pre-order (a field, then its children;
 *     the order of Arrow Java's VectorLoader and of the C data interface):
 *       length, null_count, n_buffers, then n_buffers pairs (address, length in bytes)
 *   Buffers are in the C data interface's order (validity, then offsets, then values), which is
 *   also Arrow Java's for the types of version 1; an absent validity buffer is (0, 0).
 * - Errors are thrown as dev.sparkds.spark.NativeDataSourceException(String errorClass,
 *   String message), with the error classes of the specification: NATIVE_DATA_SOURCE_ERROR (a
 *   function of the library failed: the message names the data source, the function and the
 *   library's last_error), NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND (with every place searched),
 *   INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED (another build at a path this JVM loaded),
 *   INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED (not a library, no spark_ds_init, init
 *   failed, a malformed table), INVALID_NATIVE_DATA_SOURCE_LIBRARY.UNSUPPORTED_ABI_VERSION,
 *   INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE (a rule of the interface broken at run time,
 *   such as a batch that does not match its schema: the message names the rule).
 *   A panic inside the JNI library becomes a java.lang.IllegalStateException; nothing unwinds
 *   into the JVM.
 *
 * Calls from the JNI library into Java:
 * - Native.log(String library, int level, String message), from any thread, for the library's
 *   SparkDsHost.log (levels SPARK_DS_LOG_ERROR = 1 ... SPARK_DS_LOG_TRACE = 5).
 * - taskContext.isInterrupted() (org.apache.spark.TaskContext, may be null), from any thread,
 *   for SparkDsTaskContext.is_interrupted.
 */
package dev.sparkds.spark.jni;

public final class Native {
  private Native() {}

  // The JNI library, extracted from the plugin's jar, once per class loader.
  static {
    dev.sparkds.spark.JniLibrary.ensureLoaded();
  }

  // ---- Finding and loading libraries ----------------------------------------------------

  /**
   * Finds the library of data source {@code name} on the driver, in the specification's order:
   * the session's packages ({@code sessionPackages}, .sparkpkg files in the order the session
   * added them: the last added wins), then the configured packages ({@code configuredPackages}:
   * .sparkpkg files and directories holding them; more than one providing {@code name} is an
   * error), then the installed libraries, by file name, in the absolute directories of
   * {@code libraryDirs} in order (relative entries are ignored). Unreadable packages, or
   * packages of an unsupported version, are skipped and logged, unless no other place provides
   * {@code name} and their manifest lists it (then their error is thrown).
   *
   * <p>The library found is read once, hashed and loaded from a private copy of those bytes
   * (a directory that the JNI library creates under {@code privateDir} with mode 0700, removed
   * once the library is loaded), so the checksum returned is the checksum of what runs; a
   * package's library is read from the package, never extracted to a shared place. Throws
   * INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED when this JVM loaded another build from the
   * same place.
   *
   * @param sparkVersion given to the library in SparkDsHost.spark_version
   * @return {the library file or the package it came from, its SHA-256 in lower-case hex, where
   *     it was found, the package's entry or "" for a library file}
   */
  public static native String[] resolve(
      String name,
      String[] sessionPackages,
      String[] configuredPackages,
      String[] libraryDirs,
      String privateDir,
      String sparkVersion);

  /**
   * The handle of the build whose SHA-256 is {@code sha256}, loaded once per JVM (later calls
   * return the same handle without reading any file). The first time, the candidates are read
   * and hashed, and only the one with this checksum is loaded, from a private copy as in
   * {@link #resolve}: for a build that came in a package ({@code entry} not empty), the entry of
   * each of {@code packageFiles} (the session's copies of the package on this node), then of the
   * package at {@code driverPath}; for a library file, {@code driverPath}; then the library
   * named after {@code name} in each absolute directory of {@code libraryDirs}. The driver's
   * path is only a hint. Throws NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND, naming the driver's
   * checksum and every candidate's, when none has it.
   */
  public static native long loadBuild(
      String name,
      String sha256,
      String driverPath,
      String entry,
      String[] packageFiles,
      String[] libraryDirs,
      String privateDir,
      String sparkVersion);

  /** The SPARK_DS_* capability bits that a source declared in create. */
  public static native long capabilities(long source);

  // ---- Sources (driver) -----------------------------------------------------------------

  /** create: a source for data source {@code name} with the user's options. */
  public static native long create(long library, String name, String[] keys, String[] values);

  /**
   * Scrubs {@code values} from every later message of every library in this JVM (errors and
   * logs), as the values of options with a secret key (Spark's default redaction patterns)
   * already are: the values of the options that the session's own patterns find.
   */
  public static native void treatAsSecret(String[] values);

  /** schema: the source's schema, or null when the library has no schema function. */
  public static native byte[] schema(long source);

  /** close. */
  public static native void close(long source);

  // ---- Batch read (driver) --------------------------------------------------------------

  /** create_reader, with the schema to read (the user's, or the one schema returned). */
  public static native long createReader(long source, byte[] schema);

  /** push_limit: true when the library accepted the limit (false when it has no push_limit). */
  public static native boolean pushLimit(long reader, long limit);

  /**
   * push_filters of the filter pushdown extension (spark_datasource_filters.h): offers the
   * top-level conjuncts of the query's condition, one message of the header's encoding, right
   * after createReader and before pushLimit. Returns one byte per filter, 1 when the library
   * accepted it (it then returns only rows where it is TRUE) and 0 otherwise, or null when the
   * library has no filter pushdown (no spark_ds_filters_init): every filter is then Spark's.
   */
  public static native byte[] pushFilters(long reader, byte[] encodedFilters);

  /** prune_columns: true when the library pruned (false when it has no prune_columns). */
  public static native boolean pruneColumns(long reader, byte[] requiredSchema);

  /**
   * Offers a reader just created what another reader of the same schema and options was offered
   * and accepted, in the header's order, and checks that it answers the same (rule 32): the
   * filters' message and their answers (both null when none was offered), the limit (-1 when
   * none was pushed), the pruned schema (null when the columns were not pruned). Throws a
   * conformance error naming the function and both answers otherwise.
   */
  public static native boolean replay(
      long reader, byte[] filters, byte[] answers, long limit, boolean limitAccepted,
      byte[] prunedSchema);

  /** partitions. */
  public static native byte[][] partitions(long reader);

  /** serialize_reader, or null. */
  public static native byte[] serializeReader(long reader);

  /** close_reader. */
  public static native void closeReader(long reader);

  // ---- Micro-batch read (driver) --------------------------------------------------------

  public static native long createStreamReader(long source, byte[] schema);

  public static native byte[] initialOffset(long reader);

  public static native byte[] latestOffset(long reader, byte[] start);

  public static native byte[][] streamPartitions(long reader, byte[] start, byte[] end);

  /** serialize_stream_reader, or null. */
  public static native byte[] serializeStreamReader(long reader);

  /** commit_offset; nothing when the library has none. */
  public static native void commitOffset(long reader, byte[] end);

  public static native void closeStreamReader(long reader);

  // ---- Reading a partition (executor) ---------------------------------------------------

  /**
   * read: opens the stream of one partition. {@code schema} is the schema to read (after
   * pruning); the stream's schema must equal it. {@code readerState} may be null. With
   * {@code acceptedFilters} (a message of spark_datasource_filters.h: the predicates that the
   * library accepted), every row of every batch is checked against them, and a row where one is
   * not TRUE fails next() with INVALID_NATIVE_DATA_SOURCE_LIBRARY.CONFORMANCE (rule 31, naming
   * the predicate, the batch and the row); null takes the rows as they are. Every column that
   * they name must be in {@code schema}.
   */
  public static native long read(
      long library,
      byte[] schema,
      byte[] readerState,
      byte[] partition,
      byte[] acceptedFilters,
      long taskId,
      int stageId,
      int partitionId,
      int attemptNumber,
      Object taskContext);

  /**
   * The next batch of the stream, described as above, or null at its end. The buffers stay
   * valid until the next call of next or closeStream on this stream, whichever comes first.
   */
  public static native long[] next(long stream);

  /** Releases the stream and its last batch. */
  public static native void closeStream(long stream);

  // ---- Writes (driver) ------------------------------------------------------------------

  /**
   * create_writer. {@code mode} is SPARK_DS_WRITE_APPEND (0) or SPARK_DS_WRITE_TRUNCATE (1).
   */
  public static native long createWriter(
      long source, byte[] schema, String queryId, int mode, boolean streaming);

  /** serialize_writer, or null. */
  public static native byte[] serializeWriter(long writer);

  /** commit, with the tasks' messages in partition order; {@code epochId} -1 for a batch. */
  public static native void commit(long writer, long epochId, byte[][] messages);

  /** abort; a null message stands for a task that did not commit. */
  public static native void abort(long writer, long epochId, byte[][] messages);

  public static native void closeWriter(long writer);

  // ---- Writing a task (executor) --------------------------------------------------------

  /** create_data_writer; {@code schema} describes every batch given to write. */
  public static native long createDataWriter(
      long library,
      byte[] schema,
      byte[] writerState,
      long epochId,
      long taskId,
      int stageId,
      int partitionId,
      int attemptNumber,
      Object taskContext);

  /**
   * write: {@code batch} describes Arrow buffers owned by the caller, read only during the
   * call; the JNI library copies them into a batch it moves to the library, as the header says.
   */
  public static native void write(long dataWriter, long[] batch);

  /** commit_data_writer: the task's commit message. */
  public static native byte[] commitDataWriter(long dataWriter);

  public static native void abortDataWriter(long dataWriter);

  public static native void closeDataWriter(long dataWriter);

  // ---- Upcalls --------------------------------------------------------------------------

  /** The library's log (SparkDsHost.log), called from the JNI library on any thread. */
  static void log(String library, int level, String message) {
    dev.sparkds.spark.NativeLog.log(library, level, message);
  }
}
