"""The structure of a ``.sparkpkg``, read from the zip's own bytes, as ``sparkds verify`` reads it
(``crates/sparkds/src/verify/archive.rs`` and the manifest checks of ``verify/mod.rs``).

A package comes from anyone who can add a file to a session, so nothing here trusts what it
declares: the end record, then every central directory header, are read within :class:`Limits`
before any entry is decompressed, and each entry is judged on its name, its type, its sizes and
where its bytes are. The same bytes are then read by this module only (:func:`read_entry`), never
by a second zip reader that could find other entries in them ("one reader decides"): the end
record must be the only one after the central directory and end the file, the directory must end
where the end record starts, and the first entry must start the file.

Pure Python, no import of pyspark: ``python3 -m spark_native_bridge.verify`` runs it anywhere.
"""

import json
import re
import stat
import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Dict, List, Optional, Tuple

MANIFEST = "spark-native-datasource.json"
ABI_VERSION = 1
PLATFORMS = ("linux-x86_64", "linux-aarch64", "osx-x86_64", "osx-aarch64", "windows-x86_64")

_MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What a package may hold: ``Limits::default()`` of ``sparkds verify``."""

    package_bytes: int = 1024 * _MIB
    entries: int = 64
    directory_bytes: int = _MIB
    name_bytes: int = 255
    manifest_bytes: int = 64 * 1024
    manifest_depth: int = 32
    text_bytes: int = 16 * _MIB
    entry_bytes: int = 512 * _MIB
    total_bytes: int = 2048 * _MIB
    ratio: int = 100
    ratio_floor: int = _MIB


LIMITS = Limits()


@dataclass(frozen=True)
class Finding:
    """A broken rule: the entry it is about, the rule (named as ``sparkds verify`` names it),
    and what is wrong and what to do."""

    entry: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.entry}: [{self.rule}] {self.message}"


@dataclass(frozen=True)
class Entry:
    """One central directory header, as declared."""

    name: bytes
    compressed: int
    size: int
    offset: int
    method: int
    flags: int
    made_by: int
    external: int
    crc: int

    @property
    def shown(self) -> str:
        """The name for reports: its text, escaped where it is not printable or not UTF-8."""
        try:
            text = self.name.decode("utf-8")
        except UnicodeDecodeError:
            return "".join(chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}" for b in self.name)
        return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)

    @property
    def text(self) -> Optional[str]:
        try:
            return self.name.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def unix_mode(self) -> Optional[int]:
        if (self.made_by >> 8) in (3, 19) and self.external >> 16:
            return self.external >> 16
        return None

    def is_dir(self) -> bool:
        return self.name.endswith(b"/")

    def is_symlink(self) -> bool:
        mode = self.unix_mode()
        return mode is not None and stat.S_ISLNK(mode)


@dataclass(frozen=True)
class End:
    """The end of central directory record (ZIP64 or not), and where the directory really ends."""

    entries: int
    directory_size: int
    directory_offset: int
    # Where the end record (or the ZIP64 end record) starts: the central directory ends there.
    position: int
    # Where the classic end record starts, and where it ends with its comment.
    record: int
    record_end: int


class NotZip(ValueError):
    """No end of central directory record: not a zip archive at all."""


def size_text(n: int) -> str:
    """A size for messages, as ``sparkds verify`` writes it: bytes, KiB, MiB or GiB."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _read_at(file: BinaryIO, offset: int, length: int) -> bytes:
    file.seek(offset)
    data = file.read(length)
    if len(data) != length:
        raise ValueError(f"the file ends before byte {offset + length}")
    return data


_END = b"PK\x05\x06"
_END64_LOCATOR = b"PK\x06\x07"
_END64 = b"PK\x06\x06"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_LOCAL_HEADER_LEN = 30


