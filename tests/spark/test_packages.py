"""The bridge's reading of `.sparkpkg` packages (register_package, and the executors that
read their platform's library from the session's copy): the library of this platform read into
a private directory, and hostile packages refused before anything is decompressed, with the
limits of `cargo sparkds verify` (test_trust.py has the structural attacks)."""

import hashlib
import json
import os
import struct
import zipfile

import pytest
from spark_native_bridge._package import (
    MAX_ENTRIES,
    MAX_PACKAGE_BYTES,
    PackageError,
    platform_key,
    read_library,
)
from spark_native_bridge._private import private_directory

LIBRARY = f"{platform_key()}/libspark_datasource_demo.so"
# The header of a 64-bit little-endian ELF shared object (ET_DYN) for this machine: what the
# bridge reads of a library before the loader sees it.
SHARED = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack(
    "<HH", 3, {"linux-x86_64": 62, "linux-aarch64": 183}.get(platform_key(), 62)
)


def extract_library(package, name, directory):
    """The path of the library that the bridge reads from `package` into `directory`."""
    os.makedirs(directory, exist_ok=True)
    return read_library(package, name, directory).path


def package(path, library=SHARED + b" not really", extra_entries=0):
    """A package of data source `demo`, with `library` for this platform."""
    manifest = {
        "abiVersion": 1,
        "dataSources": ["demo"],
        "libraries": {platform_key(): LIBRARY},
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("spark-native-datasource.json", json.dumps(manifest))
        archive.writestr(LIBRARY, library)
        for i in range(extra_entries):
            archive.writestr(f"extra/{i}.txt", b"")
    return str(path)


def test_the_library_of_this_platform_is_read_into_the_private_directory(tmp_path):
    with private_directory() as directory:
        extracted = read_library(package(tmp_path / "demo.sparkpkg"), "DEMO", directory)

        assert open(extracted.path, "rb").read() == SHARED + b" not really"
        assert os.path.dirname(extracted.path) == directory
        assert os.listdir(directory) == ["libspark_datasource_demo.so"]
    assert extracted.sha256 == hashlib.sha256(SHARED + b" not really").hexdigest()
    assert (extracted.name, extracted.entry) == ("demo", LIBRARY)
    assert not os.path.exists(directory)


def test_a_package_of_many_entries_is_refused_before_it_is_read(tmp_path):
    crowded = package(tmp_path / "crowded.sparkpkg", extra_entries=MAX_ENTRIES)

    with pytest.raises(
        PackageError, match=f"declares {MAX_ENTRIES + 2} entries but a package holds at most {MAX_ENTRIES}"
    ):
        extract_library(crowded, "demo", str(tmp_path / "x"))


def test_a_zip_bomb_is_refused_before_it_is_decompressed(tmp_path):
    bomb = package(tmp_path / "bomb.sparkpkg", library=bytes(16 << 20))

    with pytest.raises(PackageError, match="a ratio above 100:1: .* so this is a zip bomb"):
        extract_library(bomb, "demo", str(tmp_path / "x"))
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").rglob("*.so"))


def test_a_package_larger_than_the_limit_is_refused_unread(tmp_path):
    huge = tmp_path / "huge.sparkpkg"
    with open(huge, "wb") as file:
        file.truncate(MAX_PACKAGE_BYTES + 1)  # sparse: no disk used

    with pytest.raises(PackageError, match=f"more than the {MAX_PACKAGE_BYTES} a package may have"):
        extract_library(str(huge), "demo", str(tmp_path / "x"))


def test_a_file_that_is_not_a_zip_says_so(tmp_path):
    text = tmp_path / "text.sparkpkg"
    text.write_text("not a zip")

    with pytest.raises(PackageError, match="not a readable .sparkpkg \\(zip\\) file: no end of central"):
        extract_library(str(text), "demo", str(tmp_path / "x"))
