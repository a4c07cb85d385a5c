#!/usr/bin/env python3
"""The crates' part of a release (.github/workflows/release.yml), run from the repository root:

  crates.py order                  the publishable crates, each after the crates it depends on
  crates.py check-tag TAG          TAG is v<the workspace's version>
  crates.py record-plugin LINES... writes the released plugin's jars (the lines jvm/maven.sh
                                   printed, one file per Spark line) into
                                   crates/cargo-sparkds/released-plugin.txt
  crates.py package                cargo package of them all, each built from its package against
                                   the others' (the verification), and their SHA-256 in
                                   target/package/SHA256SUMS (under CARGO_TARGET_DIR if set)
  crates.py publish [--dry-run] SUMS
                                   cargo publish --no-verify of each crate in order, once their
                                   packages, made again without building anything, are those
                                   whose SHA-256 SUMS (the output of `package`) lists (--dry-run:
                                   all but the publication)

The order and the publishable crates come from `cargo metadata`: a crate is publishable unless
its `publish` is false, and it depends on the others by path and version. tests/release runs the
commands that need no registry.

Why two commands: building a crate runs the build scripts and procedural macros of all its
dependencies. The release workflow runs `package` in a job that holds no token, and `publish` in
a job that holds the crates.io token and builds nothing (`--no-verify`): no code of a dependency
runs where the token can be read. tests/workflows runs `publish` with a stand-in for cargo and
checks that it only packages and publishes, with `--no-verify`, what `package` verified.
"""

import hashlib
import json
import os
import re
import subprocess
import sys

RECORD = "crates/cargo-sparkds/released-plugin.txt"


def fail(message: str) -> None:
    print(f"crates.py: {message}", file=sys.stderr)
    sys.exit(1)


def metadata() -> dict:
    output = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--no-deps", "--locked"],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return json.loads(output.stdout)


def publishable(packages: list) -> dict:
    """The workspace's packages that crates.io takes, by name."""
    return {p["name"]: p for p in packages if p.get("publish") != []}


def order(packages: list) -> list:
    """The publishable crates, each after every publishable crate it depends on (a cycle, or a
    dependency on a crate that is not published, is an error: crates.io could not resolve it)."""
    crates = publishable(packages)
    members = {p["name"] for p in packages}
    needs = {}
    for name, package in crates.items():
        needs[name] = set()
        for dependency in package["dependencies"]:
            # A dev-dependency without a version is dropped from the published manifest.
            if dependency["kind"] == "dev" and dependency.get("req") in (None, "*"):
                continue
            other = dependency["name"]
            if other in crates:
                needs[name].add(other)
            elif other in members and dependency.get("path"):
                fail(f"{name} depends on {other}, which is not published (publish = false)")
    ordered = []
    while needs:
        ready = sorted(name for name, deps in needs.items() if deps <= set(ordered))
        if not ready:
            fail(f"the crates {sorted(needs)} depend on each other in a cycle")
        ordered.extend(ready)
        for name in ready:
            del needs[name]
    return ordered


def workspace_version(packages: list) -> str:
    versions = {p["version"] for p in publishable(packages).values()}
    if len(versions) != 1:
        fail(f"the publishable crates have different versions {sorted(versions)}: give them all the workspace's")
    return versions.pop()


def check_tag(tag: str, packages: list) -> None:
    version = workspace_version(packages)
    if tag != f"v{version}":
        fail(f"the tag {tag} is not v{version}, the version of the crates: tag v{version}, or change the workspace's version in Cargo.toml")
    print(f"the tag {tag} releases version {version}")


def record_plugin(files: list, packages: list, record: str) -> None:
    """Replaces the jar lines of the record with those of `files`: exactly one per Spark line of
    jvm/spark-lines.txt, each of the workspace's version."""
    version = workspace_version(packages)
    with open("jvm/spark-lines.txt", encoding="utf-8") as f:
        lines = [l.split()[0] for l in f if l.strip() and not l.startswith("#")]
    jars = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            for text in f:
                text = text.strip()
                if not text:
                    continue
                match = re.fullmatch(r"(\S+) (\S+):(\S+):(\S+) ([0-9a-f]{64})", text)
                if not match:
                    fail(f"{path}: `{text}` is not `<line> <group>:<artifact>:<version> <sha256>` (jvm/maven.sh's output)")
                if match.group(4) != version:
                    fail(f"{path}: the jar's version is {match.group(4)}, and the crates' is {version}")
                if match.group(1) in jars:
                    fail(f"{path}: a second jar for Spark {match.group(1)}")
                jars[match.group(1)] = text
    if sorted(jars) != sorted(lines):
        fail(f"jars for the Spark lines {sorted(jars)}, and jvm/spark-lines.txt has {sorted(lines)}: record one jar for each")
    with open(record, encoding="utf-8") as f:
        comments = [l for l in f.read().splitlines() if l.startswith("#") or not l.strip()]
    with open(record, "w", encoding="utf-8") as f:
        f.write("\n".join(comments + [jars[line] for line in lines]) + "\n")
    print(f"{record}: {len(jars)} jars recorded")