def _end_record(file: BinaryIO, length: int) -> End:
    """Finds the end record in the last 64 KiB + 22 bytes (+ the ZIP64 locator), where the format
    puts it; the search never reads more of a large file."""
    tail_len = min(length, 22 + 65535 + 20)
    start = length - tail_len
    tail = _read_at(file, start, tail_len)
    # The last signature with the record's 22 bytes after it.
    at = tail.rfind(_END, 0, max(len(tail) - 18, 0))
    if at < 0:
        raise NotZip("no end of central directory record")
    entries, directory_size, directory_offset, comment_len = struct.unpack_from(
        "<HIIH", tail, at + 10
    )
    record = start + at
    position = record
    # A ZIP64 locator sits right before the end record; Python's zipfile then takes the ZIP64
    # record right before the locator, whatever the locator says, and its values over the end
    # record's: so the locator must point there, and the two records must agree.
    if at >= 20 and tail[at - 20 : at - 16] == _END64_LOCATOR:
        (pointed,) = struct.unpack_from("<Q", tail, at - 20 + 8)
        expected = record - 20 - 56
        if pointed != expected or expected < 0:
            raise ValueError(
                "the ZIP64 locator does not point at a ZIP64 end record right before it"
            )
        fixed = _read_at(file, expected, 56)
        if fixed[:4] != _END64:
            raise ValueError("the ZIP64 end record is missing where its locator points")
        entries64, size64, offset64 = struct.unpack_from("<QQQ", fixed, 32)
        for value, wide, saturated in (
            (entries, entries64, 0xFFFF),
            (directory_size, size64, 0xFFFFFFFF),
            (directory_offset, offset64, 0xFFFFFFFF),
        ):
            if value != saturated and value != wide:
                raise ValueError("the ZIP64 end record and the end record disagree")
        entries, directory_size, directory_offset = entries64, size64, offset64
        position = expected
    return End(
        entries=entries,
        directory_size=directory_size,
        directory_offset=directory_offset,
        position=position,
        record=record,
        record_end=record + 22 + comment_len,
    )


def _zip64_sizes(values: Dict[str, int], extra: bytes) -> None:
    """Replaces the 32-bit sizes and offset that are all ones by their ZIP64 extra field values."""
    at = 0
    while at + 4 <= len(extra):
        field_id, field_len = struct.unpack_from("<HH", extra, at)
        data = extra[at + 4 : at + 4 + field_len]
        if len(data) != field_len:
            return
        if field_id == 0x0001:
            wide = [struct.unpack_from("<Q", data, i)[0] for i in range(0, field_len - 7, 8)]
            for key in ("size", "compressed", "offset"):
                if values[key] == 0xFFFFFFFF:
                    if not wide:
                        return
                    values[key] = wide.pop(0)
            return
        at += 4 + field_len


def _read_directory(file: BinaryIO, end: End, length: int) -> List[Entry]:
    """Every central directory header that the end record declares, and nothing after them:
    readers that count headers and readers that read the directory to its end (Python's zipfile)
    then see the same entries."""
    if end.directory_offset + end.directory_size > length:
        raise ValueError("the central directory lies outside the file")
    data = _read_at(file, end.directory_offset, end.directory_size)
    entries: List[Entry] = []
    at = 0
    for index in range(end.entries):
        header = data[at : at + 46]
        if len(header) < 46 or header[:4] != _CENTRAL:
            raise ValueError(
                f"central directory header {index + 1} of {end.entries} is missing or damaged"
            )
        (made_by, _, flags, method, _, _, crc, compressed, size, name_len, extra_len,
         comment_len, _, _, external, offset) = struct.unpack_from("<HHHHHHIIIHHHHHII", header, 4)
        name_at = at + 46
        extra_at = name_at + name_len
        following = extra_at + extra_len + comment_len
        if following > len(data):
            raise ValueError(
                f"central directory header {index + 1} of {end.entries} runs past the directory"
            )
        values = {"compressed": compressed, "size": size, "offset": offset}
        _zip64_sizes(values, data[extra_at : extra_at + extra_len])
        entries.append(
            Entry(
                name=data[name_at:extra_at],
                method=method,
                flags=flags,
                made_by=made_by,
                external=external,
                crc=crc,
                **values,
            )
        )
        at = following
    if at != len(data):
        raise ValueError(
            f"the central directory holds {len(data) - at} bytes after the {end.entries} entries "
            f"the end record declares"
        )
    return entries


