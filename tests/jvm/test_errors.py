"""Each error class of the plugin, with its message."""

import os
import subprocess
import sys
import textwrap

import pytest

from jvm_helpers import ROOT, install, make_package, native, platform_key, sha256_of


def failure(action) -> str:
    with pytest.raises(Exception) as raised:
        action()
    return str(raised.value)


@pytest.mark.core
def test_a_missing_library_names_every_place_searched(spark, dirs):
    text = failure(lambda: native(spark, "no_such_source").load())

    assert "[NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND]" in text
    assert "libspark_datasource_no_such_source" in text
    assert dirs["scratch"] in text


@pytest.mark.core
def test_the_format_needs_the_option_source(spark):
    text = failure(lambda: spark.read.format("native").load())

    assert "[NATIVE_DATA_SOURCE_MISSING_SOURCE]" in text
    assert '.option("source", "c_range")' in text


@pytest.mark.core
def test_a_failing_library_function_reports_the_library_message(spark):
    text = failure(lambda: native(spark, "c_range", end="ten").load())

    assert "[NATIVE_DATA_SOURCE_ERROR]" in text
    assert "c_range" in text and "create" in text
    assert "option `end` must be a non-negative integer, got `ten`" in text


@pytest.mark.core
def test_a_failure_on_the_executor_reports_the_library_message(spark, tmp_path):
    # The table exists but has no data: the library fails while planning its partitions.
    text = failure(lambda: native(spark, "e2e_rw", path=str(tmp_path / "none")).load().collect())

    assert "[NATIVE_DATA_SOURCE_ERROR]" in text
    assert "write to it first, or check the option `path`" in text


def test_an_executor_refuses_a_build_other_than_the_drivers(spark, c_range_library):
    # What an executor does with a partition: load the build whose SHA-256 the driver computed.
    # Here the driver's checksum is of another build of c_range, which no directory of this
    # executor holds (local mode shares one JVM, so the executor's step is called directly).
    other_build = "0" * 63 + "1"
    ref = spark._jvm.dev.sparkds.spark.LibraryRef(
        "c_range", c_range_library, other_build, "library path", ""
    )

    text = failure(lambda: ref.executorHandle())

    assert "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND" in text
    assert other_build in text
    assert sha256_of(c_range_library) in text, "the builds found and their checksums"


def test_a_library_replaced_after_loading_is_refused(spark, c_range_library, dirs):
    install(c_range_library, dirs["scratch"], "swapped")
    assert native(spark, "swapped", end=3).load().count() == 3

    install(c_range_library, dirs["scratch"], "swapped", extra=b"another build")
    text = failure(lambda: native(spark, "swapped", end=3).load().count())

    assert "[INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED]" in text
    assert "swapped" in text


def test_a_file_that_is_not_a_library_fails_to_initialize(spark, dirs, tmp_path):
    text_file = tmp_path / "not_a_library.txt"
    text_file.write_text("not a shared library\n")
    install(str(text_file), dirs["scratch"], "not_a_library")

    text = failure(lambda: native(spark, "not_a_library").load())

    assert "[INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED]" in text
    assert "not_a_library" in text


def within_seconds(action, seconds=30):
    """What `action()` returns or raises, run on a thread; fails when it has not returned in
    `seconds`, as a blocking open of a named pipe would not."""
    import threading

    outcome = {}

    def run():
        try:
            outcome["value"] = action()
        except Exception as error:  # noqa: BLE001 - handed back to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def test_a_named_pipe_in_the_library_path_fails_the_query_at_once_naming_it(spark, dirs):
    pipe = os.path.join(dirs["scratch"], "libspark_datasource_piped.so")
    os.mkfifo(pipe)
    try:
        text = failure(lambda: within_seconds(lambda: native(spark, "piped").load()))
    finally:
        os.unlink(pipe)

    assert "[INVALID_NATIVE_DATA_SOURCE_LIBRARY.INIT_FAILED]" in text
    assert (
        f"the library {pipe} is refused: it is a named pipe (FIFO), not a regular file; put the "
        f"library's file there, or remove what is there"
    ) in text


def test_a_named_pipe_among_the_packages_is_skipped_at_once_with_its_reason(spark, dirs):
    configured = os.path.join(dirs["packages"], "piped.sparkpkg")
    session = os.path.join(dirs["scratch"], "session-piped.sparkpkg")
    os.mkfifo(configured)
    os.mkfifo(session)
    jvm = spark._jvm
    gateway = spark.sparkContext._gateway

    def strings(*items):
        array = gateway.new_array(jvm.java.lang.String, len(items))
        for i, item in enumerate(items):
            array[i] = item
        return array

    try:
        # The driver's discovery, given the pipe as a session package (SparkContext.addFile
        # would itself wait on it while copying it).
        text = failure(lambda: within_seconds(lambda: jvm.dev.sparkds.spark.jni.Native.resolve(
            "piped", strings(session), strings(dirs["packages"]), strings(), "", "4.3.0"
        )))
    finally:
        os.unlink(configured)
        os.unlink(session)

    assert "[NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND]" in text
    for pipe in (session, configured):
        assert f"{pipe}: cannot open it: it is a named pipe (FIFO), not a regular file" in text


