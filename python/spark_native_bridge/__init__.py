"""Run a native data source on Apache Spark 4.0 to 4.3, through the Python Data Source API.

Spark 4.4 loads native data sources itself. Earlier releases cannot, but their Python Data Source
API can host one: this package creates a ``DataSource`` whose methods call the library's
functions (``spark_datasource.h``, version 1) through ``ctypes``, and hand data across with
pyarrow's implementation of the Arrow C data interface::

    from spark_native_bridge import register

    register(spark, "target/release/libspark_datasource_my_source.so")
    spark.read.format("my_source").option("end", 100).load().show()

Every executor must be able to import this package (see :func:`ship_to_executors`) and load the
library from the same path, or find the same build in its library path.
"""

import atexit
import os
import shutil
import tempfile
import zipfile
from typing import Optional, Tuple, Type

from ._native import NativeDataSourceError, data_source_name, library_file_name, load_private_copy
from ._private import copy as _private_copy

__all__ = [
    "register",
    "register_package",
    "data_source_name",
    "library_file_name",
    "ship_to_executors",
    "NativeDataSourceError",
]

__version__ = "0.1.0"


def register(spark, library_path: str, name: Optional[str] = None) -> Type:
    """Registers the native data source of `library_path` with `spark`, and returns its class.

    The data source is named `name`, or after the library file:
    ``libspark_datasource_<name>.so`` (``.dylib`` on macOS, ``spark_datasource_<name>.dll`` on
    Windows). Spark then reads and writes it with ``format(name)``, in batch and streaming
    queries, as far as the library declares the capabilities.

    The file is read once, hashed while it is copied into a private directory, and that copy
    is loaded, here to fail early if it is not a valid library: its SHA-256 is the build that
    every process runs. The executors load only a build with that checksum, found at the same
    path or in their library path, each from a private copy too.

    Raises:
        ValueError: `name` is None and the file name does not follow the convention.
        NativeDataSourceError: the library cannot be loaded, or its table is invalid.
    """
    path = os.path.abspath(library_path)
    if name is None:
        name = data_source_name(path)
    return _register(spark, path, name.lower())


def register_package(spark, package_path: str, name: Optional[str] = None) -> Type:
    """Registers the data source `name` of a native data source package (``.sparkpkg``) with
    `spark`, and adds the package to the session's files, so that every executor extracts the
    library of its own platform from it: no node needs the library installed.

    `name` may be left out when the package provides one data source. The package is copied
    into a private directory and checked there as ``sparkds verify`` checks it (structure,
    limits, manifest, names), then the library of this platform is read from that copy, hashed
    and loaded: its SHA-256 is the build that every process runs. An executor loads only a
    build with that checksum, from the session's copy of the package, else from its library
    path.

    Raises:
        ValueError: the package is not a valid package, has no library for this platform, or
            does not provide `name`.
        NativeDataSourceError: the library cannot be loaded, or its table is invalid.
    """
    from ._package import read_library
    from ._private import private_directory

    package_path = os.path.abspath(package_path)
    with private_directory() as directory:
        extracted = read_library(package_path, name, directory)
        origin = f"{package_path} ({extracted.entry})"
        library = _library(spark, None, extracted.name, extracted.sha256, os.path.basename(package_path))
        load_private_copy(extracted.path, extracted.name, extracted.sha256, origin)
    try:
        context = spark.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        context = None
    if context is not None:
        context.addFile(package_path)
    else:
        spark.addArtifacts(package_path, file=True)
    return _register_class(spark, library)


def _register(spark, path: str, name: str) -> Type:
    from ._private import open_regular, private_directory, reason

    with private_directory() as directory:
        try:
            source = open_regular(path)
        except OSError as error:
            raise NativeDataSourceError(name, "load", f"cannot load {path}: {reason(error)}") from None
        with source:
            copy, sha256, _ = _private_copy(source, directory, os.path.basename(path))
        library = _library(spark, path, name, sha256, None)
        load_private_copy(copy, name, sha256, path)
    return _register_class(spark, library)


def _library(spark, path: Optional[str], name: str, sha256: str, package: Optional[str]):
    from ._datasource import _Library

    return _Library(
        path=path,
        sha256=sha256,
        name=name,
        package=package,
        redaction=_redaction_patterns(spark),
    )


def _redaction_patterns(spark) -> Tuple[str, ...]:
    """The session's spark.redaction.regex and spark.sql.redaction.options.regex, read on the
    driver: the Python workers have no session to ask. Spark's defaults always apply too."""
    patterns = []
    for key in ("spark.redaction.regex", "spark.sql.redaction.options.regex"):
        try:
            value = spark.conf.get(key, None)
        except Exception:  # noqa: BLE001 - a conf that cannot be read leaves the defaults
            value = None
        if value:
            patterns.append(str(value))
    return tuple(patterns)


def _register_class(spark, library) -> Type:
    from ._datasource import PUSHES_FILTERS, NativeDataSource

    name = library.name
    if not PUSHES_FILTERS and library.load().push_filters_function is not None:
        _log_no_pushdown(name)
    class_name = "NativeDataSource_" + "".join(c if c.isalnum() else "_" for c in name)
    data_source = type(class_name, (NativeDataSource,), {"_library": library})
    spark.dataSource.register(data_source)
    return data_source


def _log_no_pushdown(name: str) -> None:
    import logging

    import pyspark

    logging.getLogger("spark_native_bridge").warning(
        "%s accepts filters, but the bridge offers it none on pyspark %s: this pyspark reuses "
        "the read plan that one query's filters made for later scans of the same DataFrame, "
        "which would read the wrong rows, so Spark evaluates every filter itself. The JVM "
        "plugin pushes filters on every Spark line (see the book's page on filters).",
        name,
        pyspark.__version__,
    )


def ship_to_executors(spark) -> str:
    """Adds this package to `spark` as a zip of Python files, so that the Python workers of the
    executors can import it, and returns the path of the zip.

    Not needed when the executors already have it installed, or in local mode when the driver's
    PYTHONPATH contains it (the workers inherit the environment).
    """
    package = os.path.dirname(os.path.abspath(__file__))
    # Spark serves an added file from where it is, for the whole session: the zip is removed
    # when this process ends.
    directory = tempfile.mkdtemp(prefix="spark_native_bridge_")
    atexit.register(shutil.rmtree, directory, True)
    archive = os.path.join(directory, "spark_native_bridge.zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zip_file:
        for file in sorted(os.listdir(package)):
            if file.endswith((".py", ".md")):
                zip_file.write(os.path.join(package, file), f"spark_native_bridge/{file}")
    if hasattr(spark, "sparkContext"):
        try:
            spark.sparkContext.addPyFile(archive)
            return archive
        except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
            pass
    spark.addArtifacts(archive, pyfile=True)
    return archive
