package dev.sparkds.spark;

import dev.sparkds.spark.jni.Native;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;

/**
 * The outcome of filter pushdown for one scan: the predicates Spark gave, the message of
 * spark_datasource_filters.h that the encodable ones became, the library's answers, and what
 * becomes of the accepted ones (the option acceptedFilters).
 *
 * <p>The scan offers the same message to the reader that plans the partitions, and fails when
 * the answers differ: Spark has dropped the accepted predicates from its plan by then (unless
 * it evaluates them again).
 */
final class PushedFilters {
  static final PushedFilters NONE =
      new PushedFilters(
          new Predicate[0],
          new Predicate[0],
          null,
          null,
          null,
          SourceOptions.AcceptedFilters.CHECK);

  private final Predicate[] accepted;
  private final Predicate[] postScan;
  // The message offered (null when nothing was), and the answers to replay it against.
  private final byte[] message;
  private final byte[] answers;
  // The accepted predicates alone, as a message: what the executors check every row against
  // (null when none was accepted).
  private final byte[] acceptedMessage;
  private final SourceOptions.AcceptedFilters mode;

  private PushedFilters(
      Predicate[] accepted,
      Predicate[] postScan,
      byte[] message,
      byte[] answers,
      byte[] acceptedMessage,
      SourceOptions.AcceptedFilters mode) {
    this.accepted = accepted;
    this.postScan = postScan;
    this.message = message;
    this.answers = answers;
    this.acceptedMessage = acceptedMessage;
    this.mode = mode;
  }

  /**
   * @param offered the predicates of {@code all} that {@code message} encodes, in its order
   * @param encoded each of {@code offered} encoded, in the same order
   * @param answers the library's answer for each of {@code offered}, or null when nothing was
   *     offered or the library has no filter extension (nothing is then accepted)
   * @param mode what becomes of the accepted predicates: with REEVALUATE, Spark evaluates them
   *     after the scan too
   */
  static PushedFilters of(
      String name,
      Predicate[] all,
      List<Predicate> offered,
      List<byte[]> encoded,
      byte[] message,
      byte[] answers,
      SourceOptions.AcceptedFilters mode) {
    if (answers == null) {
      return new PushedFilters(new Predicate[0], all.clone(), null, null, null, mode);
    }
    Map<Predicate, Boolean> isAccepted = new IdentityHashMap<>();
    List<byte[]> acceptedBytes = new ArrayList<>();
    for (int i = 0; i < offered.size(); i++) {
      isAccepted.put(offered.get(i), answers[i] == 1);
      if (answers[i] == 1) {
        acceptedBytes.add(encoded.get(i));
      }
    }
    List<Predicate> accepted = new ArrayList<>();
    List<Predicate> postScan = new ArrayList<>();
    for (Predicate predicate : all) {
      boolean byLibrary = Boolean.TRUE.equals(isAccepted.get(predicate));
      if (byLibrary) {
        accepted.add(predicate);
      }
      if (!byLibrary || mode == SourceOptions.AcceptedFilters.REEVALUATE) {
        postScan.add(predicate);
      }
    }
    return new PushedFilters(
        accepted.toArray(new Predicate[0]),
        postScan.toArray(new Predicate[0]),
        message,
        answers.clone(),
        acceptedBytes.isEmpty() ? null : FilterEncoder.message(acceptedBytes),
        mode);
  }

  Predicate[] accepted() {
    return accepted.clone();
  }

  Predicate[] postScan() {
    return postScan.clone();
  }

  /** Whether Spark evaluates no predicate after the scan (true when there were none). */
  boolean allAccepted() {
    return postScan.length == 0;
  }

  /**
   * The accepted predicates as one message, for the executors to check every row against: null
   * when none was accepted, or when the option acceptedFilters is not {@code check}.
   */
  byte[] toCheck() {
    return mode == SourceOptions.AcceptedFilters.CHECK ? acceptedMessage : null;
  }

  /**
   * The top-level columns that the accepted predicates name, when the executors check them:
   * the read must keep them, though the query may not need them.
   */
  Set<String> columnsToCheck() {
    Set<String> columns = new LinkedHashSet<>();
    if (toCheck() != null) {
      for (Predicate predicate : accepted) {
        for (NamedReference reference : predicate.references()) {
          columns.add(reference.fieldNames()[0]);
        }
      }
    }
    return columns;
  }

  /** The message offered, or null when none was. */
  byte[] message() {
    return message == null ? null : message.clone();
  }

  /** The library's answers to {@link #message}, one byte per predicate, or null. */
  byte[] answers() {
    return answers == null ? null : answers.clone();
  }

  /**
   * As Spark's own scans show them: `PushedFilters: [id > 3, id < 10]`, or "" for none; dates
   * and timestamps as SQL literals (see PlanText).
   */
  String describe() {
    if (accepted.length == 0) {
      return "";
    }
    List<String> shown = new ArrayList<>();
    for (Predicate predicate : accepted) {
      shown.add(PlanText.of(predicate));
    }
    return " PushedFilters: [" + String.join(", ", shown) + "]";
  }

  /** What becomes of the accepted predicates, for the plan: "" when none was accepted. */
  String describeMode() {
    return accepted.length == 0 ? "" : " AcceptedFilters: " + mode.value();
  }
}
