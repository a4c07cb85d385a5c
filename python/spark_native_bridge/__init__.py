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
from typing import Optional, Type

from ._native import (
    NativeDataSourceError,
    data_source_name,
    file_fingerprint,
    library_file_name,
    sha256_of,
)

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

    The library is loaded here once, to fail early if it is not a valid library. The executors
    load the build with the same SHA-256 checksum, from the same path or from their library
    path.

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

    `name` may be left out when the package provides one data source. The driver extracts its
    platform's library into a temporary directory; an executor loads the build with the same
    SHA-256 checksum: from the driver's path if it sees it, else from the package, else from
    its library path.

    Raises:
        ValueError: the package is not a valid package, has no library for this platform, or
            does not provide `name`.
        NativeDataSourceError: the library cannot be loaded, or its table is invalid.
    """
    from ._package import data_sources, extract_library

    package_path = os.path.abspath(package_path)
    provided = data_sources(package_path)
    if name is None:
        if len(provided) != 1:
            raise ValueError(
                f"{package_path} provides {len(provided)} data sources ({', '.join(provided)}): "
                f"name the one to register"
            )
        name = provided[0]
    name = name.lower()
    path = extract_library(package_path, name)
    try:
        context = spark.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        context = None
    if context is not None:
        context.addFile(package_path)
    else:
        spark.addArtifacts(package_path, file=True)
    return _register(spark, path, name, package=os.path.basename(package_path))


def _register(spark, path: str, name: str, package: Optional[str] = None) -> Type:
    from ._datasource import NativeDataSource, _Library

    library = _Library(
        path=path,
        sha256=sha256_of(path),
        name=name,
        fingerprint=file_fingerprint(path),
        package=package,
    )
    library.load()
    class_name = "NativeDataSource_" + "".join(c if c.isalnum() else "_" for c in name)
    data_source = type(class_name, (NativeDataSource,), {"_library": library})
    spark.dataSource.register(data_source)
    return data_source


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
