"""The examples on real Spark, through the bridge of this repository, reusing the session of the
Spark suite.

The bridge is the package of `python/`, the one that `pip install ./python` installs; it is put
on the Python path of this process and, through PYTHONPATH, of the workers that Spark spawns,
before the session starts. The session fixture of `tests/spark/conftest.py` (one local session
for all tests) is loaded from that file, not copied: this suite and that one start Spark the
same way.
"""

import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BRIDGE = os.path.join(ROOT, "python")

_spec = importlib.util.spec_from_file_location(
    "spark_suite_conftest", os.path.join(ROOT, "tests", "spark", "conftest.py")
)
_suite = importlib.util.module_from_spec(_spec)
sys.modules["spark_suite_conftest"] = _suite
_spec.loader.exec_module(_suite)

# After the suite's conftest, which sets its own path: the bridge of python/ comes first, here
# and in the workers, whatever that file puts on the path.
sys.path.insert(0, BRIDGE)
_suite.spark_session.python_workers_import(BRIDGE)

# The session fixture of the Spark suite, shared as it is.
spark = _suite.spark

# On the path since the suite's conftest ran.
from template_projects import library_file  # noqa: E402


def target_dir() -> str:
    """Where cargo builds the examples: the target directory that `cargo test -p suite
    --test examples` gives, else `target/generated` (see examples_target in the harness's
    helpers), apart from the `target/` of a running `cargo test`."""
    return os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target", "generated")


def build(name: str) -> str:
    """The library of the example `name`, a member of the repository's workspace, built with
    cargo from the repository's root (a no-op when it is up to date); or the test runner's
    build of it, `CARGO_CDYLIB_FILE_<NAME>` (tests/suite), which `cargo build -p` would make
    again with the example's features alone."""
    given = os.environ.get(f"CARGO_CDYLIB_FILE_{name.upper().replace('-', '_')}")
    if given:
        return given
    subprocess.run(
        ["cargo", "build", "--quiet", "-p", name],
        cwd=ROOT,
        check=True,
        env=dict(os.environ, CARGO_TARGET_DIR=target_dir()),
    )
    return library_file(os.path.join(target_dir(), "debug"), name)


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
