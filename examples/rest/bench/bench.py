#!/usr/bin/env python3
"""The rest example against the same API as a PySpark Python data source (python_source.py), side
by side in one local[2] session: a full read of every issue into Spark's `noop` sink through
the JVM plugin, through the bridge and through the Python data source (the three in turn, round
after round, best of --repeat), and the requests each makes for a `LIMIT 10`.

    python3 examples/rest/bench/bench.py [--issues 100000] [--repeat 3] [--json]

The API is examples/issues_api.rs (the tests' issues API as a process of its own, release
build), on 127.0.0.1. Its answers cost the same to every reader, so the ratios are the readers'.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(EXAMPLE))
BRIDGE = os.path.join(ROOT, "python")
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
sys.path.insert(0, BRIDGE)
sys.path.insert(0, HERE)
import spark_session  # noqa: E402

TOKEN = "t0ken-of-the-tests"
RESOURCE = "/repos/sparkds/demo/issues"
PATHS = ["plugin", "bridge", "python data source"]


def log(message):
    print(message, file=sys.stderr, flush=True)


def cargo(*args):
    subprocess.run(["cargo", *args, "--quiet"], cwd=ROOT, check=True)


def requests_of(url):
    import urllib.request

    with urllib.request.urlopen(f"{url}/_requests") as answer:
        return json.load(answer)["requests"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--issues", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    parser.add_argument("--jar", help="the plugin's jar (default: jvm/build.sh --profile release)")
    args = parser.parse_args()

    log("building the library and the API (release)")
    cargo("build", "--release", "-p", "rest_example", "--lib", "--example", "issues_api")
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    library = os.path.join(target, "release", "libspark_datasource_rest.so")
    jar = args.jar or subprocess.run(
        ["bash", os.path.join(ROOT, "jvm", "build.sh"), "--profile", "release"],
        check=True, stdout=subprocess.PIPE, text=True,
    ).stdout.strip()
    api = subprocess.Popen(
        [os.path.join(target, "release", "examples", "issues_api"), str(args.issues)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    url = api.stdout.readline().strip()
    try:
        results = measure(url, library, jar, args)
    finally:
        api.stdin.close()
        api.wait(timeout=30)
    if args.json:
        print(json.dumps(results))
        return
    print(table(results))


def measure(url, library, jar, args):
    spark_session.python_workers_import(os.pathsep.join([BRIDGE, HERE]))
    builder = spark_session.builder(
        "sparkds-rest-bench", os.path.join(ROOT, "target", "rest-bench-warehouse"),
        jars=[jar], library_path=os.path.dirname(library),
        conf={"spark.python.worker.reuse": "true", "spark.sql.session.timeZone": "UTC"},
    )
    from spark_native_bridge import register
    from python_source import IssuesSource

    options = dict(url=url, resource=RESOURCE, token=TOKEN, partitions="4")
    with spark_session.started(builder) as spark:
        bridge = register(spark, library).name()
        spark.dataSource.register(IssuesSource)
        readers = {
            "plugin": lambda: spark.read.format("native").option("source", "rest").options(**options).load(),
            "bridge": lambda: spark.read.format(bridge).options(**options).load(),
            "python data source": lambda: spark.read.format("issues_py").options(**options).load(),
        }
        seconds = {path: [] for path in PATHS}
        for round_ in range(args.repeat + 1):
            for path in PATHS[round_ % 3:] + PATHS[:round_ % 3]:
                started = time.perf_counter()
                readers[path]().write.format("noop").mode("overwrite").save()
                if round_ > 0:  # the first round warms the JVM, the library and the workers
                    seconds[path].append(time.perf_counter() - started)
            log(f"round {round_}: " + ", ".join(f"{p} {s[-1]:.2f} s" for p, s in seconds.items() if s))
        limit_requests = {}
        for path in PATHS:
            before = requests_of(url)
            assert len(readers[path]().limit(10).collect()) == 10
            limit_requests[path] = requests_of(url) - before
    return {
        "issues": args.issues,
        "seconds": {path: round(min(s), 3) for path, s in seconds.items()},
        "limit_requests": limit_requests,
    }


def table(results):
    python = results["seconds"]["python data source"]
    lines = [
        f"{results['issues']:,} issues, local[2], 4 partitions, best of the runs",
        f"{'':20}{'seconds':>10}{'x python':>10}{'LIMIT 10: requests':>20}",
    ]
    for path in PATHS:
        seconds = results["seconds"][path]
        lines.append(
            f"{path:20}{seconds:10.2f}{python / seconds:10.2f}{results['limit_requests'][path]:20}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