def _special_type(mode: int) -> Optional[str]:
    return {
        stat.S_IFIFO: "a named pipe",
        stat.S_IFCHR: "a character device",
        stat.S_IFBLK: "a block device",
        stat.S_IFSOCK: "a socket",
    }.get(stat.S_IFMT(mode))


def _check_entries(entries: List[Entry], end: End, limits: Limits) -> List[Finding]:
    findings: List[Finding] = []
    seen: Dict[bytes, int] = {}
    folded: Dict[str, str] = {}
    total = 0
    for entry in entries:

        def push(rule: str, message: str, entry: Entry = entry) -> None:
            findings.append(Finding(entry.shown, rule, message))

        if not entry.name:
            push(
                "entry-name",
                "the entry has an empty name: every entry is a file or a directory with a name",
            )
        if len(entry.name) > limits.name_bytes:
            push(
                "entry-name",
                f"the name is {len(entry.name)} bytes long but at most {limits.name_bytes} are "
                f"allowed: file systems refuse longer names, so the package would not unpack",
            )
        name = entry.text
        if name is None:
            push(
                "entry-name",
                "the name is not UTF-8: it would unpack under a different name on each system, "
                "so name entries in UTF-8",
            )
        else:
            if any(_is_control(c) for c in name):
                push(
                    "entry-name",
                    "the name holds a control character: name entries with printable "
                    "characters only",
                )
            key = name.rstrip("/").lower()
            other = folded.get(key)
            if other is not None and other != name:
                push(
                    "duplicate-name",
                    f"the name differs from `{other}` only in case: on a case-insensitive file "
                    f"system (macOS, Windows) one overwrites the other, so rename one",
                )
            else:
                folded[key] = name
            if name.lower().endswith((".sparkpkg", ".zip", ".jar")):
                push(
                    "nested-package",
                    "the entry is an archive inside the package: Spark never unpacks nested "
                    "packages, so put the libraries themselves in the package",
                )
        seen[entry.name] = seen.get(entry.name, 0) + 1
        if seen[entry.name] == 2:
            push(
                "duplicate-name",
                "the archive holds more than one entry of this name: which one is unpacked "
                "depends on the tool, so keep one",
            )
        mode = entry.unix_mode()
        kind = _special_type(mode) if mode is not None else None
        if kind is not None:
            push("unsafe-path", f"the entry is {kind}: a package holds regular files only")
        if entry.flags & 1:
            push(
                "archive",
                "the entry is encrypted: verify cannot check it and Spark cannot load it",
            )
        if entry.method not in (0, 8):
            push(
                "archive",
                f"the entry is compressed with method {entry.method}: a package uses deflate "
                f"(8) or no compression (0)",
            )
        elif entry.method == 0 and entry.compressed != entry.size:
            push(
                "archive",
                f"the entry is stored uncompressed but declares {size_text(entry.compressed)} "
                f"stored and {size_text(entry.size)} unpacked",
            )
        cap = limits.manifest_bytes if entry.name == MANIFEST.encode() else limits.entry_bytes
        if entry.size > cap:
            push(
                "limit",
                f"the entry unpacks to {size_text(entry.size)} but an entry may unpack to at "
                f"most {size_text(cap)}",
            )
        elif entry.size > limits.ratio_floor and entry.size // max(entry.compressed, 1) >= (
            limits.ratio
        ):
            push(
                "limit",
                f"the entry unpacks to {size_text(entry.size)} from "
                f"{size_text(entry.compressed)}, a ratio above {limits.ratio}:1: a library "
                f"compresses a few times at most, so this is a zip bomb",
            )
        total += entry.size
    if total > limits.total_bytes:
        findings.append(
            Finding(
                "(package)",
                "limit",
                f"the entries unpack to {size_text(total)} in all but a package may unpack to "
                f"at most {size_text(limits.total_bytes)}",
            )
        )
    findings.extend(_overlaps(entries, end))
    return findings


