"""The bridge's trust boundary: only the build whose SHA-256 the driver computed ever runs, loaded
from a private copy of the bytes that were hashed; packages are checked as `sparkds verify`
checks them, from their own bytes, and never unpacked into a shared path; no error repeats the
value of a secret option.

Most tests drive the bridge without Spark, through a stand-in session; the redaction test runs a
query on the suite's session. Each test uses a data source name of its own: a process loads one
build per name (the rule under test), and the suite's session loads c_range."""

import ctypes
import hashlib
import json
import os
import pickle
import pwd
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import zipfile

import pytest
from conftest import BRIDGE, ROOT
from spark_native_bridge import NativeDataSourceError, _native, register, register_package
from spark_native_bridge._package import platform_key

REDACTED = "*********(redacted)"


class Session:
    """What `register` and `register_package` use of a SparkSession."""

    def __init__(self, conf=None):
        self.registered = []
        self.files = []
        self.conf = self.Conf(conf or {})
        self.dataSource = self
        self.sparkContext = self

    class Conf:
        def __init__(self, values):
            self.values = values

        def get(self, key, default=None):
            return self.values.get(key, default)

    def register(self, data_source):
        self.registered.append(data_source)

    def addFile(self, path):
        self.files.append(path)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def copy_as(library: str, directory, name: str) -> str:
    """`library` copied into `directory` under the file name of data source `name`."""
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(str(directory), f"libspark_datasource_{name}.so")
    shutil.copyfile(library, target)
    return target


def other_build(library: str, target: str) -> str:
    """Another build of `library` of the same size: one byte of its compiler note changed, so it
    still loads and runs but has another checksum."""
    data = bytearray(open(library, "rb").read())
    at = data.index(b"GCC: (") + 5
    data[at] = ord("[") if data[at] != ord("[") else ord("{")
    with open(target, "wb") as out:
        out.write(data)
    return target


# -- 1. only the checked build runs, from a private copy ----------------------------------------


def test_the_loaded_file_is_a_private_copy_of_the_bytes_that_were_hashed(
    c_range_library, tmp_path, monkeypatch
):
    original = copy_as(c_range_library, tmp_path, "trust_private")
    expected = sha256(open(original, "rb").read())
    opened = []
    real_cdll = ctypes.CDLL

    def cdll(path, *args, **kwargs):
        directory = os.lstat(os.path.dirname(path))
        opened.append(
            {
                "path": path,
                "sha256": sha256(open(path, "rb").read()),
                "directory is a link": stat.S_ISLNK(directory.st_mode),
                "directory owner": directory.st_uid,
                "directory mode": oct(stat.S_IMODE(directory.st_mode)),
            }
        )
        return real_cdll(path, *args, **kwargs)

    monkeypatch.setattr(_native.ctypes, "CDLL", cdll)

    library = _native.load(original, "trust_private", expected)

    assert library.sha256 == expected
    [seen] = opened
    assert seen == {
        "path": seen["path"],
        "sha256": expected,
        "directory is a link": False,
        "directory owner": os.geteuid(),
        "directory mode": "0o700",
    }
    assert os.path.realpath(seen["path"]) != os.path.realpath(original)
    # The copy is gone once loaded: nothing of it is left for anyone to replace or collect.
    assert not os.path.exists(os.path.dirname(seen["path"]))


def test_a_library_replaced_between_its_check_and_its_load_does_not_run(
    c_range_library, tmp_path, monkeypatch
):
    original = copy_as(c_range_library, tmp_path, "trust_race")
    expected = sha256(open(original, "rb").read())
    real_cdll = ctypes.CDLL

    def cdll(path, *args, **kwargs):
        # Whoever can write the original wins the race: the file is replaced right before the
        # loader opens a file.
        with open(original, "wb") as replaced:
            replaced.write(b"#!/bin/sh\necho another build\n")
        return real_cdll(path, *args, **kwargs)

    monkeypatch.setattr(_native.ctypes, "CDLL", cdll)

    library = _native.load(original, "trust_race", expected)

    assert library.sha256 == expected
    assert library.has("read")


