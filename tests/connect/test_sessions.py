"""Connect sessions on one server, each with its own package of one data source name (`multi`
and `solo`), built differently so that what a session reads shows which build ran: c_range's
rows are labelled `label <i>`, e2e_rw's sample `row <i>`, and two c_range builds differ by their
bytes (their packages' names are in the plan). Queries of all sessions run at the same time, and
their tasks on the one executor of local mode.

A Connect session's files are its own in Spark 4.3 (the server keeps them under the session's
id, with or without spark.sql.artifact.isolation.enabled): the specification's isolated
sessions. Classic sessions of one application share the files they add (tests/jvm,
test_discovery.py)."""

import threading

from connect_helpers import failure, native, plan, rows
from jvm_helpers import install, make_package, platform_key


def package(tmp_path, file_name, name, library, extra):
    """A .sparkpkg of a copy of `library` as data source `name`, `extra` bytes appended."""
    build = tmp_path / file_name.replace(".sparkpkg", "")
    build.mkdir()
    copy = install(library, str(build), name, extra=extra)
    return make_package(str(tmp_path / file_name), name, copy, platform_key())


def labels(session, name):
    """The labels of the first three rows of `name` in `session`, and the plan."""
    df = native(session, name).load().select("id", "label").limit(3)
    return rows(df), plan(df)


C_RANGE = [(0, "label 0"), (1, "label 1"), (2, None)]
SAMPLE = [(0, "row 0"), (1, "row 1"), (2, None)]


def read_concurrently(expected, rounds=2):
    """Runs `labels` for each (session, name, rows, package file) of `expected` `rounds` times,
    all sessions at once, and returns what went wrong.

    Spark 4.3 looks the format up with java.util.ServiceLoader in each session's class loader,
    and that lookup, run by several sessions at the same moment, can fail with
    `ServiceConfigurationError: ... Error accessing configuration file` before the plugin is
    reached (Delta's Connect tests meet the same, delta-io/delta#3670). So each session's
    first read runs alone, and a query that fails with that error alone is run again once; any
    other failure, or a second one, is reported."""
    problems = []
    start = threading.Barrier(len(expected))
    for session, name, _, _ in expected:
        labels(session, name)

    def read(session, name):
        try:
            return labels(session, name)
        except Exception as error:  # noqa: BLE001 - only Spark's lookup error is retried
            if "ServiceConfigurationError" not in str(error):
                raise
            return labels(session, name)

    def run(session, name, rows, file_name):
        start.wait()
        for _ in range(rounds):
            try:
                got, shown = read(session, name)
            except Exception as error:  # noqa: BLE001 - reported with the others
                problems.append(f"{file_name}: {str(error).split('JVM stacktrace')[0]}")
                return
            if got != rows or file_name not in shown:
                problems.append(f"{file_name}: read {got} with the plan {shown}")

    threads = [threading.Thread(target=run, args=case) for case in expected]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return problems


def test_two_sessions_each_read_their_own_package_of_one_name_at_the_same_time(
    new_session, c_range_library, writer_library, tmp_path
):
    first, second = new_session(), new_session()
    a = package(tmp_path, "solo-a.sparkpkg", "solo", c_range_library, b"solo a")
    b = package(tmp_path, "solo-b.sparkpkg", "solo", writer_library, b"solo b")
    # ANCHOR: add_package
    first.addArtifact(a, file=True)
    # ANCHOR_END: add_package
    second.addArtifact(b, file=True)

    problems = read_concurrently(
        [(first, "solo", C_RANGE, "solo-a.sparkpkg"), (second, "solo", SAMPLE, "solo-b.sparkpkg")]
    )

    assert problems == []


def test_three_sessions_read_their_own_builds_and_one_without_falls_back(
    new_session, c_range_library, writer_library, scratch, tmp_path
):
    # `multi` is also installed on the server: a session that added no package reads it.
    install(c_range_library, scratch["installed"], "multi", extra=b"installed multi")
    sessions = [new_session() for _ in range(4)]
    builds = [
        ("multi-1.sparkpkg", c_range_library, C_RANGE),
        ("multi-2.sparkpkg", writer_library, SAMPLE),
        ("multi-3.sparkpkg", c_range_library, C_RANGE),
    ]
    expected = []
    for session, (file_name, library, rows) in zip(sessions, builds):
        session.addArtifacts(
            package(tmp_path, file_name, "multi", library, file_name.encode()), file=True
        )
        expected.append((session, "multi", rows, file_name))
    expected.append((sessions[3], "multi", C_RANGE, "libspark_datasource_multi.so"))

    problems = read_concurrently(expected)

    assert problems == []
    _, shown = labels(sessions[3], "multi")
    assert "sparkpkg" not in shown, "a session without packages reads the installed library"


def test_a_session_without_packages_does_not_see_those_of_others(new_session, c_range_library,
                                                                  tmp_path):
    owner, other = new_session(), new_session()
    owner.addArtifact(
        package(tmp_path, "private-1.sparkpkg", "private_range", c_range_library, b"p"), file=True
    )
    assert labels(owner, "private_range")[0] == C_RANGE

    error = failure(lambda: native(other, "private_range").load().schema)

    assert error.getCondition() == "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND"
    # Not even named: the packages of other sessions are no places this session searches.
    assert "private-1.sparkpkg" not in str(error)


def test_what_a_session_added_is_gone_with_it(new_session, server, c_range_library, tmp_path):
    from pyspark.sql import SparkSession

    ending = SparkSession.builder.remote(server).create()
    ending.addArtifact(
        package(tmp_path, "ended-1.sparkpkg", "ended_range", c_range_library, b"e"), file=True
    )
    assert labels(ending, "ended_range")[0] == C_RANGE
    ending.stop()

    later = new_session()
    error = failure(lambda: native(later, "ended_range").load().schema)

    assert error.getCondition() == "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND"
    assert "ended-1.sparkpkg" not in str(error)