def package_dir() -> str:
    """Where cargo package writes: target/package/, or under CARGO_TARGET_DIR."""
    return os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "package")


def package_command(crates: list, verify: bool) -> list:
    """cargo package of every crate together: cargo resolves the workspace crates that crates.io
    does not have yet from the packages it has just made. A package's bytes depend on its files
    alone (cargo fixes the order, times and modes of the entries), not on when it was made."""
    command = ["cargo", "package", "--locked", "--allow-dirty"]
    if not verify:
        command.append("--no-verify")
    for name in crates:
        command += ["-p", name]
    return command


def run(command: list) -> None:
    print("+ " + " ".join(command), flush=True)
    subprocess.run(command, check=True)


def package_sums(crates: list, version: str) -> list:
    """`<sha256>  <file>` of each crate's package, in publishing order."""
    lines = []
    for name in crates:
        path = os.path.join(package_dir(), f"{name}-{version}.crate")
        with open(path, "rb") as f:
            lines.append(f"{hashlib.sha256(f.read()).hexdigest()}  {name}-{version}.crate")
    return lines


def package(packages: list) -> None:
    crates = order(packages)
    run(package_command(crates, verify=True))
    sums = package_sums(crates, workspace_version(packages))
    with open(os.path.join(package_dir(), "SHA256SUMS"), "w", encoding="utf-8") as f:
        f.write("\n".join(sums) + "\n")
    print("\n".join(sums))


def publish(sums_path: str, dry_run: bool, packages: list) -> None:
    crates = order(packages)
    # The one change a release makes to the tree: the record of the released plugin.
    dirty = subprocess.run(
        ["git", "status", "--porcelain"], check=True, stdout=subprocess.PIPE, text=True
    ).stdout.split("\n")
    others = [l for l in dirty if l.strip() and not l.endswith(RECORD)]
    if others:
        fail("the tree has changes besides " + RECORD + ": " + "; ".join(others))
    with open(sums_path, encoding="utf-8") as f:
        verified = [l for l in f.read().splitlines() if l.strip()]
    run(package_command(crates, verify=False))
    made = package_sums(crates, workspace_version(packages))
    if made != verified:
        differ = sorted(set(made) ^ set(verified))
        fail(f"the packages made here are not those that were verified ({sums_path}): {'; '.join(differ)}")
    print(f"the packages made here are those that were verified ({sums_path})")
    for name in crates:
        command = ["cargo", "publish", "--locked", "--allow-dirty", "--no-verify", "-p", name]
        if dry_run:
            print("would run: " + " ".join(command))
        else:
            run(command)


def main(args: list) -> None:
    if not args:
        fail("a command: order, check-tag TAG, record-plugin FILE..., package, publish [--dry-run] SUMS")
    packages = metadata()["packages"]
    command, rest = args[0], args[1:]
    if command == "order" and not rest:
        print("\n".join(order(packages)))
    elif command == "check-tag" and len(rest) == 1:
        check_tag(rest[0], packages)
    elif command == "record-plugin" and rest:
        record = os.environ.get("SPARKDS_PLUGIN_RECORD", RECORD)
        record_plugin(rest, packages, record)
    elif command == "package" and not rest:
        package(packages)
    elif command == "publish" and len(rest) == 1:
        publish(rest[0], False, packages)
    elif command == "publish" and len(rest) == 2 and rest[0] == "--dry-run":
        publish(rest[1], True, packages)
    else:
        fail(f"unknown command `{' '.join(args)}`: order, check-tag TAG, record-plugin FILE..., package, publish [--dry-run] SUMS")


if __name__ == "__main__":
    main(sys.argv[1:])