def test_a_build_of_the_same_size_and_time_is_not_taken_for_the_drivers(
    c_range_library, tmp_path
):
    """No stand-in for the checksum: a file of the registered size, with its modification time
    set back, is another build all the same."""
    path = copy_as(c_range_library, tmp_path, "trust_stamp")
    data_source = register(Session(), path)
    expected = data_source._library.sha256
    status = os.stat(path)
    other_build(c_range_library, path)
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert os.path.getsize(path) == status.st_size
    pickled = tmp_path / "library.pickle"
    pickled.write_bytes(pickle.dumps(data_source._library))

    # A fresh process, as a Python worker of an executor is, unpickles what the driver sent.
    worker = subprocess.run(
        [sys.executable, "-c",
         "import pickle, sys; pickle.load(open(sys.argv[1], 'rb')).load()", str(pickled)],
        env={**os.environ, "PYTHONPATH": BRIDGE, "LD_LIBRARY_PATH": "", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True,
    )

    assert worker.returncode != 0, "the worker loaded another build"
    assert "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND" in worker.stderr, worker.stderr
    assert expected in worker.stderr, worker.stderr
    assert sha256(open(path, "rb").read()) in worker.stderr, worker.stderr


# -- 2. packages: no shared path, the entry's own checksum --------------------------------------


def make_package(path, library, name, extra=(), manifest=None):
    """A .sparkpkg of `library` for this platform, providing `name`."""
    key = platform_key()
    entry = f"{key}/libspark_datasource_{name}.so"
    if manifest is None:
        manifest = {"abiVersion": 1, "dataSources": [name], "libraries": {key: entry}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("spark-native-datasource.json", json.dumps(manifest))
        archive.write(library, entry)
        for extra_name, data in extra:
            archive.writestr(extra_name, data)
    return str(path)


@pytest.fixture
def another_user():
    """A user of this machine other than the one running the tests, removed afterwards."""
    name = "sparkds_trust"
    subprocess.run(["userdel", name], capture_output=True)
    created = subprocess.run(["useradd", "--no-create-home", name], capture_output=True)
    if created.returncode != 0:
        pytest.fail(f"useradd failed (the suite runs as root): {created.stderr.decode()}")
    try:
        yield pwd.getpwnam(name).pw_uid
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def test_a_package_is_never_read_from_a_path_that_another_user_prepared(
    c_range_library, tmp_path, another_user
):
    package = make_package(tmp_path / "trust_planted-1.0.sparkpkg", c_range_library,
                           "trust_planted")
    # Where the bridge used to unpack packages, under a name anyone can compute: another user
    # creates it first, with a file of their own.
    digest = sha256(open(package, "rb").read())[:32]
    shared = os.path.join(tempfile.gettempdir(), "spark_native_packages")
    planted = os.path.join(shared, digest, "libspark_datasource_trust_planted.so")
    existed = os.path.exists(shared)
    os.makedirs(os.path.dirname(planted), exist_ok=True)
    with open(planted, "wb") as file:
        file.write(b"\x7fELF planted by another user")
    for path in (os.path.dirname(planted), planted):
        os.chown(path, another_user, another_user)
    try:
        session = Session()
        data_source = register_package(session, package)

        library_bytes = open(c_range_library, "rb").read()
        assert data_source._library.sha256 == sha256(library_bytes)
        assert data_source._library.path is None
        assert session.files == [package]
        assert os.listdir(shared) == [digest] and os.listdir(os.path.dirname(planted)) == [
            "libspark_datasource_trust_planted.so"
        ]
    finally:
        shutil.rmtree(os.path.dirname(planted) if existed else shared)


# -- 3. executors: candidates hashed, the driver's checksum only -------------------------------


def test_an_executor_takes_the_packages_build_over_another_at_the_drivers_path(
    c_range_library, tmp_path, monkeypatch
):
    package = make_package(tmp_path / "trust_shipped-1.0.sparkpkg", c_range_library,
                           "trust_shipped")
    at_driver_path = other_build(c_range_library, str(tmp_path / "libspark_datasource_trust_shipped.so"))
    import pyspark

    monkeypatch.setattr(pyspark.SparkFiles, "get", classmethod(
        lambda cls, name: str(tmp_path / name)
    ))
    expected = sha256(open(c_range_library, "rb").read())

    library = _native.load(at_driver_path, "trust_shipped", expected, "trust_shipped-1.0.sparkpkg")

    assert library.sha256 == expected
    assert library.origin.startswith("the session's package trust_shipped-1.0.sparkpkg")


def test_no_build_with_the_drivers_checksum_names_every_candidate_and_its_checksum(
    c_range_library, tmp_path, monkeypatch
):
    at_driver_path = other_build(c_range_library, str(tmp_path / "libspark_datasource_trust_none.so"))
    installed = tmp_path / "installed"
    installed.mkdir()
    in_library_path = str(installed / "libspark_datasource_trust_none.so")
    with open(in_library_path, "wb") as file:
        file.write(b"not even a library")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(installed))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    expected = sha256(open(c_range_library, "rb").read())

    with pytest.raises(NativeDataSourceError) as refused:
        _native.load(at_driver_path, "trust_none", expected)

    message = str(refused.value)
    assert "NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND" in message
    assert f"the driver's SHA-256 {expected}" in message
    assert f"{at_driver_path} (SHA-256 {sha256(open(at_driver_path, 'rb').read())})" in message
    assert f"{in_library_path} (SHA-256 {sha256(b'not even a library')})" in message
    assert "install the same build on every node" in message


def test_a_process_that_loaded_one_build_refuses_another_under_the_same_name(
    c_range_library, tmp_path
):
    first = copy_as(c_range_library, tmp_path / "a", "trust_replaced")
    second = other_build(c_range_library, str(tmp_path / "libspark_datasource_trust_replaced.so"))
    first_sha = sha256(open(first, "rb").read())
    second_sha = sha256(open(second, "rb").read())
    _native.load(first, "trust_replaced", first_sha)

    with pytest.raises(NativeDataSourceError) as refused:
        _native.load(second, "trust_replaced", second_sha)

    message = str(refused.value)
    assert "INVALID_NATIVE_DATA_SOURCE_LIBRARY.REPLACED" in message
    assert first_sha in message and second_sha in message
    assert "restart the application" in message


def test_relative_entries_of_the_library_path_are_ignored(c_range_library, tmp_path, monkeypatch):
    """`.`, an empty element, `bin` in PATH or any relative directory would make the build
    depend on the worker's current directory."""
    name = "trust_relative"
    for directory in ("", "rel", "lib"):
        copy_as(c_range_library, tmp_path / directory, name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LD_LIBRARY_PATH", os.pathsep.join([".", "", "rel"]))
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", "/usr/bin", "/bin"]))
    expected = sha256(open(c_range_library, "rb").read())

    with pytest.raises(NativeDataSourceError, match="NATIVE_DATA_SOURCE_LIBRARY_NOT_FOUND"):
        _native.load(f"/nonexistent/libspark_datasource_{name}.so", name, expected)
    assert _native._search_path("x.so") == ["/usr/lib/x.so", "/lib/x.so"]


def test_a_named_pipe_is_refused_at_once_naming_it(c_range_library, tmp_path, monkeypatch):
    """A named pipe where a library or a package should be: opened without waiting, checked
    after opening, and named with what it is, wherever the bridge reads one."""
    name = "trust_piped"
    pipes = tmp_path / "pipes"
    pipes.mkdir()
    library = str(pipes / f"libspark_datasource_{name}.so")
    package = str(pipes / "piped.sparkpkg")
    os.mkfifo(library)
    os.mkfifo(package)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(pipes))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    expected = sha256(open(c_range_library, "rb").read())
    pipe = "it is a named pipe (FIFO), not a regular file"

    with pytest.raises(NativeDataSourceError) as driver:
        register(Session(), library)
    with pytest.raises(ValueError) as in_package:
        register_package(Session(), package)
    with pytest.raises(NativeDataSourceError) as executor:
        _native.load(f"/nonexistent/libspark_datasource_{name}.so", name, expected)
    from spark_native_bridge import verify

    assert str(driver.value).endswith(f"cannot load {library}: {pipe}")
    assert str(in_package.value) == f"{package}: not a readable .sparkpkg (zip) file: {pipe}"
    assert f"{library} ({pipe})" in str(executor.value)
    assert verify.reasons(package) == [
        f"(package): [archive] cannot be read ({pipe}): give the path of a .sparkpkg"
    ]


# -- 4. package structure, as sparkds verify checks it ------------------------------------------

PKG = "trust_pkg"


def good_package(tmp_path, c_range_library, **kwargs):
    return open(make_package(tmp_path / "good.sparkpkg", c_range_library, PKG, **kwargs),
                "rb").read()


def end_record_at(data: bytes) -> int:
    return data.rindex(b"PK\x05\x06")


def with_end(data: bytes, **fields) -> bytes:
    """`data` with fields of its end record replaced: entries, size, offset."""
    at = end_record_at(data)
    record = bytearray(data[at:])
    layout = {"entries_disk": (8, "<H"), "entries": (10, "<H"), "size": (12, "<I"),
              "offset": (16, "<I")}
    for key, value in fields.items():
        offset, fmt = layout[key]
        struct.pack_into(fmt, record, offset, value)
    return data[:at] + bytes(record)


def central_headers(data: bytes):
    """(offset of the central header, name) of every entry."""
    at = end_record_at(data)
    count, _, offset = struct.unpack_from("<HII", data, at + 10)
    found = []
    for _ in range(count):
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, offset + 28)
        found.append((offset, data[offset + 46 : offset + 46 + name_len]))
        offset += 46 + name_len + extra_len + comment_len
    return found


