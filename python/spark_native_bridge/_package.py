"""Native data source packages (``.sparkpkg``): a zip holding the manifest
``spark-native-datasource.json`` and one library per platform, as Spark 4.4 reads them.

The driver reads the library of its platform to register it; each executor gets the package
itself from the session's files (``SparkContext.addFile``) and reads its own platform's library
from it, so no node needs the library installed. Either way the package is first copied into a
private directory (see ``_private``), checked there as ``sparkds verify`` checks it (``_archive``)
and the library's bytes read from that copy by the same reader that checked it; the SHA-256 of a
package's library is that of those bytes.
"""

import os
import platform
import sys
from dataclasses import dataclass
from typing import List, Optional

from . import _archive, _private
from ._archive import LIMITS, MANIFEST, Finding

ABI_VERSION = _archive.ABI_VERSION
MAX_PACKAGE_BYTES = LIMITS.package_bytes
MAX_ENTRIES = LIMITS.entries
MAX_RATIO = LIMITS.ratio

__all__ = ["PackageError", "Extracted", "platform_key", "read_library", "from_session_files"]


class PackageError(ValueError):
    """A package that cannot be used, with the reasons and the fix."""


def platform_key() -> str:
    """The manifest's key of this platform, such as ``linux-x86_64``."""
    system = {"linux": "linux", "darwin": "osx", "win32": "windows"}.get(sys.platform, sys.platform)
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return f"{system}-{machine}"


def refusal(package: str, findings: List[Finding]) -> PackageError:
    """The error that refuses `package` for `findings`, one per line, as ``verify`` prints them."""
    lines = "\n".join(f"  {finding}" for finding in findings)
    return PackageError(
        f"the package {package} is refused, as `sparkds verify` would refuse it:\n{lines}\n"
        f"write it again with `cargo sparkds package` and check it with `cargo sparkds verify` "
        f"or `python3 -m spark_native_bridge.verify`"
    )


@dataclass(frozen=True)
class Extracted:
    """The library of this platform read from a package: its private copy and checksum."""

    name: str
    path: str
    sha256: str
    entry: str


def read_library(package: str, name: Optional[str], directory: str) -> Extracted:
    """Copies `package` into the private `directory`, checks it, and writes its library for this
    platform there. `name` may be None when the package provides one data source."""
    try:
        source = _private.open_regular(package)
    except OSError as error:
        raise PackageError(
            f"{package}: not a readable .sparkpkg (zip) file: {_private.reason(error)}"
        ) from None
    with source:
        length = os.fstat(source.fileno()).st_size
        if length > LIMITS.package_bytes:
            raise refusal(package, [Finding("(package)", "limit", (
                f"the package is {_archive.size_text(length)} but a package may have at most "
                f"{_archive.size_text(LIMITS.package_bytes)} (more than the "
                f"{LIMITS.package_bytes} a package may have): remove what is not a library"
            ))])
        try:
            copy, _, length = _private.copy(source, directory, "package.zip", LIMITS.package_bytes)
        except ValueError:
            raise refusal(package, [Finding("(package)", "limit", (
                f"the package grew past {_archive.size_text(LIMITS.package_bytes)} while it was "
                f"read: a package may have at most that"
            ))]) from None
    with open(copy, "rb") as archive:
        try:
            checked = _archive.check_package(archive, length, platforms=[])
        except (_archive.NotZip, ValueError) as error:
            raise PackageError(
                f"{package}: not a readable .sparkpkg (zip) file: {error}: write it with "
                f"`cargo sparkds package`"
            ) from None
        if checked.findings:
            raise refusal(package, checked.findings)
        manifest = checked.manifest
        provided = [source.lower() for source in manifest["dataSources"]]
        if name is None:
            if len(provided) != 1:
                raise PackageError(
                    f"{package} provides {len(provided)} data sources ({', '.join(provided)}): "
                    f"name the one to register"
                )
            name = provided[0]
        name = name.lower()
        if name not in provided:
            raise PackageError(
                f"{package} provides {', '.join(provided) or 'no data source'}, not `{name}`"
            )
        key = platform_key()
        entry = checked.libraries.get(key)
        if entry is None:
            raise PackageError(
                f"{package} has no library for {key} (it has: "
                f"{', '.join(sorted(manifest['libraries'])) or 'none'}): build the package for "
                f"this platform"
            )
        path = manifest["libraries"][key]
        try:
            data = _archive.read_entry(archive, entry, LIMITS.entry_bytes)
        except ValueError as error:
            raise refusal(package, [Finding(path, "archive", str(error))]) from None
    os.unlink(copy)
    findings = _archive.check_library(key, path, data)
    if findings:
        raise refusal(package, findings)
    library, sha256 = _private.write(data, directory, path.rsplit("/", 1)[-1])
    return Extracted(name, library, sha256, path)


def from_session_files(package: str, name: str, directory: str) -> Optional[Extracted]:
    """On an executor (or a Python worker of the driver): the library of `package`, a file that
    the session added with ``SparkContext.addFile``, read into `directory`. None when the session
    has no such file."""
    try:
        from pyspark import SparkFiles

        path = SparkFiles.get(package)
    except Exception:  # noqa: BLE001 - no SparkFiles outside a Spark worker
        return None
    # Whatever the session added under that name is read: what is not a regular file (a named
    # pipe) is refused by read_library, not passed over.
    if not os.path.exists(path):
        return None
    return read_library(path, name, directory)
