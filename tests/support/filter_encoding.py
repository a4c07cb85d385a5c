"""The filter message of `spark_datasource_filters.h`, written out from the header, for the
tests that check what the bridge (tests/spark) and the JVM plugin (tests/jvm) encode."""

import struct

# The operators' codes.
EQ, NULL_SAFE_EQ, LT, LE, GT, GE, IN, IS_NULL, IS_NOT_NULL, AND, OR, NOT = range(1, 13)
STARTS_WITH, ENDS_WITH, CONTAINS = 13, 14, 15


def u32(n):
    return struct.pack("<I", n)


def sized(data):
    return u32(len(data)) + data


def column(*parts):
    """A column reference: its name's parts (one per level of nested fields)."""
    return b"\x00" + u32(len(parts)) + b"".join(sized(p.encode()) for p in parts)


def literal(type_code, value=None, params=b""):
    """A literal of the type `type_code` (its `params` after it), NULL when `value` is None."""
    if value is None:
        return b"\x01" + bytes([type_code]) + params + b"\x01"
    return b"\x01" + bytes([type_code]) + params + b"\x00" + value


def i64(v):
    return literal(5, struct.pack("<q", v))


def i32(v):
    return literal(4, struct.pack("<i", v))


def predicate(op, *operands):
    return sized(bytes([op]) + b"".join(operands))


def message(*predicates):
    return u32(len(predicates)) + b"".join(predicates)


def predicates_of(message_bytes):
    """The predicates of a message, each with its length prefix."""
    (count,) = struct.unpack_from("<I", message_bytes)
    at, found = 4, []
    for _ in range(count):
        (length,) = struct.unpack_from("<I", message_bytes, at)
        found.append(message_bytes[at : at + 4 + length])
        at += 4 + length
    assert at == len(message_bytes)
    return found
