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

import os
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
    from ._datasource import NativeDataSource, _Library

    path = os.path.abspath(library_path)
    if name is None:
        name = data_source_name(path)
    name = name.lower()
    library = _Library(
        path=path, sha256=sha256_of(path), name=name, fingerprint=file_fingerprint(path)
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
    archive = os.path.join(
        tempfile.mkdtemp(prefix="spark_native_bridge_"), "spark_native_bridge.zip"
    )
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