def patch_entry(data: bytes, name: bytes, central_offset: int, fmt: str, value) -> bytes:
    """`data` with a field of `name`'s central directory header (and its local header, for the
    fields both have) set to `value`."""
    data = bytearray(data)
    for header, entry_name in central_headers(bytes(data)):
        if entry_name == name:
            struct.pack_into(fmt, data, header + central_offset, value)
            (local,) = struct.unpack_from("<I", data, header + 42)
            if 6 <= central_offset < 30:
                struct.pack_into(fmt, data, local + central_offset - 4, value)
    return bytes(data)


def hostile_packages(tmp_path, c_range_library):
    """(name, bytes, the rule it breaks, words of the message) of each hostile package."""
    key = platform_key()
    library_entry = f"{key}/libspark_datasource_{PKG}.so".encode()
    good = good_package(tmp_path, c_range_library)
    cases = []

    def case(name, data, rule, words):
        cases.append((name, data, rule, words))

    case("bytes before the archive", b"#!/bin/sh\nexit 0\n" + good, "archive",
         "readers disagree on what lies between")
    shifted = bytearray(b"\0" * 64 + good)
    for header, _ in central_headers(good):
        (local,) = struct.unpack_from("<I", shifted, 64 + header + 42)
        struct.pack_into("<I", shifted, 64 + header + 42, local + 64)
    shifted = with_end(bytes(shifted), offset=struct.unpack_from(
        "<I", good, end_record_at(good) + 16)[0] + 64)
    case("an archive whose entries start after other data", shifted, "archive",
         "the first entry starts at byte 64, not at the start of the file")
    case("bytes after the end record", good + b"trailing", "archive",
         "data after the archive")
    record = good[end_record_at(good):]
    second = bytearray(good)
    struct.pack_into("<H", second, end_record_at(good) + 20, len(record))
    case("a second end record in the comment", bytes(second) + record, "archive",
         "the archive has 2 end records")
    case("a directory holding more headers than declared", with_end(good, entries=1,
         entries_disk=1), "archive", "bytes after the 1 entries the end record declares")
    case("a directory holding fewer headers than declared", with_end(good, entries=3,
         entries_disk=3), "archive", "")
    directory_size = struct.unpack_from("<I", good, end_record_at(good) + 12)[0]
    case("a directory that ends before the end record",
         with_end(good, size=directory_size - 1), "archive", "")
    case("names differing in case", good_package(tmp_path, c_range_library, extra=[
        (library_entry.decode().upper(), b"x")]), "duplicate-name", "only in case")
    case("a name with a control character", good_package(tmp_path, c_range_library, extra=[
        ("lib\x1b[2J.so", b"x")]), "entry-name", "control character")
    case("an archive inside the package", good_package(tmp_path, c_range_library, extra=[
        ("inner.zip", b"x")]), "nested-package", "never unpacks nested packages")
    case("an entry the manifest does not list", good_package(tmp_path, c_range_library, extra=[
        ("notes.txt", b"x")]), "extra-file", "does not list this entry")
    case("a `..` path", good_package(tmp_path, c_range_library, extra=[
        ("../../.bashrc", b"x")]), "unsafe-path", "`..`")
    case("an encrypted library", patch_entry(good, library_entry, 8, "<H", 1), "archive",
         "encrypted")
    case("a library compressed with bzip2", patch_entry(good, library_entry, 10, "<H", 12),
         "archive", "method 12")
    stored = good_package(tmp_path, c_range_library)
    case("a named pipe", patch_entry(
        patch_entry(stored, b"spark-native-datasource.json", 4, "<H", 3 << 8),
        b"spark-native-datasource.json", 38, "<I", 0o010644 << 16), "unsafe-path", "named pipe")
    first_offset = struct.unpack_from("<I", good, central_headers(good)[0][0] + 42)[0]
    case("two entries sharing one stream", patch_entry(good, library_entry, 42, "<I",
         first_offset), "archive", "overlap")
    huge = {"abiVersion": 1, "dataSources": [PKG],
            "libraries": {key: library_entry.decode()}, "padding": " " * (100 << 10)}
    case("a manifest of 100 KiB", good_package(tmp_path, c_range_library, manifest=huge),
         "limit", "at most 64 KiB")
    deep = {"abiVersion": 1, "dataSources": [PKG], "libraries": {key: library_entry.decode()}}
    deep_text = json.dumps(deep)[:-1] + ', "extension": ' + "[" * 40 + "]" * 40 + "}"
    case("a manifest nested 41 deep", _with_manifest(tmp_path, c_range_library, deep_text),
         "manifest", "nests arrays and objects 41 deep")
    very_deep = json.dumps(deep)[:-1] + ', "x": ' + "[" * 30_000 + "]" * 30_000 + "}"
    case("a manifest nested 30001 deep", _with_manifest(tmp_path, c_range_library, very_deep),
         "manifest", "nests arrays and objects 30001 deep")
    deepest = json.dumps(deep)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    case("a manifest nested 100001 deep", _with_manifest(tmp_path, c_range_library, deepest),
         "limit", "at most 64 KiB")
    bomb = tmp_path / "bomb.sparkpkg"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("spark-native-datasource.json", json.dumps(deep))
        archive.writestr(library_entry.decode(), bytes(16 << 20))
    case("a zip bomb", bomb.read_bytes(), "limit", "a ratio above 100:1")
    case("a library of text", _with_library(tmp_path, b"#!/bin/sh\necho not a library\n"),
         "format", "not a shared library")
    return cases


