"""The examples on real Spark, through the bridge, reusing the session of the Spark suite.

The fixtures of `tests/spark/conftest.py` (one local session for all tests, the bridge on the
Python path of the workers) are loaded from that file, not copied: this suite and that one
start Spark the same way.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = os.path.join(ROOT, "examples")

_spec = importlib.util.spec_from_file_location(
    "spark_suite_conftest", os.path.join(ROOT, "tests", "spark", "conftest.py")
)
_suite = importlib.util.module_from_spec(_spec)
sys.modules["spark_suite_conftest"] = _suite
_spec.loader.exec_module(_suite)

# The session fixture of the Spark suite, shared as it is.
spark = _suite.spark


def target_dir() -> str:
    return os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target", "examples")


def build(name: str) -> str:
    """The library of `examples/<name>`, built with cargo (a no-op when it is up to date)."""
    subprocess.run(
        ["cargo", "build", "--quiet"],
        cwd=os.path.join(EXAMPLES, name),
        check=True,
        env=dict(os.environ, CARGO_TARGET_DIR=target_dir()),
    )
    return _suite.library_file(os.path.join(target_dir(), "debug"), name)


def _registered(spark, name):
    from spark_native_bridge import register

    return register(spark, build(name)).name()


@pytest.fixture(scope="session")
def rust_range(spark) -> str:
    return _registered(spark, "rust_range")


@pytest.fixture(scope="session")
def text_files(spark) -> str:
    return _registered(spark, "text_files")


@pytest.fixture(scope="session")
def tail_stream(spark) -> str:
    return _registered(spark, "tail_stream")
