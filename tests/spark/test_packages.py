"""The bridge's reading of `.sparkpkg` packages (register_package, and the executors that
extract their platform's library from the session's copy): the library of this platform
extracted, and hostile packages refused before anything is decompressed, with the limits of
`cargo sparkds verify`."""

import json
import zipfile

import pytest
from spark_native_bridge._package import (
    MAX_ENTRIES,
    MAX_PACKAGE_BYTES,
    PackageError,
    extract_library,
    platform_key,
)

LIBRARY = "lib/libspark_datasource_demo.so"


def package(path, library=b"\x7fELF not really", extra_entries=0):
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


def test_the_library_of_this_platform_is_extracted(tmp_path):
    extracted = extract_library(package(tmp_path / "demo.sparkpkg"), "DEMO", str(tmp_path / "x"))

    assert open(extracted, "rb").read() == b"\x7fELF not really"
    assert extract_library(str(tmp_path / "demo.sparkpkg"), "demo", str(tmp_path / "x")) == extracted


def test_a_package_of_many_entries_is_refused_before_it_is_read(tmp_path):
    crowded = package(tmp_path / "crowded.sparkpkg", extra_entries=MAX_ENTRIES)

    with pytest.raises(PackageError, match=f"{MAX_ENTRIES + 2} entries, more than the {MAX_ENTRIES}"):
        extract_library(crowded, "demo", str(tmp_path / "x"))


def test_a_zip_bomb_is_refused_before_it_is_decompressed(tmp_path):
    bomb = package(tmp_path / "bomb.sparkpkg", library=bytes(16 << 20))

    with pytest.raises(PackageError, match="more than 100 times: not a library, but a zip bomb"):
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

    with pytest.raises(PackageError, match="not a readable .sparkpkg \\(zip\\) file"):
        extract_library(str(text), "demo", str(tmp_path / "x"))
