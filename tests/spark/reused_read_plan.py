"""pyspark 4.1 to 4.3: a Python data source's filtered read plan is reused by later scans.

A reader that applies the filters it accepts in pushFilters() reads, in every later query of
the same DataFrame (or of a view of it), with the filters of an earlier query: the plan that
filter pushdown made is kept on the relation and handed to the next scan. Run it with pyspark
and Java: `python3 reused_read_plan.py`; each answer ends with WRONG where it is wrong.
"""

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, GreaterThan, LessThan


class TenReader(DataSourceReader):
    """The ids 0 to 9; `id < x` and `id > x` are applied in read(), so Spark drops them."""

    def __init__(self):
        self.low, self.high = None, None

    def pushFilters(self, filters):
        for f in filters:
            if isinstance(f, LessThan) and f.attribute == ("id",):
                self.high = f.value
            elif isinstance(f, GreaterThan) and f.attribute == ("id",):
                self.low = f.value
            else:
                yield f

    def read(self, partition):
        for i in range(10):
            if (self.low is None or i > self.low) and (self.high is None or i < self.high):
                yield (i,)


class Ten(DataSource):
    @classmethod
    def name(cls):
        return "ten"

    def schema(self):
        return "id int"

    def reader(self, schema):
        return TenReader()


def reproduce(spark):
    """[(query, answer, right answer)] on `spark`, whose filter pushdown must be on."""
    if __name__ != "__main__":
        # Imported (by a test), the classes travel to the Python workers by value, as a
        # script's do: the workers cannot import this file.
        import sys

        from pyspark import cloudpickle

        cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark.dataSource.register(Ten)
    df = spark.read.format("ten").load()
    df.createOrReplaceTempView("ten_view")
    return [
        ("df.where('id < 3').count()", df.where("id < 3").count(), 3),
        ("df.count()", df.count(), 10),
        ("SELECT count(*) FROM ten_view", spark.sql("SELECT count(*) FROM ten_view").first()[0], 10),
        ("df.where('id > 6').count()", df.where("id > 6").count(), 3),
        ("df.where('id < 2').union(df.where('id > 6')).count()",
         df.where("id < 2").union(df.where("id > 6")).count(), 5),
    ]


if __name__ == "__main__":
    session = (
        SparkSession.builder.master("local[1]")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    for query, answer, right in reproduce(session):
        print(f"{query} = {answer}, expected {right}{'' if answer == right else '  WRONG'}")