def _with_manifest(tmp_path, c_range_library, text):
    path = tmp_path / "manifest.sparkpkg"
    entry = f"{platform_key()}/libspark_datasource_{PKG}.so"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("spark-native-datasource.json", text)
        archive.write(c_range_library, entry)
    return path.read_bytes()


def _with_library(tmp_path, data):
    path = tmp_path / "text.sparkpkg"
    entry = f"{platform_key()}/libspark_datasource_{PKG}.so"
    manifest = {"abiVersion": 1, "dataSources": [PKG], "libraries": {platform_key(): entry}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("spark-native-datasource.json", json.dumps(manifest))
        archive.writestr(entry, data)
    return path.read_bytes()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, c_range_library):
    directory = tmp_path_factory.mktemp("hostile")
    cases = []
    for index, (name, data, rule, words) in enumerate(hostile_packages(directory, c_range_library)):
        path = directory / f"case{index}.sparkpkg"
        path.write_bytes(data)
        cases.append((name, str(path), rule, words))
    return cases


def test_hostile_packages_are_refused_before_anything_is_loaded(hostile, monkeypatch):
    loaded = []
    monkeypatch.setattr(_native.ctypes, "CDLL", lambda path, *a, **k: loaded.append(path))
    accepted = []
    for name, path, rule, words in hostile:
        try:
            register_package(Session(), path, PKG)
        except ValueError as error:
            message = str(error)
            if f"[{rule}]" not in message or words not in message or path not in message:
                accepted.append(f"{name}: refused, but not for [{rule}] {words}: {message}")
        except Exception as error:  # noqa: BLE001 - reported below
            accepted.append(f"{name}: {type(error).__name__}: {error}")
        else:
            accepted.append(f"{name}: accepted")
    assert not accepted, "\n".join(accepted)
    assert loaded == []


