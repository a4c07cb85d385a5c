"""Private copies: the only files the bridge loads or unpacks from.

A library is loaded from the bytes that were hashed, never from a path that someone could
replace between the check and the load: each candidate is read once, hashed while it is written
into a directory that this process created (mode 0700, owned by it, not a link), and that copy is
what ``ctypes`` loads. The directory is removed as soon as the load is done: the loader keeps the
mapped file alive, and Python workers end with ``os._exit``, which runs no exit handler.
"""

import atexit
import hashlib
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from typing import BinaryIO, Iterator, Optional, Tuple

_CHUNK = 1 << 20


class NotPrivate(PermissionError):
    """The directory that should be private is not."""


def check_private(directory: str) -> None:
    """Raises NotPrivate unless `directory` is a directory (not a link) that this process's user
    owns and that no one else may enter."""
    status = os.lstat(directory)
    problems = []
    if stat.S_ISLNK(status.st_mode) or not stat.S_ISDIR(status.st_mode):
        problems.append("it is not a directory")
    if hasattr(os, "geteuid") and status.st_uid != os.geteuid():
        problems.append(f"it is owned by user {status.st_uid}, not {os.geteuid()}")
    if os.name == "posix" and stat.S_IMODE(status.st_mode) & 0o077:
        problems.append(f"its mode is {stat.S_IMODE(status.st_mode):o}, not 700")
    if problems:
        raise NotPrivate(f"{directory} is not private: {', '.join(problems)}")


@contextmanager
def private_directory() -> Iterator[str]:
    """A new directory that only this process's user can enter, removed on leaving."""
    directory = tempfile.mkdtemp(prefix="spark_native_bridge-")
    # Windows cannot remove a loaded DLL: what remains goes when the process exits normally.
    atexit.register(shutil.rmtree, directory, True)
    try:
        check_private(directory)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class NotRegular(OSError):
    """A path that exists but is not a regular file: its message says what it is."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "neither a file nor a directory"


def open_regular(path: str) -> BinaryIO:
    """`path` opened for reading, if it is a regular file (links followed): opened without
    waiting (O_NONBLOCK: a named pipe would wait for a writer; O_NOCTTY: a device never becomes
    the terminal), then checked on the descriptor itself, so that what is read is what was
    checked. Raises NotRegular, whose message is "it is a named pipe (FIFO), not a regular
    file", for anything else, and the OSError of a file that cannot be opened."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(f"it is {_kind(mode)}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def reason(error: OSError) -> str:
    """Why a file could not be opened, for messages that name it: "it is a named pipe (FIFO), not
    a regular file", "no such file"."""
    if isinstance(error, NotRegular):
        return str(error)
    return error.strerror.lower() if error.strerror else str(error)


def new_file(directory: str, name: str) -> BinaryIO:
    """A new file `name` in the private `directory`, created by this call (never an existing one,
    never through a link)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    return os.fdopen(os.open(os.path.join(directory, name), flags, 0o600), "wb")


def copy(source: BinaryIO, directory: str, name: str, limit: Optional[int] = None) -> Tuple[str, str, int]:
    """Copies `source` into `directory` as `name` while hashing it: (path, SHA-256, size). With
    `limit`, raises ValueError once more than `limit` bytes were read."""
    digest = hashlib.sha256()
    size = 0
    path = os.path.join(directory, name)
    with new_file(directory, name) as out:
        for block in iter(lambda: source.read(_CHUNK), b""):
            size += len(block)
            if limit is not None and size > limit:
                raise ValueError(f"more than {limit} bytes")
            digest.update(block)
            out.write(block)
    return path, digest.hexdigest(), size


def write(data: bytes, directory: str, name: str) -> Tuple[str, str]:
    """Writes `data` into `directory` as `name`: (path, SHA-256 of `data`)."""
    with new_file(directory, name) as out:
        out.write(data)
    return os.path.join(directory, name), hashlib.sha256(data).hexdigest()
