"""Checks packages the way the bridge reads them, before it loads one:

    python3 -m spark_native_bridge.verify PACKAGE...

prints, for each package, one line per reason to refuse it (``PACKAGE: ENTRY: [rule] message``)
or ``PACKAGE: ok``, and exits with 1 when any package is refused, 0 otherwise. The checks are
those of ``cargo sparkds verify`` on the archive and the manifest (``_archive``), and the format
and architecture of every listed library; it needs neither pyspark nor a Spark session.
"""

import os
import sys
from typing import List, Optional

from . import _archive, _private


def reasons(package: str) -> List[str]:
    """Why the bridge would refuse `package`: an empty list when it would read it."""
    try:
        source = _private.open_regular(package)
    except OSError as error:
        return [f"(package): [archive] cannot be read ({_private.reason(error)}): give the path "
                f"of a .sparkpkg"]
    with source:
        length = os.fstat(source.fileno()).st_size
        try:
            checked = _archive.check_package(source, length)
        except _archive.NotZip as error:
            return [f"(package): [archive] not a zip archive ({error}): write the package with "
                    f"`cargo sparkds package`"]
        except (OSError, ValueError) as error:
            return [f"(package): [archive] cannot be read ({error}): write the package again"]
    return [str(finding) for finding in checked.findings]


def main(argv: Optional[List[str]] = None) -> int:
    packages = sys.argv[1:] if argv is None else argv
    if not packages or any(p in ("-h", "--help") for p in packages):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    refused = False
    for package in packages:
        found = reasons(package)
        for reason in found:
            print(f"{package}: {reason}")
        if found:
            refused = True
        else:
            print(f"{package}: ok")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