def test_a_library_of_another_interface_version_is_refused(spark, dirs):
    # tests/jvm/fixtures/abi_version_2.c declares version 2 of the interface.
    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "abi_version_2.c")
    header = os.path.join(ROOT, "crates", "spark-datasource")
    library = os.path.join(dirs["scratch"], "libspark_datasource_abi_two.so")
    subprocess.run(
        ["cc", "-std=c11", "-Wall", "-Werror", "-shared", "-fPIC", "-I", header, "-o", library,
         fixture],
        check=True,
    )

    text = failure(lambda: native(spark, "abi_two").load())

    assert "[INVALID_NATIVE_DATA_SOURCE_LIBRARY.UNSUPPORTED_ABI_VERSION]" in text
    assert "the table declares abi_version 2, but this host supports version 1 only" in text


@pytest.mark.parametrize(
    "os_name, arch, musl",
    [
        ("Linux", "ppc64le", False),
        ("Linux", "s390x", False),
        ("Linux", "amd64", True),  # Alpine Linux: musl, not glibc
        ("Windows 11", "aarch64", False),
        ("FreeBSD", "amd64", False),
    ],
)
def test_an_unsupported_platform_is_refused_with_its_class(spark, os_name, arch, musl):
    # The platforms of the specification; the JVM's own os.name and os.arch cannot be changed
    # here, so the step that maps them is called with another platform's values.
    libraries = spark._jvm.dev.sparkds.spark.JniLibrary

    text = failure(lambda: libraries.platformOf(os_name, arch, musl))

    assert "NATIVE_DATA_SOURCE_UNSUPPORTED_PLATFORM" in text
    assert f"not on {os_name} {arch}" in text


def test_the_supported_platforms_have_their_manifest_keys(spark):
    libraries = spark._jvm.dev.sparkds.spark.JniLibrary
    cases = {
        ("Linux", "amd64"): "linux-x86_64",
        ("Linux", "aarch64"): "linux-aarch64",
        ("Mac OS X", "x86_64"): "osx-x86_64",
        ("Mac OS X", "aarch64"): "osx-aarch64",
        ("Windows 10", "amd64"): "windows-x86_64",
    }
    for (os_name, arch), key in cases.items():
        assert libraries.platformOf(os_name, arch, False) == key
    assert libraries.platform() in cases.values()


@pytest.mark.core
def test_errors_are_spark_throwables_with_their_class(spark):
    from py4j.protocol import Py4JJavaError

    with pytest.raises(Py4JJavaError) as raised:
        native(spark, "no_such_source").load()

    error = raised.value.java_exception
    assert error.getCondition() == "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND"
    assert spark._jvm.org.apache.spark.SparkThrowable._java_lang_class.isInstance(error)
    assert error.getMessageParameters().get("message") in error.getMessage()
    # Every message ends with its class's row in the book's errors chapter.
    assert error.getMessage().endswith(
        " See https://sparkds.github.io/spark-datasource-template/jvm/errors.html"
        "#native-data-source-library-not-found"
    )


def test_two_configured_packages_of_one_name_are_ambiguous(spark, c_range_library, dirs):
    packages = [
        make_package(
            os.path.join(dirs["packages"], f"twice_range-{n}.sparkpkg"),
            "twice_range",
            c_range_library,
            platform_key(),
        )
        for n in (1, 2)
    ]
    try:
        text = failure(lambda: native(spark, "twice_range").load())
    finally:
        for package in packages:
            os.unlink(package)

    assert "[INVALID_NATIVE_DATA_SOURCE_LIBRARY.AMBIGUOUS]" in text
    assert "native data source `twice_range` is provided by 2 configured packages" in text
    assert all(package in text for package in packages)
    assert "keep one of them in spark.sql.dataSource.native.paths" in text
    assert "jvm/errors.html#invalid-native-data-source-library-ambiguous" in text


def test_an_unknown_column_vectors_value_is_an_invalid_conf(spark):
    spark.conf.set("spark.sparkds.columnVectors", "fastest")
    try:
        text = failure(lambda: native(spark, "c_range", end=3).load().collect())
    finally:
        spark.conf.unset("spark.sparkds.columnVectors")

    assert "[NATIVE_DATA_SOURCE_INVALID_CONF]" in text
    assert "spark.sparkds.columnVectors must be `native` or `arrow`, got `fastest`" in text
    assert "jvm/errors.html#native-data-source-invalid-conf" in text


