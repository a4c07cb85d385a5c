"""What becomes of the filters that a library accepted (rule 31: it returns only rows where they
are TRUE), as the bridge's option ``acceptedFilters`` says:

- ``check`` (the default, as in the JVM plugin): the worker that reads a partition evaluates them
  on every row the library returns, and a row where one is not TRUE fails the task with a
  conformance error, so a library that breaks its promise is found rather than hidden;
- ``reevaluate``: Spark evaluates them again after the scan, as it does the filters that the
  library refused, so rows that break them are dropped;
- ``trust``: neither; the library's rows are the query's.

The checks follow Spark SQL: NULL is not TRUE, NaN equals NaN and is above every other number,
``-0.0`` equals ``0.0``, strings compare as their UTF-8 bytes.
"""

from typing import Any, Dict, Optional, Sequence, Tuple

# The bridge's option, which never reaches the library.
OPTION = "acceptedFilters"
REEVALUATE = "reevaluate"
CHECK = "check"
TRUST = "trust"
MODES = (REEVALUATE, CHECK, TRUST)
DEFAULT = CHECK

_COMPARISONS = {
    "EqualTo": "=",
    "EqualNullSafe": "<=>",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
}

_KERNELS = {
    "=": "equal",
    "<": "less",
    "<=": "less_equal",
    ">": "greater",
    ">=": "greater_equal",
}


def split(options: Dict[str, str]) -> Tuple[Dict[str, str], str]:
    """`options` without the bridge's own ``acceptedFilters`` (any case), and its mode; a
    ValueError names a value other than the three."""
    rest = {}
    mode = DEFAULT
    for key, value in options.items():
        if key.lower() != OPTION.lower():
            rest[key] = value
            continue
        mode = value.strip().lower()
        if mode not in MODES:
            raise ValueError(
                f"the option `{OPTION}` must be `reevaluate`, `check` or `trust`, got "
                f"`{value.strip()}`"
            )
    return rest, mode


def first_untrue(filters: Sequence[Any], batch) -> Optional[Tuple[Any, int]]:
    """The first of `filters` (pyspark's filter classes) that is not TRUE on some row of
    `batch` (a pyarrow RecordBatch), with the first such row; None when every filter is TRUE
    on every row."""
    import pyarrow.compute as pc

    for filter_ in filters:
        truth = pc.fill_null(_truth(filter_, batch), False)
        row = pc.index(truth, False).as_py()
        if row >= 0:
            return filter_, row
    return None


def sql(filter_) -> str:
    """A filter as Spark SQL writes it, for messages: ``id >= 15``, ``name IS NULL``."""
    kind = type(filter_).__name__
    if kind == "Not":
        return f"NOT ({sql(filter_.child)})"
    column = ".".join(f"`{part}`" if not part.isidentifier() else part for part in _path(filter_))
    if kind in _COMPARISONS:
        return f"{column} {_COMPARISONS[kind]} {_literal(filter_.value)}"
    if kind == "In":
        return f"{column} IN ({', '.join(_literal(value) for value in filter_.value)})"
    if kind == "IsNull":
        return f"{column} IS NULL"
    if kind == "IsNotNull":
        return f"{column} IS NOT NULL"
    functions = {
        "StringStartsWith": "startswith",
        "StringEndsWith": "endswith",
        "StringContains": "contains",
    }
    return f"{functions.get(kind, kind)}({column}, {_literal(filter_.value)})"


def _literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        text = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        return f"CAST('{text}' AS DOUBLE)"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (bytes, bytearray)):
        return "X'" + bytes(value).hex().upper() + "'"
    return str(value)


def _path(filter_) -> Tuple[str, ...]:
    attribute = filter_.attribute
    return (attribute,) if isinstance(attribute, str) else tuple(attribute)


def _column(batch, path: Tuple[str, ...]):
    import pyarrow.compute as pc

    array = batch.column(batch.schema.get_field_index(path[0]))
    for part in path[1:]:
        array = pc.struct_field(array, part)
    return array


def _truth(filter_, batch):
    """Three-valued: a boolean array, null where the filter is NULL (Kleene logic)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = type(filter_).__name__
    if kind == "Not":
        return pc.invert(_truth(filter_.child, batch))
    column = _column(batch, _path(filter_))
    if kind == "IsNull":
        return pc.is_null(column)
    if kind == "IsNotNull":
        return pc.is_valid(column)
    if kind == "In":
        result = pa.array([False] * len(column), pa.bool_())
        for value in filter_.value:
            result = pc.or_kleene(result, _compare(column, "=", value))
        return result
    if kind == "EqualNullSafe":
        if filter_.value is None:
            return pc.is_null(column)
        return pc.fill_null(_compare(column, "=", filter_.value), False)
    if kind in _COMPARISONS:
        return _compare(column, _COMPARISONS[kind], filter_.value)
    pattern = filter_.value
    if kind == "StringStartsWith":
        return pc.starts_with(column, pattern=pattern)
    if kind == "StringEndsWith":
        return pc.ends_with(column, pattern=pattern)
    if kind == "StringContains":
        return pc.match_substring(column, pattern=pattern)
    raise ValueError(f"no check for the filter {filter_!r}")


def _compare(column, op: str, value):
    """`column op value` in Spark's order: NaN equals NaN and is above every other number (Arrow
    compares NaN as IEEE does)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if value is None:
        return pa.nulls(len(column), pa.bool_())
    scalar = pa.scalar(value, type=column.type)
    result = getattr(pc, _KERNELS[op])(column, scalar)
    if not pa.types.is_floating(column.type):
        return result
    # Null where the column is null, as `result` is.
    nan = pc.is_nan(column)
    not_nan = pc.invert(nan)
    if value != value:  # a NaN literal: only a NaN equals it, every number is below it
        return {
            "=": nan,
            "<": not_nan,
            "<=": pc.or_kleene(nan, not_nan),
            ">": pc.and_kleene(nan, not_nan),
            ">=": nan,
        }[op]
    if op in ("<", "<="):
        return pc.and_kleene(result, not_nan)
    if op in (">", ">="):
        return pc.or_kleene(result, nan)
    return result