def test_the_verify_command_prints_each_reason_and_exits_1_when_a_package_is_refused(
    hostile, tmp_path, c_range_library
):
    good = str(tmp_path / "ok.sparkpkg")
    make_package(good, c_range_library, PKG)
    paths = [good] + [path for _, path, _, _ in hostile]

    run = subprocess.run(
        [sys.executable, "-m", "spark_native_bridge.verify", *paths],
        env={**os.environ, "PYTHONPATH": BRIDGE}, capture_output=True, text=True,
    )

    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert f"{good}: ok" in lines
    for name, path, rule, words in hostile:
        mine = [line for line in lines if line.startswith(f"{path}: ")]
        assert any(f"[{rule}]" in line and words in line for line in mine), (name, mine)
        assert f"{path}: ok" not in mine
    alone = subprocess.run(
        [sys.executable, "-m", "spark_native_bridge.verify", good],
        env={**os.environ, "PYTHONPATH": BRIDGE}, capture_output=True, text=True,
    )
    assert (alone.returncode, alone.stdout) == (0, f"{good}: ok\n")


# -- 5. secrets --------------------------------------------------------------------------------

# A library that echoes its options in its errors, as a careless one does: create_reader fails
# with every option's key and value.
ECHO_C = r"""
#include <stdio.h>
#include <string.h>
#include "spark_datasource.h"

static _Thread_local char message[4096];
static char options[2048];

static const char* last_error(void) { return message; }

static int create(const SparkDsCreateInfo* info, uint64_t* capabilities, void** source) {
  options[0] = 0;
  for (int64_t i = 0; i < info->num_options; i++) {
    size_t used = strlen(options);
    snprintf(options + used, sizeof options - used, " %s=`%s`", info->option_keys[i],
             info->option_values[i]);
  }
  *capabilities = SPARK_DS_BATCH_READ;
  *source = options;
  return 0;
}

static void close_source(void* source) { (void)source; }

static int create_reader(void* source, struct ArrowSchema* schema, void** reader) {
  (void)schema; (void)reader;
  snprintf(message, sizeof message, "cannot connect with the options%s", (const char*)source);
  return 13;
}

static int partitions(void* reader, SparkDsSink add, void* sink) {
  (void)reader; (void)add; (void)sink;
  return 1;
}

static void close_reader(void* reader) { (void)reader; }

static int read_partition(const SparkDsTaskContext* task, const uint8_t* state, int64_t state_len,
                          const uint8_t* partition, int64_t partition_len,
                          struct ArrowArrayStream* out) {
  (void)task; (void)state; (void)state_len; (void)partition; (void)partition_len; (void)out;
  return 1;
}

static const SparkDsLibrary TABLE = {
  .size = sizeof(SparkDsLibrary),
  .abi_version = SPARK_DS_ABI_VERSION,
  .last_error = last_error,
  .create = create,
  .create_reader = create_reader,
  .close = close_source,
  .partitions = partitions,
  .close_reader = close_reader,
  .read = read_partition,
};

SPARK_DS_EXPORT int spark_ds_init(const SparkDsHost* host, const SparkDsLibrary** library) {
  (void)host;
  *library = &TABLE;
  return 0;
}
"""


