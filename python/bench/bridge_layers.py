"""Measures the two ways the Python bridge could run a library, side by side in one run, and
prints the figures of the book's bridge chapter ("Pure Python, not a layer over the Rust host"):

- `python`: the bridge as it is, pure Python (ctypes, pyarrow's C stream import, its checks);
- `rust`: a thin pyo3 module over the Rust host (`pyo3_probe/`, built with
  `maturin build --release`), whose read runs the host's batch read with its checks.

For each: the start-up of a fresh interpreter that has pyarrow and pyspark (as Spark's Python
worker has), from the layer's import to the end of a first small read (best of --repeat), and a read of --rows rows in batches of --batch-rows (best of --repeat, the two
taking turns), as time per batch.

  python3 python/bench/bridge_layers.py LIBDIR [--rows N] [--batch-rows N] [--repeat N]

LIBDIR holds libspark_datasource_c_range.so (examples/c_range built with -O2); the probe's wheel
is installed in the running Python (pip install --target, then PYTHONPATH).
"""

import argparse
import ctypes
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def python_read(path: str, options: dict) -> tuple:
    """Every partition of the batch read through the bridge's own path (ctypes, pyarrow)."""
    from contextlib import ExitStack

    from spark_native_bridge import _datasource, _native

    native = _native.load(path, "c_range")
    rows = batches = 0
    with ExitStack() as handles:
        source, _ = handles.enter_context(native.source(options))
        arrow_schema = native.schema(source)
        exported = handles.enter_context(native.exported_schema(arrow_schema))
        reader = handles.enter_context(
            native.handle("create_reader", "close_reader", source, ctypes.byref(exported))
        )
        parts = native.collect("partitions", reader)
        state = native.collect_one("serialize_reader", reader) if native.has("serialize_reader") else None
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = from_arrow_schema(arrow_schema)

    class Loaded:
        name = "c_range"

        @staticmethod
        def load():
            return native

    for i, data in enumerate(parts):
        partition = _datasource.NativePartition(i, state, data)
        for batch in _datasource._read_batches(Loaded, schema, partition, ()):
            rows += batch.num_rows
            batches += 1
    return rows, batches


def rust_read(path: str, options: dict) -> tuple:
    import native_bridge_probe

    return native_bridge_probe.read_all(path, list(options.items()))


def startup(layer: str, path: str, repeat: int) -> float:
    """Seconds from the layer's import to the end of a first read of 1000 rows, in a fresh
    interpreter that has imported pyarrow and pyspark already, as Spark's Python worker has;
    best of `repeat`."""
    code = (
        f"import sys, time; sys.path.insert(0, {os.path.join(HERE, '..')!r}); "
        f"sys.path.insert(0, {HERE!r}); import pyarrow, pyspark.sql.datasource, "
        f"pyspark.sql.pandas.types; import bridge_layers as b; start = time.perf_counter(); "
        f"b.{layer}_read({path!r}, {{'end': '1000'}}); print(time.perf_counter() - start)"
    )
    best = float("inf")
    for _ in range(repeat):
        output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        best = min(best, float(output.stdout.decode().split()[-1]))
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("libdir")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--batch-rows", type=int, default=1024)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path = os.path.join(args.libdir, "libspark_datasource_c_range.so")
    options = {"end": str(args.rows), "batch_rows": str(args.batch_rows), "num_partitions": "1"}
    best = {"python": float("inf"), "rust": float("inf")}
    counted = {}
    for _ in range(args.repeat):
        for layer, read in (("python", python_read), ("rust", rust_read)):
            start = time.perf_counter()
            counted[layer] = read(path, options)
            best[layer] = min(best[layer], time.perf_counter() - start)
    assert counted["python"] == counted["rust"], counted
    rows, batches = counted["python"]
    print(f"read: {rows} rows in {batches} batches of {args.batch_rows}, best of {args.repeat}")
    for layer in best:
        print(
            f"  {layer:6} {best[layer]:.3f} s  {best[layer] / batches * 1e6:.1f} us a batch  "
            f"{rows / best[layer] / 1e6:.1f} M rows/s"
        )
    print(f"start-up, from the import to the end of a first read, best of {args.repeat}:")
    for layer in best:
        print(f"  {layer:6} {startup(layer, path, args.repeat):.3f} s")


if __name__ == "__main__":
    main()
