import dev.sparkds.spark.NativeDataSourceException;
import dev.sparkds.spark.NativeLog;
import dev.sparkds.spark.jni.Native;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Drives the JNI library through the real Native class, in a real JVM: c_range read with
 * pruning and a limit (buffers read in place), the conformance fixture `range` written to with
 * a batch in off-heap memory (its log reaching Native.log), errors as exceptions, and a task
 * context's isInterrupted(). Prints one "ok" line per check; exits 1 on the first failure.
 */
public final class Smoke {
  static sun.misc.Unsafe unsafe;

  /** A TaskContext stand-in: the JNI library only calls isInterrupted()Z. */
  public static final class Task {
    volatile boolean killed;
    volatile int asked;

    public boolean isInterrupted() {
      asked++;
      return killed;
    }
  }

  static void check(boolean condition, String what) {
    if (!condition) {
      System.out.println("FAILED " + what);
      System.exit(1);
    }
    System.out.println("ok " + what);
  }

  /** Finds the library of {@code name} in the directory of {@code path}, loaded by its build. */
  static long load(String name, String path) {
    String[] dirs = {new java.io.File(path).getAbsoluteFile().getParent()};
    String[] found = Native.resolve(name, new String[0], new String[0], dirs, "", "4.3.0");
    check(found[0].equals(new java.io.File(path).getAbsolutePath()) && found[3].isEmpty(),
        "resolve names the file it found, and no package entry");
    return Native.loadBuild(
        name, found[1], found[0], found[3], new String[0], new String[0], "", "4.3.0");
  }

  public static void main(String[] args) throws Exception {
    Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
    f.setAccessible(true);
    unsafe = (sun.misc.Unsafe) f.get(null);
    String cRange = args[0];
    String range = args[1];

    long library = load("c_range", cRange);
    check(library != 0 && library == load("c_range", cRange), "load once per build");

    long source = Native.create(library, "c_range", new String[] {"end"}, new String[] {"100"});
    check((Native.capabilities(source) & 3) == 3, "capabilities");
    byte[] schemaBytes = Native.schema(source);
    Schema schema = Schema.deserializeMessage(ByteBuffer.wrap(schemaBytes));
    check(schema.toString().equals("Schema<id: Int(64, true) not null, label: Utf8>"),
        "schema as an IPC message: " + schema);

    long reader = Native.createReader(source, schemaBytes);
    Schema idOnly = new Schema(List.of(schema.getFields().get(0)));
    check(Native.pruneColumns(reader, idOnly.serializeAsMessage()), "pruneColumns");
    check(Native.pushLimit(reader, 5), "pushLimit");
    byte[][] partitions = Native.partitions(reader);
    byte[] state = Native.serializeReader(reader);
    check(partitions.length == 2 && state != null, "partitions and reader state");
    Native.closeReader(reader);
    Native.close(source);

    Task task = new Task();
    long stream =
        Native.read(
            library, idOnly.serializeAsMessage(), state, partitions[1], null, 42L, 1, 1, 0, task);
    long[] batch = Native.next(stream);
    // [rows, length, null_count, 2 buffers, validity (0, 0), values (address, 8 * rows)]
    check(batch.length == 8 && batch[0] == 5 && batch[3] == 2 && batch[4] == 0 && batch[7] == 40,
        "a batch described in place: " + Arrays.toString(batch));
    long[] ids = new long[5];
    for (int i = 0; i < 5; i++) ids[i] = unsafe.getLong(batch[6] + 8L * i);
    check(Arrays.equals(ids, new long[] {50, 51, 52, 53, 54}), "ids read in place: " + Arrays.toString(ids));
    check(Native.next(stream) == null, "end of the stream");
    check(task.asked > 0, "is_interrupted asked the task context");
    Native.closeStream(stream);
    Native.closeStream(0);

    try {
      Native.create(library, "c_range", new String[] {"end"}, new String[] {"ten"});
      check(false, "a failing create throws");
    } catch (NativeDataSourceException e) {
      check(e.errorClass.equals("NATIVE_DATA_SOURCE_ERROR")
              && e.getMessage().contains("option `end` must be a non-negative integer, got `ten`"),
          "a failing create throws NATIVE_DATA_SOURCE_ERROR: " + e.getMessage());
    }
    try {
      Native.schema(0);
      check(false, "a 0 handle throws");
    } catch (IllegalArgumentException e) {
      check(e.getMessage().startsWith("the source handle is 0"), "a 0 handle throws: " + e.getMessage());
    }
    try {
      Native.loadBuild("x", "0".repeat(64), "/nonexistent/libspark_datasource_x.so", "",
          new String[0], new String[0], "", "4.3.0");
      check(false, "a missing library throws");
    } catch (NativeDataSourceException e) {
      check(e.errorClass.equals("NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND"), "a missing library throws NOT_FOUND");
    }

    // A write: one batch of two int64 in off-heap memory, moved to the library as a copy.
    long fixture = load("range", range);
    long writeSource = Native.create(fixture, "range", new String[0], new String[0]);
    Schema writeSchema = new Schema(List.of(new org.apache.arrow.vector.types.pojo.Field(
        "id", FieldType.notNullable(new ArrowType.Int(64, true)), null)));
    long writer = Native.createWriter(writeSource, writeSchema.serializeAsMessage(), "q", 0, false);
    byte[] writerState = Native.serializeWriter(writer);
    long dataWriter = Native.createDataWriter(
        fixture, writeSchema.serializeAsMessage(), writerState, -1L, 43L, 2, 0, 0, null);
    long values = unsafe.allocateMemory(16);
    unsafe.putLong(values, 7L);
    unsafe.putLong(values + 8, 8L);
    Native.write(dataWriter, new long[] {2, 2, 0, 2, 0, 0, values, 16});
    unsafe.freeMemory(values);
    byte[] message = Native.commitDataWriter(dataWriter);
    check(new String(message, "UTF-8").equals("task 0: 2 rows"), "commitDataWriter: " + new String(message, "UTF-8"));
    Native.closeDataWriter(dataWriter);
    Native.commit(writer, -1L, new byte[][] {message});
    Native.closeWriter(writer);
    Native.close(writeSource);
    boolean logged = false;
    synchronized (NativeLog.LINES) {
      for (String line : NativeLog.LINES) {
        logged |= line.startsWith("range 3 commit epoch -1: [task 0: 2 rows]");
      }
    }
    check(logged, "the library's log reached Native.log: " + NativeLog.LINES);
    System.out.println("done");
  }
}
