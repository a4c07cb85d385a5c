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
# Where projects are generated from (template and SDK): the test runner's copy of the repository
# for the run, which every group's projects share (tests/support/checkout.rs), else this one.
SOURCE = os.environ.get("SPARKDS_SUITE_CHECKOUT") or ROOT


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
    returns the path of its library, in target/generated.

    The project is built in target/generated/projects/<name>, where only the files that differ
    from the last generation are written: an unchanged project is not rebuilt, so its library
    is not replaced under a Spark session of another suite that loaded it."""
    destination = tempfile.mkdtemp(prefix=f"sparkds_{name}_")
    command = ["cargo", "generate", "--path", os.path.join(SOURCE, "template"), "--name", name,
               "--silent", "-d", f"sdk=path:{SOURCE}", "--destination", destination]
    for define in defines:
        command += ["-d", define]
    project = os.path.join(GENERATED_TARGET, "projects", name)
    try:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        generated = os.path.join(destination, name)
        if connector:
            shutil.copyfile(connector, os.path.join(generated, "src", "connector", "mod.rs"))
        mirror(generated, project)
    finally:
        shutil.rmtree(destination, ignore_errors=True)
    subprocess.run(
        ["cargo", "build", "--quiet"] + (["--release"] if release else []),
        cwd=project,
        check=True,
        env=dict(os.environ, CARGO_TARGET_DIR=GENERATED_TARGET),
    )
    profile = "release" if release else "debug"
    return library_file(os.path.join(GENERATED_TARGET, profile), name)


def mirror(source: str, destination: str) -> None:
    """Makes `destination` hold the files of `source`, writing (by rename) only those whose
    bytes differ and removing those `source` lacks; its Cargo.lock stays."""
    wanted = set()
    for directory, _, files in os.walk(source):
        for file in files:
            relative = os.path.relpath(os.path.join(directory, file), source)
            wanted.add(relative)
            with open(os.path.join(source, relative), "rb") as f:
                content = f.read()
            target = os.path.join(destination, relative)
            try:
                with open(target, "rb") as f:
                    if f.read() == content:
                        continue
            except OSError:
                pass
            os.makedirs(os.path.dirname(target), exist_ok=True)
            partial = f"{target}.{os.getpid()}.partial"
            with open(partial, "wb") as f:
                f.write(content)
            os.replace(partial, target)
    for directory, _, files in os.walk(destination):
        for file in files:
            relative = os.path.relpath(os.path.join(directory, file), destination)
            if relative not in wanted and relative != "Cargo.lock":
                os.remove(os.path.join(destination, relative))