def _is_control(c: str) -> bool:
    # Rust's char::is_control: the Unicode general category Cc.
    code = ord(c)
    return code < 0x20 or 0x7F <= code < 0xA0


def _overlaps(entries: List[Entry], end: End) -> List[Finding]:
    """Entries whose bytes overlap another entry's or the central directory: two headers pointing
    at one stream give one content two names, and many of them multiply a small file."""
    findings = []
    by_offset = sorted(entries, key=lambda e: e.offset)
    central_start = min(end.directory_offset, end.position)
    for i, entry in enumerate(by_offset):
        least_end = entry.offset + _LOCAL_HEADER_LEN + len(entry.name) + entry.compressed
        if i + 1 < len(by_offset):
            limit, what = by_offset[i + 1].offset, f"`{by_offset[i + 1].shown}`"
        else:
            limit, what = central_start, "the central directory"
        if least_end > limit:
            findings.append(
                Finding(
                    entry.shown,
                    "archive",
                    f"the entry's bytes overlap those of {what}: entries of a zip archive never "
                    f"share bytes; overlapping entries give one content two names or multiply a "
                    f"small file into a huge one",
                )
            )
    return findings


def _one_reader(file: BinaryIO, end: End, entries: List[Entry], length: int) -> List[Finding]:
    """Findings when another zip reader could see other entries than these: zip readers differ
    in how they find the end record and in whether they shift offsets to skip data before the
    archive, so a package is read only when there is one way to read it (the rules of
    ``one_reading`` in archive.rs)."""
    findings = []

    def refuse(message: str) -> None:
        findings.append(Finding(
            "(package)", "archive", f"{message}: write the package again with `sparkds package`"
        ))

    directory_end = end.directory_offset + end.directory_size
    if directory_end != end.position:
        refuse(
            f"the central directory ends at byte {directory_end}, but the end record starts at "
            f"byte {end.position}: readers disagree on what lies between"
        )
    first = min((e.offset for e in entries), default=0)
    if first != 0:
        refuse(
            f"the first entry starts at byte {first}, not at the start of the file: some "
            f"readers skip the data before the archive, others do not"
        )
    if end.record_end != length:
        refuse(
            f"the end record's comment ends at byte {end.record_end} but the file at byte "
            f"{length}: data after the archive, or a second end record"
        )
    start = min(directory_end, length)
    records = _read_at(file, start, length - start).count(_END)
    if records > 1:
        refuse(
            f"the archive has {records} end records: readers pick different ones, and so see "
            f"different entries"
        )
    return findings


def check_structure(
    file: BinaryIO, length: int, limits: Limits = LIMITS
) -> Tuple[List[Finding], List[Entry]]:
    """The findings of the archive's structure and its entries. Reads the end record and the
    central directory only; an empty list of findings means that each entry may be read, at most
    as large as it declares. Raises :class:`NotZip` for a file without an end record."""

    def package(rule: str, message: str) -> Tuple[List[Finding], List[Entry]]:
        return [Finding("(package)", rule, message)], []

    if length > limits.package_bytes:
        return package(
            "limit",
            f"the package is {size_text(length)} but verify reads packages of at most "
            f"{size_text(limits.package_bytes)}: a package holds one library per platform, so "
            f"remove what is not a library, or strip the libraries' debug information",
        )
    try:
        end = _end_record(file, length)
    except NotZip:
        raise
    except ValueError as error:
        return package("archive", f"{error}: write the package again with `sparkds package`")
    if end.entries > limits.entries:
        return package(
            "limit",
            f"the archive declares {end.entries} entries but a package holds at most "
            f"{limits.entries}: a manifest, its notices and SBOM, and one library per platform",
        )
    if end.directory_size > limits.directory_bytes:
        return package(
            "limit",
            f"the central directory is {size_text(end.directory_size)} but at most "
            f"{size_text(limits.directory_bytes)} is read: its entries carry oversized names, "
            f"extra fields or comments",
        )
    # Where the records lie is known before the directory is read: data before or after the
    # archive is named as such, even when it leaves the directory unreadable.
    placement = _one_reader(file, end, [], length)
    try:
        entries = _read_directory(file, end, length)
    except ValueError as error:
        return placement + [Finding(
            "(package)", "archive", f"{error}: write the package again with `sparkds package` "
            f"or `zip`"
        )], []
    findings = _check_entries(entries, end, limits)
    findings.extend(_one_reader(file, end, entries, length))
    return findings, entries


