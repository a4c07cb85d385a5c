"""The three ways a native data source runs in Spark, behind one interface, so that a claim is
written once and runs on each: the JVM plugin in a classic session (`plugin`), the Python Data
Source bridge in the same session (`bridge`), and the plugin behind a Spark Connect server, driven
by its client (`connect`).

A claim names a data source by its name (`c_range`, `e2e_rw`, ...) and asks the runtime for a
reader or a writer of it; what differs between the runtimes (the format and the option `source`
or a registered name, how pushdown is turned off, the plan's text, what the default of
`acceptedFilters` is, whether filters reach the library, whether a stream resumes) is said here,
once."""

from typing import Dict, Optional

# pyspark offers filters to a Python data source only with this setting (4.1 and later).
PYTHON_PUSHDOWN = "spark.sql.python.filterPushdown.enabled"


class Runtime:
    """One runtime on its session. `libraries` maps a data source name to its library file,
    for the runtimes that must be told where a library is (the bridge); the plugin finds them
    in its native library path."""

    name = ""
    # What the option `acceptedFilters` is when a query does not set it.
    accepted_filters_default = "check"
    # Whether a library is offered the query's filters at all.
    pushes_filters = True

    def __init__(self, spark, libraries: Dict[str, str], resumes_streams: bool = True):
        self.spark = spark
        self.libraries = libraries
        # False where the runtime refuses, with a message, to resume a stream from a checkpoint.
        self.resumes_streams = resumes_streams

    def __repr__(self):
        return self.name

    def format(self, source: str) -> str:
        return "native"

    def _options(self, reader, source: str, options: Dict[str, object]):
        reader = reader.format(self.format(source))
        if self.format(source) == "native":
            reader = reader.option("source", source)
        for key, value in options.items():
            reader = reader.option(key, str(value))
        return reader

    def read(self, source: str, pushdown: bool = True, **options):
        """`spark.read` of `source` with `options`; `pushdown=False` leaves every predicate to
        Spark (the plugin's option pushDownPredicate=false)."""
        if not pushdown:
            options = dict(options, pushDownPredicate="false")
        return self._options(self.spark.read, source, options)

    def read_stream(self, source: str, **options):
        return self._options(self.spark.readStream, source, options)

    def write(self, df, source: str, **options):
        """`df.write` into `source` with `options` (the mode is the claim's to set)."""
        return self._options(df.write, source, options)

    def write_stream(self, df, source: str, **options):
        return self._options(df.writeStream, source, options)

    def plan(self, df) -> str:
        """The physical plan of `df`, as Spark prints it."""
        return df._jdf.queryExecution().executedPlan().toString()


class Plugin(Runtime):
    name = "plugin"


class Connect(Runtime):
    """The plugin behind a Connect server: the client has no JVM, and the server prints the plan
    for it."""

    name = "connect"

    def plan(self, df) -> str:
        return df._explain_string(mode="simple")


class Bridge(Runtime):
    """The bridge: each library is registered in the session once, under its data source name,
    and read with that name as the format. Its pushdown is the session's setting, set by each
    read, which is planned before the next one changes it."""

    name = "bridge"
    accepted_filters_default = "check"

    def __init__(self, spark, libraries: Dict[str, str], resumes_streams: bool = True):
        super().__init__(spark, libraries, resumes_streams)
        self._registered: Dict[str, str] = {}
        # Not on pyspark 4.1 to 4.3, which reuse one query's filtered read plan for the next
        # (spark_native_bridge._datasource._plans_each_scan_apart).
        from spark_native_bridge._datasource import PUSHES_FILTERS

        self.pushes_filters = PUSHES_FILTERS

    def format(self, source: str) -> str:
        if source not in self._registered:
            from spark_native_bridge import register

            library: Optional[str] = self.libraries.get(source)
            if library is None:
                raise KeyError(f"no library of `{source}` is known to the bridge's runtime: "
                               "add it to the claims' `libraries` fixture")
            self._registered[source] = register(self.spark, library).name()
        return self._registered[source]

    def read(self, source: str, pushdown: bool = True, **options):
        self.spark.conf.set(PYTHON_PUSHDOWN, "true" if pushdown else "false")
        return self._options(self.spark.read, source, options)
