"""pyspark's pushed filters in the binary encoding of ``spark_datasource_filters.h``, version 1.

The header's section "The encoding, version 1" is the specification; the codes below are its
``#define``s. pyspark (4.1 and later) hands a reader's ``pushFilters`` the filter classes of
``pyspark.sql.datasource``, whose values arrive as Python objects (through a Variant), without
their Spark type: each literal is encoded with the type of the column it is compared with, as
the header requires, and exactly (a value that the column's type cannot hold exactly, such as
300 for a tinyint or 0.1 for a float, leaves the filter to Spark).

:func:`encode` returns None for a filter it cannot express, which the bridge leaves to Spark.
"""

import datetime
import decimal
import math
import struct
from typing import Any, Optional, Sequence, Tuple

# Operators.
EQ = 1
NULL_SAFE_EQ = 2
LT = 3
LE = 4
GT = 5
GE = 6
IN = 7
IS_NULL = 8
IS_NOT_NULL = 9
AND = 10
OR = 11
NOT = 12
STARTS_WITH = 13
ENDS_WITH = 14
CONTAINS = 15
ALWAYS_TRUE = 16
ALWAYS_FALSE = 17

# Value kinds.
COLUMN = 0
LITERAL = 1

# Literal types.
TYPE_NULL = 0
TYPE_BOOLEAN = 1
TYPE_INT8 = 2
TYPE_INT16 = 3
TYPE_INT32 = 4
TYPE_INT64 = 5
TYPE_FLOAT32 = 6
TYPE_FLOAT64 = 7
TYPE_DECIMAL128 = 8
TYPE_UTF8 = 9
TYPE_BINARY = 10
TYPE_DATE32 = 11
TYPE_TIMESTAMP = 12
TYPE_TIMESTAMP_NTZ = 13

# The comparisons of pyspark's filter classes, by class name.
_COMPARISONS = {
    "EqualTo": EQ,
    "EqualNullSafe": NULL_SAFE_EQ,
    "LessThan": LT,
    "LessThanOrEqual": LE,
    "GreaterThan": GT,
    "GreaterThanOrEqual": GE,
    "StringStartsWith": STARTS_WITH,
    "StringEndsWith": ENDS_WITH,
    "StringContains": CONTAINS,
}

# The SDK's parser answers 0 beyond this depth; the bridge does not recurse further either.
MAX_DEPTH = 64

_INTEGERS = {  # Spark type name: (type code, struct format, smallest, largest)
    "byte": (TYPE_INT8, "<b", -(2**7), 2**7 - 1),
    "short": (TYPE_INT16, "<h", -(2**15), 2**15 - 1),
    "integer": (TYPE_INT32, "<i", -(2**31), 2**31 - 1),
    "long": (TYPE_INT64, "<q", -(2**63), 2**63 - 1),
}

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_NTZ = datetime.datetime(1970, 1, 1)
# Enough digits for any decimal(38, s) and any value a Variant holds, so nothing rounds.
_DECIMAL_CONTEXT = decimal.Context(prec=200, Emax=10**6, Emin=-(10**6))


class _NotEncodable(Exception):
    """Raised inside the encoder for a part that has no code; never leaves this module."""


def encode(filter_, schema) -> Optional[bytes]:
    """One filter as the header's ``predicate`` (its u32 length, then its operator and operands),
    with literals typed by the columns of `schema` (a pyspark StructType); None when the filter
    holds something the encoding cannot express."""
    try:
        return _predicate(filter_, schema, 1)
    except _NotEncodable:
        return None


def message(predicates: Sequence[bytes]) -> bytes:
    """A message: the u32 count, then the predicates as :func:`encode` returned them."""
    return struct.pack("<I", len(predicates)) + b"".join(predicates)


