"""Helpers of the JVM plugin's tests."""

import contextlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def platform_key() -> str:
    machine = os.uname().machine
    arch = "aarch64" if machine in ("aarch64", "arm64") else machine
    return ("osx" if sys.platform == "darwin" else "linux") + "-" + arch


def native(spark, source: str, **options):
    """spark.read.format("native").option("source", source) with `options`."""
    reader = spark.read.format("native").option("source", source)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader


def executed_plan(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def error_text(raised) -> str:
    """The text of a failure, with the JVM's cause chain (py4j keeps it in the message)."""
    return str(raised.value)


def sha256_of(path: str) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def install(source: str, directory: str, name: str, extra: bytes = b"") -> str:
    """Installs a copy of the library `source` as data source `name` in `directory`, by
    renaming a complete file into place (a loaded library must never be rewritten in place).
    `extra` bytes appended make another build of the same code (another SHA-256)."""
    import os
    import shutil
    import sys

    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    target = os.path.join(directory, f"libspark_datasource_{name}{suffix}")
    temporary = target + ".tmp"
    shutil.copyfile(source, temporary)
    if extra:
        with open(temporary, "ab") as f:
            f.write(extra)
    os.replace(temporary, target)
    return target


def make_package(path: str, name: str, library: str, platform: str, abi_version: int = 1):
    """A .sparkpkg as the specification shows: a zip of the manifest and the library."""
    import json
    import sys
    import zipfile

    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    member = f"{platform}/libspark_datasource_{name}{suffix}"
    manifest = {"abiVersion": abi_version, "dataSources": [name], "libraries": {platform: member}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("spark-native-datasource.json", json.dumps(manifest))
        archive.write(library, member)
    return path


@contextlib.contextmanager
def captured(spark, logger_name, level):
    """What `logger_name` (the root logger for "") logs at `level` or above while the block
    runs, as `LEVEL name message` lines: a log4j appender on that logger, removed afterwards."""
    jvm = spark._jvm
    core = jvm.org.apache.logging.log4j.core
    manager = jvm.org.apache.logging.log4j.LogManager
    logger = manager.getLogger(logger_name) if logger_name else manager.getRootLogger()
    writer = jvm.java.io.StringWriter()
    layout = core.layout.PatternLayout.newBuilder().withPattern("%p %c %m%n").build()
    appender = core.appender.WriterAppender.createAppender(
        layout, None, writer, "sparkds-test", False, True
    )
    appender.start()
    previous = logger.getLevel()
    logger.addAppender(appender)
    # The root's level is its configuration's, which every logger without one of its own uses.
    set_level = core.config.Configurator.setRootLevel if not logger_name else logger.setLevel
    set_level(getattr(jvm.org.apache.logging.log4j.Level, level))
    lines = []
    try:
        yield lines
    finally:
        logger.removeAppender(appender)
        set_level(previous)
        appender.stop()
        lines.extend(writer.toString().splitlines())
