"""The libraries that the Python suites (tests/spark, tests/jvm) and jvm/bench.py load, built
here when no test harness passed them: the c_range example with its Makefile, and projects
generated from the template with cargo-generate and built with cargo, as a user would."""

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
C_RANGE = os.path.join(ROOT, "examples", "c_range")
# Generated projects share one target directory, so that the SDK is compiled once.
GENERATED_TARGET = os.path.join(ROOT, "target", "generated")


def library_file(directory: str, name: str) -> str:
    """The file of data source `name` in `directory`, as cargo and c_range's Makefile name it."""
    suffix = ".dylib" if sys.platform == "darwin" else ".so"
    return os.path.join(directory, f"libspark_datasource_{name}{suffix}")


def build_c_range() -> str:
    """examples/c_range, built with its Makefile (a no-op when it is up to date)."""
    subprocess.run(["make", "-s", "-C", C_RANGE], check=True)
    return library_file(C_RANGE, "c_range")


def generate_and_build(name, defines, connector=None, release=False) -> str:
    """Generates project `name` from the template with the answers `defines` (`key=value`),
    replaces its `src/connector/mod.rs` with the file `connector` if given, builds it and
    returns the path of its library. The project itself is removed; the build stays in
    target/generated."""
    destination = tempfile.mkdtemp(prefix=f"sparkds_{name}_")
    command = ["cargo", "generate", "--path", os.path.join(ROOT, "template"), "--name", name,
               "--silent", "-d", f"sdk=path:{ROOT}", "--destination", destination]
    for define in defines:
        command += ["-d", define]
    try:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        project = os.path.join(destination, name)
        if connector:
            shutil.copyfile(connector, os.path.join(project, "src", "connector", "mod.rs"))
        subprocess.run(
            ["cargo", "build", "--quiet"] + (["--release"] if release else []),
            cwd=project,
            check=True,
            env=dict(os.environ, CARGO_TARGET_DIR=GENERATED_TARGET),
        )
    finally:
        shutil.rmtree(destination, ignore_errors=True)
    profile = "release" if release else "debug"
    return library_file(os.path.join(GENERATED_TARGET, profile), name)