def read_entry(file: BinaryIO, entry: Entry, cap: int) -> bytes:
    """The bytes of `entry`, at most `cap` and never more than it declares, with its CRC-32
    checked: a header that lies about its size costs no more than one that tells the truth.
    Raises ValueError naming what is wrong."""
    if entry.size > cap:
        raise ValueError(
            f"the entry unpacks to {size_text(entry.size)} but this entry may unpack to at most "
            f"{size_text(cap)}"
        )
    header = _read_at(file, entry.offset, _LOCAL_HEADER_LEN)
    if header[:4] != _LOCAL:
        raise ValueError("the entry's local header is missing: the package is damaged")
    name_len, extra_len = struct.unpack_from("<HH", header, 26)
    if _read_at(file, entry.offset + _LOCAL_HEADER_LEN, name_len) != entry.name:
        raise ValueError(
            "the entry's local header names another file than its central directory header"
        )
    stored = _read_at(file, entry.offset + _LOCAL_HEADER_LEN + name_len + extra_len,
                      entry.compressed)
    if entry.method == 0:
        data = stored
    else:
        inflater = zlib.decompressobj(-15)
        try:
            data = inflater.decompress(stored, entry.size + 1)
        except zlib.error as error:
            raise ValueError(
                f"the entry cannot be unpacked ({error}): the package is damaged, write it again"
            ) from None
    if len(data) > entry.size:
        raise ValueError(
            f"the entry unpacks to more than the {size_text(entry.size)} its header declares "
            f"(larger than its declared uncompressed size): the header lies about its size, as "
            f"a zip bomb's does"
        )
    if len(data) < entry.size:
        raise ValueError(
            f"the entry unpacks to {size_text(len(data))} but its header declares "
            f"{size_text(entry.size)}: the package is damaged, write it again"
        )
    if zlib.crc32(data) != entry.crc:
        raise ValueError("the entry's CRC-32 does not match its bytes: the package is damaged")
    return data