def _sized(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def _predicate(filter_, schema, depth: int) -> bytes:
    if depth > MAX_DEPTH:
        raise _NotEncodable()
    return _sized(_body(filter_, schema, depth))


def _body(filter_, schema, depth: int) -> bytes:
    kind = type(filter_).__name__
    if kind in _COMPARISONS:
        path = _path(filter_.attribute)
        column_type = _column_type(schema, path)
        if _COMPARISONS[kind] in (STARTS_WITH, ENDS_WITH, CONTAINS):
            _string_or_binary(column_type)
        return bytes([_COMPARISONS[kind]]) + _column(path) + _literal(filter_.value, column_type)
    if kind == "In":
        path = _path(filter_.attribute)
        column_type = _column_type(schema, path)
        values = tuple(filter_.value)
        return (
            bytes([IN])
            + _column(path)
            + struct.pack("<I", len(values))
            + b"".join(_literal(value, column_type) for value in values)
        )
    if kind in ("IsNull", "IsNotNull"):
        path = _path(filter_.attribute)
        _column_type(schema, path)
        return bytes([IS_NULL if kind == "IsNull" else IS_NOT_NULL]) + _column(path)
    if kind == "Not":
        return bytes([NOT]) + _predicate(filter_.child, schema, depth + 1)
    if kind in ("And", "Or"):
        # Not among pyspark 4.3's classes (it pushes no disjunction), but cheap to support
        # should a later pyspark add them with `left` and `right`.
        left = _predicate(getattr(filter_, "left"), schema, depth + 1)
        right = _predicate(getattr(filter_, "right"), schema, depth + 1)
        return bytes([AND if kind == "And" else OR]) + left + right
    raise _NotEncodable()


def _path(attribute) -> Tuple[str, ...]:
    if isinstance(attribute, str):
        attribute = (attribute,)
    path = tuple(attribute)
    if not path or not all(isinstance(part, str) for part in path):
        raise _NotEncodable()
    return path


def _column(path: Tuple[str, ...]) -> bytes:
    return (
        bytes([COLUMN])
        + struct.pack("<I", len(path))
        + b"".join(_sized(part.encode("utf-8")) for part in path)
    )


def _column_type(schema, path: Tuple[str, ...]):
    """The Spark type of the column at `path`, spelled as in the schema (Spark gives the schema's
    names), through structs for a nested field."""
    from pyspark.sql.types import StructType

    current: Any = schema
    for part in path:
        if not isinstance(current, StructType):
            raise _NotEncodable()
        matches = [field for field in current.fields if field.name == part]
        if len(matches) != 1:
            raise _NotEncodable()
        current = matches[0].dataType
    return current


def _string_or_binary(column_type) -> None:
    from pyspark.sql.types import BinaryType, StringType

    if not isinstance(column_type, (StringType, BinaryType)):
        raise _NotEncodable()


def _literal(value, column_type) -> bytes:
    """``literal = u8 type, parameters, u8 null, value`` for `value` as a value of
    `column_type`."""
    from pyspark.sql.types import DecimalType, NullType

    if isinstance(column_type, NullType):
        if value is not None:
            raise _NotEncodable()
        return bytes([LITERAL, TYPE_NULL, 1])
    if isinstance(column_type, DecimalType):
        precision, scale = column_type.precision, column_type.scale
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise _NotEncodable()
        head = bytes([LITERAL, TYPE_DECIMAL128, precision, scale])
        if value is None:
            return head + b"\x01"
        return head + b"\x00" + _unscaled(value, precision, scale).to_bytes(16, "little", signed=True)
    code, encoder = _scalar(column_type)
    if value is None:
        return bytes([LITERAL, code, 1])
    return bytes([LITERAL, code, 0]) + encoder(value)


def _scalar(column_type):
    """The type code of a column type other than decimal and null, and the encoder of its
    values."""
    name = column_type.typeName()
    if name == "boolean":
        return TYPE_BOOLEAN, _boolean
    if name in _INTEGERS:
        code, fmt, low, high = _INTEGERS[name]
        return code, lambda value: struct.pack(fmt, _integer(value, low, high))
    if name == "float":
        return TYPE_FLOAT32, _float32
    if name == "double":
        return TYPE_FLOAT64, _float64
    if name == "string":
        # A collation other than UTF8_BINARY compares otherwise than the header's bytes.
        if getattr(column_type, "collation", "UTF8_BINARY") not in ("UTF8_BINARY", None):
            raise _NotEncodable()
        return TYPE_UTF8, _utf8
    if name == "binary":
        return TYPE_BINARY, _binary
    if name == "date":
        return TYPE_DATE32, _date
    if name == "timestamp":
        return TYPE_TIMESTAMP, _timestamp
    if name == "timestamp_ntz":
        return TYPE_TIMESTAMP_NTZ, _timestamp_ntz
    raise _NotEncodable()


def _boolean(value) -> bytes:
    if not isinstance(value, bool):
        raise _NotEncodable()
    return b"\x01" if value else b"\x00"


def _integer(value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _NotEncodable()
    return value


def _exact_float(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _NotEncodable()
    result = float(value)
    if isinstance(value, int) and int(result) != value:
        raise _NotEncodable()
    return result


def _float32(value) -> bytes:
    number = _exact_float(value)
    try:
        packed = struct.pack("<f", number)
    except OverflowError:
        raise _NotEncodable() from None
    # A double that a float cannot hold exactly would compare otherwise once rounded.
    if not math.isnan(number) and struct.unpack("<f", packed)[0] != number:
        raise _NotEncodable()
    return packed


def _float64(value) -> bytes:
    return struct.pack("<d", _exact_float(value))


def _utf8(value) -> bytes:
    if not isinstance(value, str):
        raise _NotEncodable()
    try:
        return _sized(value.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: not a string Spark could hold
        raise _NotEncodable() from None


def _binary(value) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise _NotEncodable()
    return _sized(bytes(value))


def _date(value) -> bytes:
    if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
        raise _NotEncodable()
    return struct.pack("<i", (value - _EPOCH_DATE).days)


def _micros(delta: datetime.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _timestamp(value) -> bytes:
    # pyspark gives a timestamp as an aware datetime (in the session's time zone); a naive one
    # has no instant, so it is left to Spark.
    if not isinstance(value, datetime.datetime) or value.utcoffset() is None:
        raise _NotEncodable()
    return struct.pack("<q", _micros(value - _EPOCH))


def _timestamp_ntz(value) -> bytes:
    if not isinstance(value, datetime.datetime) or value.tzinfo is not None:
        raise _NotEncodable()
    return struct.pack("<q", _micros(value - _EPOCH_NTZ))


def _unscaled(value, precision: int, scale: int) -> int:
    """The unscaled integer of `value` at exactly `scale`, within `precision` digits."""
    if isinstance(value, bool):
        raise _NotEncodable()
    if isinstance(value, int):
        number = decimal.Decimal(value)
    elif isinstance(value, decimal.Decimal):
        number = value
    else:
        raise _NotEncodable()
    if not number.is_finite():
        raise _NotEncodable()
    scaled = number.scaleb(scale, context=_DECIMAL_CONTEXT)
    if scaled != scaled.to_integral_value(context=_DECIMAL_CONTEXT):
        raise _NotEncodable()
    unscaled = int(scaled)
    if abs(unscaled) >= 10**precision:
        raise _NotEncodable()
    return unscaled

