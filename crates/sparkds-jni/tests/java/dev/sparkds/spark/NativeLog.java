package dev.sparkds.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The smoke test's stand-in for the plugin's log: keeps the lines for the test to check. */
public final class NativeLog {
  private NativeLog() {}

  public static final List<String> LINES = Collections.synchronizedList(new ArrayList<>());

  public static void log(String library, int level, String message) {
    LINES.add(library + " " + level + " " + message + " [" + Thread.currentThread().getName() + "]");
  }
}
