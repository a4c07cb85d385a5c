"""The pytest fixtures of the libraries and the jar that the Spark suites load (tests/spark,
tests/jvm, tests/connect, examples/postgres/tests/spark): each is the file that the suite's
harness built and named in an environment variable, or else built here as the harness would.
A conftest imports the fixtures it uses: `from library_fixtures import jar  # noqa: F401`."""

import os
import subprocess

import pytest

from template_projects import ROOT, build_c_range, generate_and_build, library_file

# The read-write variant of the template, and the one with filter pushdown, as every suite
# generates them (their names are their libraries' and data sources').
WRITER_NAME = "e2e_rw"
WRITER_CAPABILITIES = "batch_read,batch_write,streaming_write,truncate"
FILTERS_NAME = "e2e_filters"
FILTERS_PUSHDOWNS = "push_limit,prune_columns,push_filters"


def given_or_built(variable: str, build) -> str:
    """The path that `variable` names, else what `build()` returns."""
    return os.environ.get(variable) or build()


def example_library(variable: str, package: str, name: str) -> str:
    """An example's library (data source `name`): the one that `variable` names (`cargo test` of the
    example sets it), else built here with `cargo build -p <package>`."""

    def build() -> str:
        subprocess.run(["cargo", "build", "--quiet", "-p", package], cwd=ROOT, check=True)
        target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
        return library_file(os.path.join(target, "debug"), name)

    return given_or_built(variable, build)


@pytest.fixture(scope="session")
def jar() -> str:
    """The JVM plugin's jar: SPARKDS_JVM_JAR, or built with `jvm/build.sh --profile dev`."""

    def build() -> str:
        script = os.path.join(ROOT, "jvm", "build.sh")
        built = subprocess.run(
            ["bash", script, "--profile", "dev"], check=True, stdout=subprocess.PIPE, text=True
        )
        return built.stdout.strip()

    return given_or_built("SPARKDS_JVM_JAR", build)


@pytest.fixture(scope="session")
def c_range_library() -> str:
    """The c_range example: SPARK_E2E_C_RANGE_LIBRARY, or built with its Makefile (a no-op
    when it is up to date)."""
    return given_or_built("SPARK_E2E_C_RANGE_LIBRARY", build_c_range)


@pytest.fixture(scope="session")
def writer_library() -> str:
    """The read-write variant of the template (e2e_rw): SPARK_E2E_WRITER_LIBRARY, or generated
    with cargo-generate and built here."""
    return given_or_built(
        "SPARK_E2E_WRITER_LIBRARY",
        lambda: generate_and_build(WRITER_NAME, [f"capabilities={WRITER_CAPABILITIES}"]),
    )


@pytest.fixture(scope="session")
def filters_library() -> str:
    """The template's sample with filter pushdown (`-d pushdowns=...,push_filters`):
    SPARK_E2E_FILTERS_LIBRARY, or generated with cargo-generate and built here."""
    return given_or_built(
        "SPARK_E2E_FILTERS_LIBRARY",
        lambda: generate_and_build(FILTERS_NAME, [f"pushdowns={FILTERS_PUSHDOWNS}"]),
    )


def conformance_fixture(directory: str, name: str, *switches: str) -> str:
    """tests/conformance/fixtures/range.c built as data source `name` in `directory`, with each
    of `switches` defined: `FAULT_FILTER_BROKEN_ROW` (it accepts comparisons on `id` and ignores
    them), `RECORD_WRITES` (the options `record` and `fail_commit`), ... (its comment lists
    them). The fault a test injects is a switch of the fixture, not a copy of it."""
    library = library_file(directory, name)
    command = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-O1",
               "-pthread", "-I", os.path.join(ROOT, "crates", "spark-datasource"), "-o", library]
    command += [f"-D{switch}" for switch in switches]
    command.append(os.path.join(ROOT, "tests", "conformance", "fixtures", "range.c"))
    subprocess.run(command, check=True)
    return library