def test_a_checkpoint_of_another_source_is_an_invalid_offset(spark, tmp_path):
    checkpoint = str(tmp_path / "checkpoint")
    output = str(tmp_path / "out")

    def start():
        stream = spark.readStream.format("native").option("source", "c_range").load()
        return (
            stream.writeStream.format("parquet")
            .option("path", output)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )

    start().awaitTermination(180)
    # What the checkpoint of another source holds: an offset that is not the plugin's JSON.
    offsets = os.path.join(checkpoint, "offsets")
    last = max((name for name in os.listdir(offsets) if name.isdigit()), key=int)
    with open(os.path.join(offsets, last)) as f:
        lines = f.read().splitlines()
    lines[-1] = '{"topic":{"0":42}}'
    with open(os.path.join(offsets, last), "w") as f:
        f.write("\n".join(lines) + "\n")

    def restart():
        query = start()
        try:
            query.awaitTermination(180)
        finally:
            query.stop()

    text = failure(restart)

    assert "[NATIVE_DATA_SOURCE_INVALID_OFFSET]" in text
    assert 'the checkpoint holds the offset `{"topic":{"0":42}}`' in text
    assert "use a new checkpointLocation" in text
    assert "jvm/errors.html#native-data-source-invalid-offset" in text


def test_a_disabled_application_refuses_to_load_native_data_sources(jar, c_range_library):
    # spark.sql.dataSource.native.enabled is static: it needs an application of its own.
    script = textwrap.dedent(
        f"""
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]")
                 .config("spark.jars", {jar!r})
                 .config("spark.driver.extraLibraryPath", {os.path.dirname(c_range_library)!r})
                 .config("spark.sql.dataSource.native.enabled", "false")
                 .config("spark.ui.enabled", "false")
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        try:
            spark.read.format("native").option("source", "c_range").load().collect()
            print("LOADED")
        except Exception as error:
            print(str(error))
        spark.stop()
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )

    assert result.returncode == 0, result.stderr
    assert "[NATIVE_DATA_SOURCE_DISABLED]" in result.stdout, result.stdout + result.stderr
    assert "spark.sql.dataSource.native.enabled=false" in result.stdout
    assert "c_range" in result.stdout


@pytest.mark.core
def test_a_jar_of_another_spark_line_fails_at_first_use_naming_both_versions(spark, jar, tmp_path):
    # SPARKDS_JVM_OTHER_LINE_JAR: a jar built against another Spark line (tests/lines passes
    # one); otherwise this session's jar relabeled as built for another line.
    other = os.environ.get("SPARKDS_JVM_OTHER_LINE_JAR") or relabeled(jar, str(tmp_path))
    built_for = jar_line(other)
    session = spark.version
    assert built_for != ".".join(session.split(".")[:2])
    jvm = spark._jvm
    gateway = spark.sparkContext._gateway
    # A class loader of its own, above Spark's: its classes are the other jar's, not the
    # session's (as the second class loader of test_discovery.py).
    urls = gateway.new_array(jvm.java.net.URL, 1)
    urls[0] = jvm.java.io.File(other).toURI().toURL()
    spark_loader = jvm.org.apache.spark.SparkContext._java_lang_class.getClassLoader()
    loader = jvm.java.net.URLClassLoader(urls, spark_loader)
    source_class = loader.loadClass("dev.sparkds.spark.DefaultSource")
    source = source_class.getDeclaredConstructor(gateway.new_array(jvm.java.lang.Class, 0))
    source = source.newInstance(gateway.new_array(jvm.java.lang.Object, 0))
    given = jvm.java.util.HashMap()
    given.put("source", "c_range")

    # What Spark calls first on spark.read.format("native").load().
    options = jvm.org.apache.spark.sql.util.CaseInsensitiveStringMap(given)
    text = failure(lambda: source.inferSchema(options))

    assert "[NATIVE_DATA_SOURCE_UNSUPPORTED_SPARK_VERSION]" in text
    assert f"built for Spark {built_for} " in text
    assert f"the session runs Spark {session}:" in text
    assert "NoSuchMethodError" not in text and "NoClassDefFoundError" not in text


def jar_line(jar: str) -> str:
    """The Spark line a jar is built for, from its spark-line.properties."""
    import zipfile

    with zipfile.ZipFile(jar) as archive:
        properties = archive.read("dev/sparkds/spark/spark-line.properties").decode()
    return dict(line.split("=", 1) for line in properties.splitlines() if "=" in line)["line"]


def relabeled(jar: str, directory: str) -> str:
    """A copy of `jar` whose spark-line.properties names another line than its own."""
    import zipfile

    line = jar_line(jar)
    other = "3.5" if line != "3.5" else "4.3"
    copy = os.path.join(directory, f"spark-native-datasource-spark-{other}.jar")
    entry = "dev/sparkds/spark/spark-line.properties"
    with zipfile.ZipFile(jar) as source, zipfile.ZipFile(copy, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == entry:
                data = data.decode().replace(f"line={line}\n", f"line={other}\n").encode()
            target.writestr(item, data)
    return copy