def json_depth(data: bytes) -> int:
    """How deep arrays and objects nest in `data`, strings skipped; one pass, no recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
            continue
        if byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth = max(depth - 1, 0)
    return deepest


def unsafe_path(name: str) -> Optional[str]:
    """Why an entry name could escape the directory a package is unpacked to, if it could."""
    if name.startswith(("/", "\\")) or name[1:2] == ":":
        return "the path is absolute: paths in a package are relative to its root"
    if ".." in re.split(r"[/\\]", name):
        return "the path contains `..`: paths in a package must stay inside it"
    return None


_DATA_SOURCE_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


# The file name rule of libraries, the bridge's copy of `spark_datasource_core::library_file`
# (tests/packaging/file_names.rs holds the two equal): the platform's prefix and suffix, by the
# start of a manifest's platform key.
_FILE_AFFIXES = (("windows", "", ".dll"), ("osx", "lib", ".dylib"), ("linux", "lib", ".so"))
_LIBRARY_NAME_PREFIX = "spark_datasource_"


def library_file_name(platform: str, data_source: str) -> str:
    """The file Spark looks for on `platform` (a manifest key, or just `linux`, `osx`,
    `windows`) to load `data_source`: `libspark_datasource_<name>.so` and so on."""
    for os_name, prefix, suffix in _FILE_AFFIXES:
        if platform.startswith(os_name):
            return f"{prefix}{_LIBRARY_NAME_PREFIX}{data_source}{suffix}"
    return f"lib{_LIBRARY_NAME_PREFIX}{data_source}.so"


def data_source_of_file(file_name: str) -> Optional[str]:
    """The data source of the library file `file_name`, lower case, whatever platform's suffix
    it has, with or without `lib`; None when the name does not follow the rule."""
    for _, _, suffix in _FILE_AFFIXES:
        if file_name.endswith(suffix):
            stem = file_name[: -len(suffix)]
            stem = stem[3:] if stem.startswith("lib") else stem
            name = stem[len(_LIBRARY_NAME_PREFIX) :] if stem.startswith(_LIBRARY_NAME_PREFIX) else ""
            return name.lower() if name else None
    return None


def parse_manifest(data: bytes, limits: Limits = LIMITS) -> Tuple[Optional[dict], List[Finding]]:
    """The manifest, checked as ``sparkds verify`` checks it: its depth is scanned before
    ``json.loads`` runs (which recurses), then its fields."""

    def refuse(rule: str, message: str) -> Finding:
        return Finding(MANIFEST, rule, message)

    depth = json_depth(data)
    if depth > limits.manifest_depth:
        return None, [
            refuse(
                "manifest",
                f"the manifest nests arrays and objects {depth} deep but at most "
                f"{limits.manifest_depth} is read: a manifest nests 2 deep (`libraries` in the "
                f"top object), so remove what is nested in it",
            )
        ]
    shape = (
        'it must be `{ "abiVersion": 1, "dataSources": [...], "libraries": '
        '{ "<platform>": "<path>" } }`'
    )
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return None, [refuse("manifest", f"the manifest is not valid: {error}; {shape}")]
    problem = None
    if not isinstance(manifest, dict):
        problem = "it is not a JSON object"
    elif not isinstance(manifest.get("abiVersion"), int) or isinstance(
        manifest.get("abiVersion"), bool
    ):
        problem = "`abiVersion` is missing or not an integer"
    elif not isinstance(manifest.get("dataSources"), list) or not all(
        isinstance(s, str) for s in manifest["dataSources"]
    ):
        problem = "`dataSources` is missing or not a list of strings"
    elif not isinstance(manifest.get("libraries"), dict) or not all(
        isinstance(v, str) for v in manifest["libraries"].values()
    ):
        problem = "`libraries` is missing or does not map platforms to paths"
    else:
        for key in ("notices", "sbom"):
            if manifest.get(key) is not None and not isinstance(manifest[key], str):
                problem = f"`{key}` is not a path"
    if problem is not None:
        return None, [refuse("manifest", f"the manifest is not valid: {problem}; {shape}")]
    findings = []
    if manifest["abiVersion"] != ABI_VERSION:
        findings.append(
            refuse(
                "abi-version",
                f"`abiVersion` is {manifest['abiVersion']} but this bridge runs version "
                f"{ABI_VERSION} of the interface: set it to {ABI_VERSION}",
            )
        )
    if not manifest["dataSources"]:
        findings.append(
            refuse(
                "data-source",
                "`dataSources` is empty: list the data sources that the libraries implement",
            )
        )
    for name in manifest["dataSources"]:
        if not _DATA_SOURCE_NAME.match(name):
            findings.append(
                refuse(
                    "data-source",
                    f"data source name `{name}` is invalid: use lower case letters, digits and "
                    f"`_`, starting with a letter",
                )
            )
    if not manifest["libraries"]:
        findings.append(refuse("platform", "`libraries` is empty: list one library per platform"))
    return manifest, findings


def check_listed(
    manifest: dict, entries: List[Entry]
) -> Tuple[Dict[str, Entry], List[Finding]]:
    """The entries that the manifest lists, by platform key, and the findings about names, paths,
    links, missing and extra files, as ``sparkds verify`` reports them."""
    findings: List[Finding] = []
    by_name: Dict[str, Entry] = {}
    for entry in entries:
        name = entry.name.decode("utf-8", errors="replace")
        problem = unsafe_path(name)
        if problem is not None:
            findings.append(Finding(name, "unsafe-path", problem))
            continue
        if entry.is_symlink():
            findings.append(
                Finding(
                    name,
                    "unsafe-path",
                    "the entry is a symbolic link: a package holds regular files only, so it "
                    "cannot point outside the directory it is unpacked to",
                )
            )
            continue
        by_name[name] = entry
    libraries: Dict[str, Entry] = {}
    listed = {MANIFEST}
    sources = manifest["dataSources"]
    for key, path in manifest["libraries"].items():
        listed.add(path)
        if key not in PLATFORMS:
            findings.append(
                Finding(path, "platform", f"unknown platform key `{key}`: use one of "
                        f"{', '.join(PLATFORMS)}")
            )
        problem = unsafe_path(path)
        if problem is not None:
            findings.append(
                Finding(path, "unsafe-path", f"the manifest lists it for `{key}`, but {problem}")
            )
            continue
        if key in PLATFORMS:
            expected = [library_file_name(key, s) for s in sources]
            if path.rsplit("/", 1)[-1] not in expected:
                findings.append(
                    Finding(
                        path,
                        "file-name",
                        f"a `{key}` library of [{', '.join(f'`{s}`' for s in sources)}] must be "
                        f"named {' or '.join(f'`{e}`' for e in expected)}: Spark finds a "
                        f"library by this name",
                    )
                )
        entry = by_name.get(path)
        if entry is None or entry.is_dir():
            findings.append(
                Finding(
                    path,
                    "missing-file",
                    f"the manifest lists it for `{key}` but the archive does not contain it: add "
                    f"the file, or remove `{key}` from `libraries`",
                )
            )
            continue
        libraries[key] = entry
    for key in ("notices", "sbom"):
        if manifest.get(key):
            listed.add(manifest[key])
    for name, entry in by_name.items():
        directory = name.rstrip("/") + "/"
        parent_of_listed = entry.is_dir() and any(path.startswith(directory) for path in listed)
        if name not in listed and not parent_of_listed:
            findings.append(
                Finding(
                    name,
                    "extra-file",
                    "the manifest does not list this entry: a package holds only its manifest "
                    "and the files the manifest lists (`libraries`, `notices`, `sbom`), so "
                    "remove it",
                )
            )
    return libraries, findings


# ELF e_machine and Mach-O cputype of each platform.
_ELF_MACHINES = {"linux-x86_64": 62, "linux-aarch64": 183}
_MACHO_CPUS = {"osx-x86_64": 0x01000007, "osx-aarch64": 0x0100000C}


def check_library(key: str, path: str, data: bytes) -> List[Finding]:
    """Whether `data` is a shared library that the loader of platform `key` would load: the
    format and the architecture, read from the headers (the loader checks the rest)."""

    def refuse(rule: str, message: str) -> List[Finding]:
        return [Finding(path, rule, message)]

    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return refuse(
            "nested-package",
            f"the manifest lists it for `{key}`, but it is a zip archive, a package inside the "
            f"package: Spark would load it as a shared library and fail, so put the library "
            f"itself here",
        )
    shared = "build it as a shared library (`crate-type = [\"cdylib\"]`, or `-shared`)"
    found = _format_of(data)
    expected = "ELF" if key.startswith("linux") else "Mach-O" if key.startswith("osx") else "PE"
    if found is not None and found != expected:
        return refuse(
            "format",
            f"the library is {found} but `{key}` needs {expected}: build it for {key} or list it "
            f"under its own platform",
        )
    if key.startswith("linux"):
        if data[:4] != b"\x7fELF" or len(data) < 20:
            return refuse("format", f"the library is not a shared library (not ELF): {shared}")
        order = "<" if data[5] == 1 else ">"
        kind, machine = struct.unpack_from(order + "HH", data, 16)
        if kind != 3:
            names = {1: "Relocatable", 2: "Executable", 4: "Core"}
            return refuse(
                "format",
                f"the library is not a shared library but a {names.get(kind, 'Unknown')} file: "
                f"{shared}",
            )
        if machine != _ELF_MACHINES[key]:
            return refuse(
                "architecture",
                f"the library is ELF for machine {machine} but `{key}` needs "
                f"{_ELF_MACHINES[key]}: build it for {key} or list it under its own platform",
            )
        return []
    if key.startswith("osx"):
        if data[:4] == b"\xca\xfe\xba\xbe":
            return []  # A universal binary: the loader picks the architecture.
        if data[:4] != b"\xcf\xfa\xed\xfe" or len(data) < 16:
            return refuse("format", f"the library is not a Mach-O shared library: {shared}")
        cpu, _, kind = struct.unpack_from("<III", data, 4)
        if kind != 6:
            return refuse("format", f"the library is not a shared library (Mach-O type {kind})")
        if cpu != _MACHO_CPUS[key]:
            return refuse(
                "architecture",
                f"the library is Mach-O for CPU {cpu:#x} but `{key}` needs "
                f"{_MACHO_CPUS[key]:#x}",
            )
        return []
    if key.startswith("windows"):
        if data[:2] != b"MZ" or len(data) < 64:
            return refuse("format", f"the library is not a PE DLL: {shared}")
        (pe,) = struct.unpack_from("<I", data, 60)
        if data[pe : pe + 4] != b"PE\x00\x00" or len(data) < pe + 24:
            return refuse("format", "the library is not a PE DLL: its PE header is missing")
        machine, _, _, _, _, _, characteristics = struct.unpack_from("<HHIIIHH", data, pe + 4)
        if not characteristics & 0x2000:
            return refuse("format", f"the library is a PE executable, not a DLL: {shared}")
        if machine != 0x8664:
            return refuse("architecture", f"the library is PE for machine {machine:#x}, not x86_64")
        return []
    return []


def _format_of(data: bytes) -> Optional[str]:
    if data[:4] == b"\x7fELF":
        return "ELF"
    if data[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe",
                    b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce"):
        return "Mach-O"
    if data[:2] == b"MZ":
        return "PE"
    return None


@dataclass
class Checked:
    """What :func:`check_package` found: the manifest (when it parsed), the listed libraries'
    entries by platform, and every finding."""

    manifest: Optional[dict]
    libraries: Dict[str, Entry]
    findings: List[Finding]


def check_package(
    file: BinaryIO, length: int, platforms: Optional[List[str]] = None, limits: Limits = LIMITS
) -> Checked:
    """Checks the package in `file` (`length` bytes) as the bridge reads it: its structure, its
    manifest, its entries' names and paths, and the libraries of `platforms` (every listed one
    when None). Raises :class:`NotZip` for a file that is not a zip archive."""
    findings, entries = check_structure(file, length, limits)
    if findings:
        return Checked(None, {}, findings)
    manifest_entry = next((e for e in entries if e.name == MANIFEST.encode()), None)
    if manifest_entry is None:
        return Checked(None, {}, [
            Finding(MANIFEST, "manifest", "the package has no manifest at its root: write it "
                    "with `sparkds package`")
        ])
    try:
        data = read_entry(file, manifest_entry, limits.manifest_bytes)
    except ValueError as error:
        return Checked(None, {}, [Finding(MANIFEST, "archive", str(error))])
    manifest, findings = parse_manifest(data, limits)
    if manifest is None:
        return Checked(None, {}, findings)
    libraries, listed = check_listed(manifest, entries)
    findings.extend(listed)
    for key, entry in libraries.items():
        if platforms is not None and key not in platforms:
            continue
        path = manifest["libraries"][key]
        try:
            library = read_entry(file, entry, limits.entry_bytes)
        except ValueError as error:
            findings.append(Finding(path, "archive", str(error)))
            continue
        findings.extend(check_library(key, path, library))
    return Checked(manifest, libraries, findings)
