"""Native data source packages (``.sparkpkg``): a zip holding the manifest
``spark-native-datasource.json`` and one library per platform, as Spark 4.4 reads them.

The driver extracts the library of its platform to register it; each executor gets the package
itself from the session's files (``SparkContext.addFile``) and extracts its own platform's
library, so no node needs the library installed.
"""

import json
import os
import platform
import sys
import tempfile
import zipfile
from typing import Dict, List, Optional

from ._native import sha256_of

MANIFEST = "spark-native-datasource.json"
ABI_VERSION = 1
# A manifest is a few hundred bytes: a bound keeps a hostile package from exhausting memory.
MAX_MANIFEST_BYTES = 1 << 20
# The largest library that a package may hold, uncompressed.
MAX_LIBRARY_BYTES = 1 << 30
# The limits of `cargo sparkds verify`, checked before anything is decompressed: the size of the
# package, the entries of its central directory, and the compression ratio of an entry above
# 1 MiB (a library compresses about 3:1; a zip bomb, thousands to one).
MAX_PACKAGE_BYTES = 1 << 30
MAX_ENTRIES = 64
MAX_RATIO = 100


class PackageError(ValueError):
    """A package that cannot be used, with the reason and the fix."""


def platform_key() -> str:
    """The manifest's key of this platform, such as ``linux-x86_64``."""
    system = {"linux": "linux", "darwin": "osx", "win32": "windows"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return f"{system}-{machine}"


def _entries_declared(package: str) -> int:
    """The number of entries that the end record of the zip `package` declares, read before
    zipfile reads the whole central directory into memory (ZIP64's 0xFFFF counts as too many)."""
    with open(package, "rb") as file:
        size = file.seek(0, os.SEEK_END)
        tail = min(size, 22 + 0xFFFF)
        file.seek(size - tail)
        data = file.read(tail)
    end = data.rfind(b"PK\x05\x06")
    if end < 0 or end + 22 > len(data):
        raise zipfile.BadZipFile("no end of central directory record")
    return int.from_bytes(data[end + 10 : end + 12], "little")


def _open(package: str) -> zipfile.ZipFile:
    """The zip `package`, after the checks of its size and number of entries."""
    size = os.path.getsize(package)
    if size > MAX_PACKAGE_BYTES:
        raise PackageError(
            f"{package}: {size} bytes, more than the {MAX_PACKAGE_BYTES} a package may have"
        )
    entries = _entries_declared(package)
    if entries > MAX_ENTRIES:
        raise PackageError(
            f"{package}: {entries} entries, more than the {MAX_ENTRIES} a package may have "
            f"(a manifest and one library per platform): rebuild it with `cargo sparkds package`"
        )
    return zipfile.ZipFile(package)


def read_manifest(package: str) -> Dict:
    """The manifest of `package`, checked: version 1, a list of data sources and of libraries."""
    try:
        with _open(package) as archive:
            try:
                info = archive.getinfo(MANIFEST)
            except KeyError:
                raise PackageError(
                    f"{package}: no {MANIFEST} at the root of the package: build it with "
                    f"`cargo sparkds package`"
                ) from None
            if info.file_size > MAX_MANIFEST_BYTES:
                raise PackageError(
                    f"{package}: {MANIFEST} is {info.file_size} bytes, more than the "
                    f"{MAX_MANIFEST_BYTES} a manifest may have"
                )
            manifest = json.loads(archive.read(info).decode("utf-8"))
    except (OSError, zipfile.BadZipFile) as error:
        raise PackageError(f"{package}: not a readable .sparkpkg (zip) file: {error}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PackageError(f"{package}: {MANIFEST} is not valid UTF-8 JSON: {error}") from None
    if not isinstance(manifest, dict):
        raise PackageError(f"{package}: {MANIFEST} must hold a JSON object")
    if manifest.get("abiVersion") != ABI_VERSION:
        raise PackageError(
            f"{package}: abiVersion {manifest.get('abiVersion')!r} is not supported; this bridge "
            f"runs version {ABI_VERSION} of spark_datasource.h"
        )
    sources = manifest.get("dataSources")
    libraries = manifest.get("libraries")
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise PackageError(f"{package}: `dataSources` must be a list of names")
    if not isinstance(libraries, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in libraries.items()
    ):
        raise PackageError(f"{package}: `libraries` must map platforms to paths in the package")
    return manifest


def data_sources(package: str) -> List[str]:
    """The names of the data sources that `package` provides, in lower case."""
    return [name.lower() for name in read_manifest(package)["dataSources"]]


def extract_library(package: str, name: str, directory: Optional[str] = None) -> str:
    """Extracts the library of this platform from `package` into `directory` (a directory named
    after the package's checksum under it, or under the system's temporary directory) and
    returns its path. Extracting the same package again reuses the file."""
    manifest = read_manifest(package)
    if name.lower() not in [s.lower() for s in manifest["dataSources"]]:
        raise PackageError(
            f"{package} provides {', '.join(manifest['dataSources']) or 'no data source'}, "
            f"not `{name}`"
        )
    key = platform_key()
    entry = manifest["libraries"].get(key)
    if entry is None:
        raise PackageError(
            f"{package} has no library for {key} (it has: "
            f"{', '.join(sorted(manifest['libraries'])) or 'none'}): build the package for this "
            f"platform"
        )
    parts = entry.replace("\\", "/").split("/")
    if entry.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
        raise PackageError(f"{package}: the library path `{entry}` must be relative, inside it")
    target_dir = os.path.join(
        directory or os.path.join(tempfile.gettempdir(), "spark_native_packages"),
        sha256_of(package)[:32],
    )
    target = os.path.join(target_dir, parts[-1])
    if os.path.isfile(target):
        return target
    os.makedirs(target_dir, exist_ok=True)
    with _open(package) as archive:
        try:
            info = archive.getinfo(entry)
        except KeyError:
            raise PackageError(f"{package}: the manifest names `{entry}`, which it does not hold") from None
        if info.is_dir() or info.file_size > MAX_LIBRARY_BYTES:
            raise PackageError(f"{package}: `{entry}` is not a library file of a sane size")
        if info.file_size > 1 << 20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise PackageError(
                f"{package}: `{entry}` expands {info.compress_size} bytes to {info.file_size}, "
                f"more than {MAX_RATIO} times: not a library, but a zip bomb"
            )
        # Written under a temporary name then renamed, so that a process that loads it while
        # another extracts it never sees a partial file.
        handle, partial = tempfile.mkstemp(dir=target_dir, prefix=".extracting-")
        try:
            with os.fdopen(handle, "wb") as out, archive.open(info) as source:
                for block in iter(lambda: source.read(1 << 20), b""):
                    out.write(block)
            os.replace(partial, target)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    return target


def from_session_files(package: str, name: str) -> Optional[str]:
    """On an executor (or a Python worker of the driver): the library of `package`, a file that
    the session added with ``SparkContext.addFile``, extracted next to it. None when the
    session has no such file."""
    try:
        from pyspark import SparkFiles

        path = SparkFiles.get(package)
    except Exception:  # noqa: BLE001 - no SparkFiles outside a Spark worker
        return None
    if not os.path.isfile(path):
        return None
    return extract_library(path, name, os.path.join(os.path.dirname(path), ".sparkpkg"))
