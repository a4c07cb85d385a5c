"""Writes the requirements files with which `cargo sparkds spark` installs pyspark in its cache:
every package that `pyspark[connect]` needs, pinned with `==` and with the SHA-256 of each file
that pip may pick on a platform the command supports (Linux x86_64 and aarch64, macOS) for
CPython 3.11 to 3.14, read from PyPI's index. pip then installs with `--require-hashes`, and a
file that is not one of these is refused.

    python3 crates/cargo-sparkds/src/spark/pin_pyspark.py

Run it again after changing a version below; cache.rs embeds the two files it writes.
"""

import json
import os
import re
import urllib.request

# pandas below 3, which pyspark 4.3 supports without a warning; pyarrow 26 needs Python 3.11.
PINS = {
    "pyspark": "4.3.0",
    "py4j": "0.10.9.9",
    "pandas": "2.3.3",
    "pyarrow": "26.0.1",
    "numpy": "2.4.6",
    "grpcio": "1.85.1",
    "grpcio-status": "1.85.1",
    "googleapis-common-protos": "1.76.0",
    "protobuf": "6.33.5",
    "zstandard": "0.25.0",
    "typing-extensions": "4.15.0",
    "python-dateutil": "2.9.0.post0",
    "six": "1.17.0",
    "pytz": "2026.6",
    "tzdata": "2026.6",
}
# pyspark comes as a source archive only: it is built with this setuptools, installed first.
BUILD_PINS = {"setuptools": "80.9.0"}

PYTHONS = re.compile(r"^(cp31[1-4]t?|abi3|py3|py2\.py3)$")
PLATFORMS = re.compile(r"(manylinux.*_(x86_64|aarch64)|macosx_.*_(x86_64|arm64|universal2)|^any$)")


def files(name, version):
    request = urllib.request.Request(
        f"https://pypi.org/simple/{name}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(request) as response:
        index = json.load(response)
    return [f for f in index["files"] if not f.get("yanked") and version_of(f["filename"]) == version]


def version_of(filename):
    if filename.endswith(".whl"):
        return filename.split("-")[1]
    if filename.endswith(".tar.gz"):
        return filename[: -len(".tar.gz")].rsplit("-", 1)[1]
    return None


def usable(filename):
    """A wheel for a supported CPython and platform."""
    if not filename.endswith(".whl"):
        return False
    _, _, python, abi, platform = filename[: -len(".whl")].rsplit("-", 4)
    pythons = python.split(".") if python != "py2.py3" else [python]
    return any(PYTHONS.match(p) for p in pythons) and any(
        PLATFORMS.search(p) for p in platform.split(".")
    )


def pinned(pins):
    lines = []
    for name, version in pins.items():
        found = files(name, version)
        wheels = [f for f in found if usable(f["filename"])]
        # A package without wheels (pyspark) is installed from its source archive.
        chosen = wheels or [f for f in found if f["filename"].endswith(".tar.gz")]
        if not chosen:
            raise SystemExit(f"{name}=={version}: no usable file on PyPI")
        hashes = sorted({f["hashes"]["sha256"] for f in chosen})
        lines.append(f"{name}=={version} \\")
        lines.extend(f"    --hash=sha256:{h} \\" for h in hashes[:-1])
        lines.append(f"    --hash=sha256:{hashes[-1]}")
    return "\n".join(lines) + "\n"


def write(path, pins):
    header = (
        "# Written by pin_pyspark.py: every package, pinned, with the SHA-256 of each file pip\n"
        "# may install (`pip install --require-hashes`). Do not edit: run the script again.\n"
    )
    with open(path, "w", encoding="utf-8") as f:
        f.write(header + pinned(pins))


here = os.path.dirname(os.path.abspath(__file__))
write(os.path.join(here, "pyspark-requirements.txt"), PINS)
write(os.path.join(here, "pyspark-build-requirements.txt"), BUILD_PINS)
