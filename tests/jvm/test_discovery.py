"""Discovery: installed libraries in the native library path, session packages (.sparkpkg
added with addFile / addArtifact), configured packages, and their order."""

import os

import pytest

from jvm_helpers import executed_plan, install, make_package, native, platform_key, sha256_of


@pytest.mark.core
def test_a_library_installed_while_the_session_runs_is_found(spark, c_range_library, dirs):
    path = install(c_range_library, dirs["scratch"], "installed_range")

    df = native(spark, "installed_range", end=4).load()

    assert df.count() == 4
    assert path in executed_plan(df)


def private_copies_left(spark):
    """What the plugin left of its private copies in the directory of the session's files."""
    root = spark.sparkContext._jvm.org.apache.spark.SparkFiles.getRootDirectory()
    return [name for name in os.listdir(root) if name.startswith("sparkds-load-")]


@pytest.mark.core
def test_a_session_package_is_found_and_loaded_from_the_package(spark, c_range_library, tmp_path):
    package = make_package(
        str(tmp_path / "pkg_range-1.0.sparkpkg"), "pkg_range", c_range_library, platform_key()
    )
    # ANCHOR: package
    spark.sparkContext.addFile(package)  # or spark.addArtifact(package, file=True)
    # ANCHOR_END: package

    df = native(spark, "pkg_range", end=6).load()

    assert sorted(r.id for r in df.collect()) == list(range(6))
    assert package in executed_plan(df), "the plan names the package the library came from"
    # Read from the package and loaded from a private copy that is gone once loaded: nothing
    # was extracted where another user could replace it.
    assert private_copies_left(spark) == []


def test_a_configured_package_directory_is_searched(spark, c_range_library, dirs):
    make_package(
        os.path.join(dirs["packages"], "cfg_range.sparkpkg"),
        "cfg_range",
        c_range_library,
        platform_key(),
    )

    assert native(spark, "cfg_range", end=9).load().count() == 9


def test_a_session_package_comes_before_an_installed_library(
    spark, c_range_library, dirs, tmp_path
):
    installed = install(c_range_library, dirs["scratch"], "both_range")
    package = make_package(
        str(tmp_path / "both_range-2.0.sparkpkg"), "both_range", c_range_library, platform_key()
    )
    # What the book tells sessions to call: in Spark 4.3 it adds the file to the context.
    spark.addArtifact(package, file=True)

    plan = executed_plan(native(spark, "both_range", end=2).load())

    assert installed not in plan
    assert package in plan


def test_a_package_without_this_platform_is_reported(spark, c_range_library, tmp_path):
    other = "osx-aarch64" if not platform_key().startswith("osx") else "linux-x86_64"
    package = make_package(
        str(tmp_path / "elsewhere_range.sparkpkg"), "elsewhere_range", c_range_library, other
    )
    spark.sparkContext.addFile(package)

    try:
        native(spark, "elsewhere_range").load()
        raise AssertionError("a package without this platform's library loaded")
    except AssertionError:
        raise
    except Exception as error:  # the error class and the platform are named
        text = str(error)
    assert "elsewhere_range" in text
    assert platform_key() in text


def test_a_second_class_loader_loads_the_plugin_again(spark, jar, c_range_library):
    # A JVM ties a JNI library to one class loader; Spark Connect's isolated sessions load a
    # jar in a class loader each. The plugin extracts a copy of its JNI library per loader.
    jvm = spark._jvm
    gateway = spark.sparkContext._gateway
    spark_loader = jvm.org.apache.spark.SparkContext._java_lang_class.getClassLoader()
    urls = gateway.new_array(jvm.java.net.URL, 1)
    urls[0] = jvm.java.io.File(jar).toURI().toURL()
    loader = jvm.java.net.URLClassLoader(urls, spark_loader)
    native_class = loader.loadClass("dev.sparkds.spark.jni.Native")
    assert native_class != jvm.dev.sparkds.spark.jni.Native._java_lang_class

    string = jvm.java.lang.String._java_lang_class
    no_strings = gateway.new_array(jvm.java.lang.String, 0)
    strings = no_strings.getClass()
    kinds = [string, string, string, string, strings, strings, string, string]
    types = gateway.new_array(jvm.java.lang.Class, len(kinds))
    for i, kind in enumerate(kinds):
        types[i] = kind
    load = native_class.getMethod("loadBuild", types)
    values = ["c_range", sha256_of(c_range_library), c_range_library, "", no_strings,
              no_strings, "", "4.3.0"]
    arguments = gateway.new_array(jvm.java.lang.Object, len(values))
    for i, value in enumerate(values):
        arguments[i] = value

    handle = load.invoke(None, arguments)

    assert handle != 0
    # The first loader's plugin still works.
    assert native(spark, "c_range", end=3).load().count() == 3


def test_an_executor_loads_the_drivers_package_build_from_its_copy_of_the_session_files(
    spark, c_range_library, tmp_path
):
    # A build of its own (bytes appended), so that this JVM has not loaded it yet.
    library = install(c_range_library, str(tmp_path), "copy_range", extra=b"copy_range")
    package = make_package(
        str(tmp_path / "copy_range-1.0.sparkpkg"), "copy_range", library, platform_key()
    )
    spark.sparkContext.addFile(package)
    entry = f"{platform_key()}/{os.path.basename(library)}"
    ref_class = spark._jvm.dev.sparkds.spark.LibraryRef
    # The driver's path does not exist on this node: the session's copy serves.
    missing = "/nonexistent/copy_range-1.0.sparkpkg"
    other_build = "0" * 63 + "2"
    wrong = ref_class("copy_range", missing, other_build, "session package " + missing, entry)
    try:
        wrong.executorHandle()
        raise AssertionError("another build was loaded")
    except AssertionError:
        raise
    except Exception as error:  # noqa: BLE001 - py4j's error carries the Java exception
        text = str(error)
    assert "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND" in text
    assert other_build in text and sha256_of(library) in text, "both checksums are named"

    ref = ref_class("copy_range", missing, sha256_of(library), "session package " + missing, entry)
    assert ref.executorHandle() != 0
    assert private_copies_left(spark) == []
