"""What the Spark suites expect of examples/c_range and of a failing call, written once: c_range's
rows, a DataFrame's (id, label) rows, and the exception a call must raise. (The conformance
fixture range.c has other rows: `name`, NULL on every fourth.)"""


def c_range_rows(start, end):
    """The rows of c_range over [start, end): `label i`, NULL for every third row."""
    return [(i, None if i % 3 == 2 else f"label {i}") for i in range(start, end)]


def rows(df):
    """The (id, label) rows of `df`, sorted."""
    return sorted((row.id, row.label) for row in df.collect())


def failure(call):
    """The exception that `call()` raises, which must be one."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test looks at what the query got
        return error
    raise AssertionError("no error was raised")


def spark_keeps(spark, all_rows, conditions):
    """For each condition, the (id, label) rows of `all_rows` that Spark's own WHERE keeps (those
    where it is TRUE), sorted: the oracle of the filter claims. One job evaluates every condition
    as a column of a local DataFrame, instead of one job per condition."""
    local = spark.createDataFrame(all_rows, "id long, label string")
    columns = [condition.alias(f"c{i}") for i, condition in enumerate(conditions)]
    evaluated = local.select("id", "label", *columns).collect()
    return [
        sorted((row.id, row.label) for row in evaluated if row[f"c{i}"] is True)
        for i in range(len(conditions))
    ]
