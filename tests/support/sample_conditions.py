"""Conditions over the template's sample (`id` bigint, `label` string, null in every third row),
generated from a seed, for the property tests of filter pushdown in tests/spark and tests/jvm:
the rows that a query reads with pushdown must be those Spark computes itself, without it.

Comparisons of `id` with integers and NULLs, IN lists (empty, with a NULL), BETWEEN, <=>, and
AND, OR and NOT of those, sometimes with a condition on `label`, which the sample leaves to
Spark. Built as pyspark Columns, so call them while a session is active."""

import random

# The sample reads the ids [0, END).
END = 60
SEED = 20250101
COUNT = 30


def sample_rows(end=END):
    """The rows of the sample: (id, label), the label null in every third row."""
    return [(i, None if i % 3 == 2 else f"row {i}") for i in range(end)]


def _leaf(rng, F):
    id_ = F.col("id")
    value = rng.randrange(-5, END + 5)
    null = F.lit(None).cast("bigint")
    choice = rng.randrange(7)
    if choice == 0:
        comparisons = [id_ == value, id_ < value, id_ <= value, id_ > value, id_ >= value]
        return comparisons[rng.randrange(5)]
    if choice == 1:
        return id_.isin(rng.sample(range(-3, END + 3), rng.randrange(0, 6)))
    if choice == 2:
        return id_.isin([rng.randrange(END), None])
    if choice == 3:
        with_nulls = [id_ == null, id_ > null, id_.eqNullSafe(value), id_.eqNullSafe(null)]
        return with_nulls[rng.randrange(4)]
    if choice == 4:
        return id_.between(value, value + rng.randrange(20))
    if choice == 5:
        return id_ != value
    return F.col("label").isNotNull() if rng.random() < 0.5 else F.col("label") >= "row 4"


def random_condition(rng, depth=0):
    from pyspark.sql import functions as F

    choice = rng.randrange(8 if depth < 2 else 4)
    if choice < 4:
        return _leaf(rng, F)
    if choice in (4, 5):
        return random_condition(rng, depth + 1) & random_condition(rng, depth + 1)
    if choice == 6:
        return random_condition(rng, depth + 1) | random_condition(rng, depth + 1)
    return ~random_condition(rng, depth + 1)


def conditions(seed=SEED, count=COUNT):
    """`count` generated conditions, after a few that every run needs: an empty IN list, NULL
    literals, and conjuncts the sample accepts together."""
    from pyspark.sql import functions as F

    id_ = F.col("id")
    null = F.lit(None).cast("bigint")
    fixed = [
        id_.isin([]),
        id_ == null,
        id_.isin([7, None]),
        (id_ >= 10) & id_.isin([3, 11, 12, 14, 59]),
        ~id_.isin([1, 2, 3]) & (id_ < 8),
    ]
    rng = random.Random(seed)
    return fixed + [random_condition(rng) for _ in range(count)]