@pytest.fixture(scope="module")
def echo_library(tmp_path_factory):
    directory = tmp_path_factory.mktemp("echo")
    source = directory / "echo.c"
    source.write_text(ECHO_C)
    library = directory / "libspark_datasource_trust_echo.so"
    subprocess.run(
        ["cc", "-std=c11", "-shared", "-fPIC", "-fvisibility=hidden",
         "-I", os.path.join(ROOT, "crates", "spark-datasource"), "-o", str(library), str(source)],
        check=True,
    )
    return str(library)


def test_a_wrong_password_never_shows_in_errors_plans_or_logs(spark, echo_library, capfd):
    password = "hunter2-Zq8"
    name = register(spark, echo_library).name()
    spark.sparkContext.setLogLevel("INFO")
    try:
        df = (
            spark.read.format(name)
            .schema("id long")
            .option("user", "ada")
            .option("password", password)
            .load()
        )
        try:
            df.explain(True)
            explained = ""
        except Exception as error:  # noqa: BLE001 - planning may run create_reader already
            explained = str(error)
        with pytest.raises(Exception) as failure:
            df.collect()
    finally:
        spark.sparkContext.setLogLevel("ERROR")
    output = capfd.readouterr()

    message = str(failure.value)
    assert "cannot connect with the options" in message, message
    assert f"password=`{REDACTED}`" in message, message
    assert "user=`ada`" in message, message
    for text in (message, explained, output.out, output.err):
        assert password not in text


