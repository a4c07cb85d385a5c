"""Discovery: installed libraries in the native library path, session packages (.sparkpkg
added with addFile / addArtifact), configured packages, and their order."""

import os

from jvm_helpers import executed_plan, install, make_package, native, platform_key


def test_a_library_installed_while_the_session_runs_is_found(spark, c_range_library, dirs):
    path = install(c_range_library, dirs["scratch"], "installed_range")

    df = native(spark, "installed_range", end=4).load()

    assert df.count() == 4
    assert path in executed_plan(df)


def test_a_session_package_is_found_and_extracted(spark, c_range_library, tmp_path):
    package = make_package(
        str(tmp_path / "pkg_range-1.0.sparkpkg"), "pkg_range", c_range_library, platform_key()
    )
    # ANCHOR: package
    spark.sparkContext.addFile(package)  # or spark.addArtifact(package, file=True)
    # ANCHOR_END: package

    df = native(spark, "pkg_range", end=6).load()

    assert sorted(r.id for r in df.collect()) == list(range(6))
    plan = executed_plan(df)
    assert "sparkds-packages" in plan, "the library is extracted under Spark's local dir"


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
    assert "sparkds-packages" in plan


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
    types = gateway.new_array(jvm.java.lang.Class, 3)
    for i in range(3):
        types[i] = string
    load = native_class.getMethod("load", types)
    arguments = gateway.new_array(jvm.java.lang.Object, 3)
    arguments[0] = c_range_library
    arguments[1] = None
    arguments[2] = "4.3.0"

    handle = load.invoke(None, arguments)

    assert handle != 0
    # The first loader's plugin still works.
    assert native(spark, "c_range", end=3).load().count() == 3