def test_the_sessions_redaction_patterns_reach_the_workers(c_range_library, tmp_path):
    path = copy_as(c_range_library, tmp_path, "trust_redaction")
    session = Session({"spark.redaction.regex": "(?i)dbhost",
                       "spark.sql.redaction.options.regex": "(?i)tenant"})
    library = pickle.loads(pickle.dumps(register(session, path)._library))
    options = {"dbhost": "db.internal", "tenant": "acme", "end": "ten",
               "Access.Key": "AKIA1", "jdbcUrl": "jdbc:x://u:p4ss@h"}

    secrets = _native.secret_values(options, library.redaction)

    # Of a url, the credentials it carries: the host stays, to name what failed.
    assert sorted(secrets) == sorted(["db.internal", "acme", "AKIA1", "u:p4ss", "p4ss"])
    with pytest.raises(NativeDataSourceError) as refused:
        with library.redacting(options):
            raise NativeDataSourceError("trust_redaction", "create",
                                        "no route to db.internal for acme (AKIA1), end `ten`", 5)
    assert str(refused.value).endswith(
        f"(status 5): no route to {REDACTED} for {REDACTED} ({REDACTED}), end `ten`"
    )


def test_a_library_that_logs_a_secret_option_has_it_scrubbed(tmp_path, caplog):
    """The library's log reaches Python's logging (and Spark's worker logs) without the value of
    a secret option, whichever call logs it."""
    from library_fixtures import conformance_fixture
    from spark_native_bridge._datasource import NativeDataSource, _Library

    name = "trust_logs_secret"
    path = conformance_fixture(str(tmp_path), name, "FAULT_ECHO_SECRETS")
    native = _native.load(path, name)
    library = _Library(path=path, sha256=native.sha256, name=name)
    source = type("Source", (NativeDataSource,), {"_library": library})(
        {"end": "4", "password": "open-sesame"}
    )

    with caplog.at_level("INFO", logger="spark_native_bridge"):
        source.schema()

    logged = [r.getMessage() for r in caplog.records if r.name == "spark_native_bridge"]
    assert f"{name}: create: password `{REDACTED}`" in logged, logged
    assert not any("open-sesame" in message for message in logged)
